#!/usr/bin/env python3
"""Capture the facts behind the embedded table of packages built against one torch (``build_companions.py``).

    python scripts/capture_companions.py --repos DIR [-o scripts/reference/companions.json]

Two kinds of source, each recorded with where it was read:

* the default index (as pip finds it: ``PIP_INDEX_URL``, pip's configuration, else pip's default), from its
  PEP 691 JSON pages: for each package, **every** final release (post-releases included; pre-releases and
  development releases are left out, and the table says so), its files, whether it is yanked (PEP 592: every file
  of it yanked) and why, its Requires-Python, and the ``Requires-Dist`` lines of one of its wheels that name the
  torch family or fbgemm-gpu (from the PEP 658 metadata file, else the wheel's METADATA through HTTP range
  requests). A wheel read before (the previous output) is not read again.
* the packages' own repositories, cloned into DIR (``DIR/<owner>+<name>`` or ``DIR/<name>``; ``git clone
  https://github.com/<owner>/<name>``), read at their release tags and in their history with ``git show``: the
  torch, CUDA and ROCm versions each release's wheels were built for, and where they were uploaded.

Run it again to refresh the table; nothing here runs at install time, and nothing of a repository is executed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from capture_release_builds import literals  # noqa: E402

from torch_install.index.client import Fetcher  # noqa: E402
from torch_install.index.default_index import default_index_url  # noqa: E402
from torch_install.index.wheel_metadata import MAX_METADATA, _RangeFile, requires_dist  # noqa: E402

DEFAULT_INDEX_PACKAGES = ("xformers", "vllm", "torchao", "fbgemm-gpu", "torchrec", "flash-attn", "torch-scatter",
                          "torch-sparse", "torch-cluster", "pyg-lib")
FAMILY = re.compile(r"^(torch|torchvision|torchaudio|fbgemm-gpu|fbgemm_gpu)\b", re.IGNORECASE)
REPOS = {"xformers": "facebookresearch/xformers", "flash-attn": "Dao-AILab/flash-attention", "torchao": "pytorch/ao",
         "fbgemm-gpu": "pytorch/FBGEMM", "pyg-lib": "pyg-team/pyg-lib", "torch-scatter": "rusty1s/pytorch_scatter",
         "torch-sparse": "rusty1s/pytorch_sparse", "torch-cluster": "rusty1s/pytorch_cluster",
         "test-infra": "pytorch/test-infra"}
JSON_PAGE = "application/vnd.pypi.simple.v1+json"
# The wheel whose METADATA is read, best first: the Linux x86_64 build (whose pins carry no platform marker)
PREFERRED_WHEEL = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64",
                   "linux_x86_64", "any", "")


def metadata(fetcher: Fetcher, url: str) -> str | None:
    """A wheel's METADATA: its PEP 658 file, else the member read through range requests; None when unreadable."""
    try:
        return fetcher.get(url + ".metadata").body.decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - no PEP 658 file: read the wheel itself
        pass
    try:
        with zipfile.ZipFile(_RangeFile(fetcher, url)) as wheel:
            names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(names) == 1 and wheel.getinfo(names[0]).file_size <= MAX_METADATA:
                return wheel.read(names[0]).decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - recorded as unknown
        return None
    return None


def _version_of(project: str, filename: str) -> str | None:
    """The normalized version a wheel or sdist file name carries (None: not this project's file)."""
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        canonicalize_name,
        parse_sdist_filename,
        parse_wheel_filename,
    )

    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return str(version) if canonicalize_name(name) == canonicalize_name(project) else None


def _wheel_rank(filename: str) -> int:
    return next((i for i, tag in enumerate(PREFERRED_WHEEL) if filename.endswith(f"{tag}.whl")), len(PREFERRED_WHEEL))


def default_index_facts(fetcher: Fetcher, root: str, previous: dict[str, Any]) -> dict[str, Any]:
    from packaging.version import Version

    out: dict[str, Any] = {}
    for project in DEFAULT_INDEX_PACKAGES:
        url = f"{root.rstrip('/')}/{project}/"
        try:
            page = fetcher.get(url, accept=JSON_PAGE)
        except Exception as exc:  # noqa: BLE001 - recorded: the package has no page there
            out[project] = {"page": f"{project}/", "error": str(exc).replace(root.rstrip("/"), "<default index>"),
                            "releases": []}
            print(f"{project}: {out[project]['error']}", file=sys.stderr)
            continue
        if not page.content_type.startswith(JSON_PAGE):
            raise SystemExit(f"{url}: not a PEP 691 JSON page ({page.content_type})")
        files: dict[str, list[dict[str, Any]]] = {}
        for entry in json.loads(bytes(page.body))["files"]:
            version = _version_of(project, entry["filename"])
            if version is not None and not (Version(version).is_prerelease or Version(version).is_devrelease):
                files.setdefault(version, []).append(entry)
        known = {r["version"]: r for r in previous.get(project, {}).get("releases", [])}
        releases = []
        for version in sorted(files, key=Version, reverse=True):
            entries = sorted(files[version], key=lambda e: e["filename"])
            wheels = sorted((e for e in entries if e["filename"].endswith(".whl")),
                            key=lambda e: (_wheel_rank(e["filename"]), e["filename"]))
            yanked = [e.get("yanked") for e in entries]
            release: dict[str, Any] = {
                "version": version, "files": [e["filename"] for e in entries],
                "yanked": all(yanked), "yanked_reason": next((y for y in yanked if isinstance(y, str)), None),
                "requires_python": next((e.get("requires-python") for e in wheels or entries
                                         if e.get("requires-python")), None),
                "metadata": wheels[0]["filename"] if wheels else None, "requires": None}
            if wheels:
                before = known.get(version)
                read_before = before and release["metadata"] in (before.get("metadata"), before.get("wheel"))
                if read_before and before.get("requires") is not None:
                    release["requires"] = before["requires"]
                else:
                    text = metadata(fetcher, wheels[0]["url"])
                    release["requires"] = [r for r in requires_dist(text) if FAMILY.match(r)] if text else None
                    time.sleep(0.2)  # one package's wheels, read in turn
            releases.append(release)
        out[project] = {"page": f"{project}/", "releases": releases}
        print(f"{project}: {len(releases)} releases", file=sys.stderr)
    return out


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"[0-9]+", version))


# ---- repositories --------------------------------------------------------------------------------------------

class Repo:
    def __init__(self, root: Path, name: str) -> None:
        owner, project = name.split("/")
        for candidate in (root / f"{owner}+{project}" / "repo", root / f"{owner}+{project}", root / project):
            if (candidate / ".git").exists() or (candidate / "HEAD").exists():
                self.path = candidate
                break
        else:
            raise SystemExit(f"{name}: no clone under {root} (git clone https://github.com/{name})")
        self.name = name
        self.commit = self.git("rev-parse", "HEAD").strip()

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True,
                              check=True).stdout

    def show(self, ref: str, path: str) -> str | None:
        done = subprocess.run(["git", "-C", str(self.path), "show", f"{ref}:{path}"], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    def tags(self, pattern: str) -> list[str]:
        return sorted((t for t in self.git("tag").split() if re.fullmatch(pattern, t)), key=_key)

    def date(self, ref: str) -> str:
        return self.git("log", "-1", "--format=%cs", ref).strip()

    def source(self) -> dict[str, str]:
        return {"repo": self.name, "commit": self.commit, "date": self.date("HEAD")}


def _uncommented(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _list(text: str, name: str) -> list[str]:
    """A YAML or Python flow list's items, quoted or not: ``os: [ubuntu-22.04]``, ``CU = ['126', '128']``."""
    found = re.search(rf"(?<![A-Za-z_-]){name}\s*[:=]\s*\[([^\]]*)\]", text)
    if not found:
        return []
    return [item.strip().strip("'\"") for item in found[1].split(",") if item.strip()]


def xformers(repo: Repo) -> dict[str, Any]:
    """Per release tag, from ``.github/workflows/wheels.yml``: the torch its wheels were built with, the variants
    uploaded to the PyTorch index (``s3://pytorch/whl/<variant>/``, or the ``upload_pt`` job's ``suffix`` matrix)
    and the build uploaded to the default index (the ``upload_pip`` job's ``filter``)."""
    releases = {}
    for tag in repo.tags(r"v0\.0\.[0-9]+(\.post[0-9]+)?"):
        wheels = _uncommented(repo.show(tag, ".github/workflows/wheels.yml") or "")
        torch = [*(v for group in re.findall(r"for torch_version in \[([^\]]*)\]", wheels)
                   for v in re.findall(r"['\"]([0-9.]+)['\"]", group)),
                 *re.findall(r"torch_version:\s*['\"]([0-9.]+)['\"]", wheels)]
        uploaded = re.findall(r"s3_path:\s*s3://pytorch/whl/([a-z0-9.]+)/", wheels)
        if "${{ matrix.suffix }}" in wheels:
            suffixes = re.search(r"upload_pt:.*?suffix:\s*((?:\s*- [^\n]+\n)+)", wheels, re.S)
            uploaded += re.findall(r"- ([a-z0-9.]+)", suffixes[1]) if suffixes else []
        pip = re.search(r"upload_pip:.*?filter:\s*\"\*torch([0-9.]+)\+([a-z0-9.]+)\*\"", wheels, re.S)
        releases[tag[1:]] = {"torch": sorted(set(torch), key=_key), "uploaded": list(dict.fromkeys(uploaded)),
                             "pip_build": pip[2] if pip else None, "pip_torch": pip[1] if pip else None,
                             "date": repo.date(tag)}
    return {**repo.source(), "files": [".github/workflows/wheels.yml"], "releases": releases}


def _publish_matrix(text: str) -> dict[str, Any] | None:
    """The build matrix of flash-attn's ``publish.yml``: each key's list and the ``exclude`` entries."""
    if "matrix:" not in text:
        return None
    matrix = text.split("matrix:", 1)[1].split("steps:", 1)[0].split("uses:", 1)[0]
    out: dict[str, Any] = {key: _list(matrix, key) for key in ("os", "python-version", "torch-version",
                                                               "cuda-version", "cxx11_abi")}
    excludes = []
    if "exclude:" in matrix:
        for item in re.split(r"\n\s*- ", _uncommented(matrix.split("exclude:", 1)[1]))[1:]:
            excludes.append(dict(re.findall(r"([a-z0-9_-]+):\s*['\"]?([A-Za-z0-9._-]+)['\"]?", item)))
    out["exclude"] = [e for e in excludes if e]
    return out if out["torch-version"] else None


def _wheel_naming(setup: str) -> dict[str, Any]:
    """How a release's setup.py names the prebuilt wheel it downloads: the CUDA tag as the major only ("12") or
    major and minor ("122"), and the CUDA each of torch's CUDA majors is mapped to (``parse("12.3")``)."""
    body = setup.split("def get_wheel_url", 1)[-1].split("\ndef ", 1)[0]
    cuda_map = {m[0]: f"{m[0]}.{m[1]}" for m in re.findall(r'parse\("([0-9]+)\.([0-9]+)"\)', body)}
    major_only = re.search(r'cuda_version = f"\{torch_cuda_version\.major\}"', body) is not None
    return {"cuda_tag": "major" if major_only else "major-minor", "cuda_map": cuda_map}


def flash_attn(repo: Repo) -> dict[str, Any]:
    releases = {}
    for tag in repo.tags(r"v[12]\.[0-9]+\.[0-9]+(\.post[0-9]+)?"):
        matrix = _publish_matrix(repo.show(tag, ".github/workflows/publish.yml") or "")
        if matrix is None:
            continue
        releases[tag[1:]] = {**matrix, **_wheel_naming(repo.show(tag, "setup.py") or ""), "date": repo.date(tag)}
    newest = repo.tags(r"v2\.[0-9]+\.[0-9]+(\.post[0-9]+)?")[-1]
    setup = repo.show(newest, "setup.py") or ""
    base = re.search(r'BASE_WHEEL_URL = \(\s*"([^"]+)"', setup)
    names = re.findall(r'wheel_filename = f"([^"]+)"', setup)
    return {**repo.source(), "files": [".github/workflows/publish.yml", "setup.py"], "wheel_url": base[1] if base else
            None, "wheel_name": next((n for n in names if "+cu" in n), None), "releases": releases}


def torchao(repo: Repo, test_infra: Repo) -> dict[str, Any]:
    """Per release tag: the torch its C++ extensions were built against (``torchao/__init__.py``: its
    compatibility pairs, or its ``min_torch_version``), and the test-infra branch its Linux build workflow uses,
    with that branch's stable torch (``CURRENT_STABLE_VERSION``) and the CUDA and ROCm versions its "test"
    channel (the one a release candidate tag builds with) builds."""
    pairs: dict[str, list[str]] = {}
    minimum: dict[str, str] = {}
    builds: dict[str, Any] = {}
    for tag in repo.tags(r"v0\.[0-9]+(\.[0-9]+)?"):
        text = repo.show(tag, "torchao/__init__.py") or ""
        for ao, torch in re.findall(r'\(_parse_version\("([0-9.]+)"\),\s*_parse_version\("([0-9.]+)"\)\)', text):
            if "dev" not in ao and "dev" not in torch:
                pairs.setdefault(ao, [])
                if torch not in pairs[ao]:
                    pairs[ao].append(torch)
        found = re.search(r'min_torch_version = _parse_version\("([0-9.]+)"\)', text)
        if found:
            minimum[tag[1:]] = found[1]
        workflow = repo.show(tag, ".github/workflows/build_wheels_linux.yml") or ""
        ref = re.search(r"generate_binary_build_matrix\.yml@([A-Za-z0-9._/-]+)", workflow)
        if ref and ref[1] != "main":
            script = test_infra.show(ref[1], "tools/scripts/generate_binary_build_matrix.py") or ""
            stable = re.search(r'CURRENT_STABLE_VERSION = "([0-9.]+)"', script)
            found = literals(script) if script else {}
            cuda, rocm = found.get("CUDA_ARCHES_DICT", {}), found.get("ROCM_ARCHES_DICT", {})
            builds[tag[1:]] = {"test_infra_ref": ref[1], "stable_torch": stable[1] if stable else None,
                               "cuda": cuda.get("test", []) if isinstance(cuda, dict) else [],
                               "rocm": rocm.get("test", []) if isinstance(rocm, dict) else []}
    return {**repo.source(), "files": ["torchao/__init__.py", ".github/workflows/build_wheels_linux.yml"],
            "test_infra": test_infra.source(), "built_against": pairs, "min_torch": minimum, "builds": builds}


def fbgemm(repo: Repo) -> dict[str, Any]:
    text = repo.show("HEAD", "fbgemm_gpu/docs/src/general/Releases.rst") or ""
    table: dict[str, Any] = {}
    rows: list[str] = []
    for line in text.splitlines():  # an RST grid table: a row's cells run over the lines between "+" rules
        if line.startswith("|"):
            rows.append(line)
            continue
        if line.startswith("+") and rows:
            columns = zip(*[[x.strip() for x in r.strip().strip("|").split("|")] for r in rows], strict=False)
            cells = [" ".join(x for x in column if x) for column in columns]
            if cells and re.fullmatch(r"[0-9.]+", cells[0]):
                table[cells[0]] = {"torch": cells[1], "python": re.findall(r"[0-9]+\.[0-9]+", cells[2]),
                                   "cuda": re.findall(r"[0-9]+\.[0-9]+", cells[3]),
                                   "rocm": re.findall(r"[0-9]+(?:\.[0-9]+)+", cells[5])}
        rows = []
    publish = {}
    for tag in repo.tags(r"v[01]\.[0-9]+\.[0-9]+"):
        workflow = repo.show(tag, ".github/workflows/fbgemm_gpu_release_cuda.yml") or ""
        options = re.search(r"cuda-version-publish:.*?options:\s*\[([^\]]*)\]", workflow, re.S)
        publish[tag[1:]] = {"cuda": re.findall(r'"([0-9.]+)"', options[1]) if options else [],
                            "date": repo.date(tag)}
    return {**repo.source(), "files": ["fbgemm_gpu/docs/src/general/Releases.rst",
                                       ".github/workflows/fbgemm_gpu_release_cuda.yml"],
            "releases": table, "tags": publish}


def _readme_tables(text: str) -> dict[str, dict[str, list[str]]]:
    """The "PyTorch X.Y" tables of a PyG README: per torch minor and OS, the variants with wheels."""
    tables: dict[str, dict[str, list[str]]] = {}
    minor: str | None = None
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:  # a "PyTorch X.Y" heading or header cell, then a markdown table
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            if len(rows) == 1 and (cell := re.match(r"PyTorch ([0-9]+\.[0-9]+)", re.sub(r"[`*]", "", rows[0][0]))):
                minor = cell[1]
            continue
        if rows and minor:
            variants = [re.sub(r"[`*]", "", c) for c in rows[0][1:]]
            if variants and all(re.fullmatch(r"cpu|cu[0-9]+|rocm[0-9.]+", v) for v in variants):
                tables.setdefault(minor, {re.sub(r"[`*]", "", row[0]).strip().lower():
                                          [v for v, cell in zip(variants, row[1:], strict=False) if "✅" in cell]
                                          for row in rows[2:]})
        rows = []
        if heading := re.match(r"#+ PyTorch ([0-9]+\.[0-9]+)", line):
            minor = heading[1]
    return tables


def _older_binaries(text: str) -> list[str]:
    """The torch releases a README's "Binaries of older versions are also provided for …" sentence names."""
    found = re.search(r"Binaries of older versions are also provided for(.*?)(?:\n\n|$)", text, re.S)
    return sorted(set(re.findall(r"PyTorch ([0-9]+\.[0-9]+\.[0-9]+)", found[1])), key=_key) if found else []


def readme_tables(repo: Repo) -> dict[str, Any]:
    """The README's tables at every commit that changed it, newest first: per torch minor, the newest table
    that lists it (so a minor the README has since dropped keeps the table it last had), with that commit."""
    tables: dict[str, Any] = {}
    for line in repo.git("log", "--format=%H %cs", "--", "README.md").splitlines():
        commit, date = line.split()
        for minor, per_os in _readme_tables(repo.show(commit, "README.md") or "").items():
            tables.setdefault(minor, {"os": per_os, "commit": commit[:10], "date": date})
    text = repo.show("HEAD", "README.md") or ""
    install = re.search(r"(https://data\.pyg\.org/whl/torch-\$\{TORCH\}\+\$\{CUDA\}\.html|"
                        r"https://data\.pyg\.org/whl/torch-[0-9.]+\+\$\{CUDA\}\.html)", text)
    return {**repo.source(), "files": ["README.md"], "find_links": install[1] if install else None,
            "tables": tables, "older_binaries": _older_binaries(text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="the directory holding the clones")
    parser.add_argument("-o", "--output", type=Path, default=HERE / "reference" / "companions.json")
    args = parser.parse_args(argv)
    found = default_index_url()
    if found is None:
        print("no default index configured and pip's own default unknown (is pip installed?)", file=sys.stderr)
        return 2
    root, where = found
    previous = json.loads(args.output.read_text(encoding="utf-8")).get("default_index", {}) \
        if args.output.exists() else {}
    test_infra = Repo(args.repos, REPOS["test-infra"])
    upstream = {"xformers": xformers(Repo(args.repos, REPOS["xformers"])),
                "flash-attn": flash_attn(Repo(args.repos, REPOS["flash-attn"])),
                "torchao": torchao(Repo(args.repos, REPOS["torchao"]), test_infra),
                "fbgemm-gpu": fbgemm(Repo(args.repos, REPOS["fbgemm-gpu"]))}
    for name in ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster"):
        upstream[name] = readme_tables(Repo(args.repos, REPOS[name]))
    document = {"captured": time.strftime("%Y-%m-%d", time.gmtime()), "index": where,
                "default_index": default_index_facts(Fetcher(), root, previous), "upstream": upstream}
    args.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
