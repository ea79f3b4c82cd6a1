#!/usr/bin/env python3
"""Capture the facts behind the embedded table of packages built against one torch (``build_companions.py``).

    python scripts/capture_companions.py --repos DIR [-o scripts/reference/companions.json]

Two kinds of source, each recorded with where it was read:

* the default index (as pip finds it: ``PIP_INDEX_URL``, pip's configuration, else pip's default): for each
  package, its newest releases' wheels, their platforms and Requires-Python, and the ``Requires-Dist`` lines that
  name the torch family (from the PEP 658 metadata file, else the wheel's METADATA through HTTP range requests);
* the packages' own repositories, cloned into DIR (``DIR/<owner>+<name>`` or ``DIR/<name>``; ``git clone
  https://github.com/<owner>/<name>``), read at their release tags with ``git show``: the torch, CUDA and ROCm
  versions each release's wheels were built for, and where they were uploaded.

Run it again to refresh the table; nothing here runs at install time.
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

from torch_install.index.client import Fetcher  # noqa: E402
from torch_install.index.default_index import default_index_url  # noqa: E402
from torch_install.index.pages import parse_page  # noqa: E402
from torch_install.index.wheel_metadata import MAX_METADATA, _RangeFile, requires_dist  # noqa: E402

DEFAULT_INDEX_PACKAGES = ("xformers", "vllm", "torchao", "fbgemm-gpu", "torchrec", "flash-attn", "torch-scatter",
                          "torch-sparse", "torch-cluster", "pyg-lib", "torch-geometric")
RELEASES_READ = 12  # newest final releases per package
FAMILY = re.compile(r"^(torch|torchvision|torchaudio|fbgemm-gpu|fbgemm_gpu)\b", re.IGNORECASE)
REPOS = {"xformers": "facebookresearch/xformers", "flash-attn": "Dao-AILab/flash-attention", "torchao": "pytorch/ao",
         "fbgemm-gpu": "pytorch/FBGEMM", "pyg-lib": "pyg-team/pyg-lib", "torch-scatter": "rusty1s/pytorch_scatter",
         "torch-sparse": "rusty1s/pytorch_sparse", "torch-cluster": "rusty1s/pytorch_cluster"}


def metadata(fetcher: Fetcher, url: str) -> str | None:
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


def default_index_facts(fetcher: Fetcher, root: str) -> dict[str, Any]:
    from packaging.utils import parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    out: dict[str, Any] = {}
    for project in DEFAULT_INDEX_PACKAGES:
        url = f"{root.rstrip('/')}/{project}/"
        try:
            page = fetcher.get(url)
        except Exception as exc:  # noqa: BLE001
            out[project] = {"page": f"{project}/", "error": str(exc).replace(root.rstrip("/"), "<default index>")}
            continue
        files = parse_page(page.body, page.content_type, url)
        sdists = sorted({m[1] for f in parse_sdists(page.body)
                         if (m := re.match(rf"{project.replace('-', '[-_]')}-(.+)\.tar\.gz$", f, re.I))},
                        key=lambda v: _key(v))
        by_version: dict[str, list[Any]] = {}
        for f in files:
            try:
                _, version, _, tags = parse_wheel_filename(f.filename)
            except Exception:  # noqa: BLE001
                continue
            if version.is_prerelease or version.is_devrelease:
                continue
            by_version.setdefault(str(version), []).append((f, sorted(str(t) for t in tags)))
        releases = []
        for version in sorted(by_version, key=Version, reverse=True)[:RELEASES_READ]:
            wheels = by_version[version]
            platforms = sorted({t.rsplit("-", 1)[1] for _, tags in wheels for t in tags})
            pythons = sorted({t.split("-")[0] for _, tags in wheels for t in tags})
            text = metadata(fetcher, wheels[0][0].url)
            requires = [r for r in requires_dist(text)] if text else None
            releases.append({"version": version, "platforms": platforms, "pythons": pythons,
                             "requires_python": wheels[0][0].requires_python, "wheel": wheels[0][0].filename,
                             "requires": [r for r in requires if FAMILY.match(r)] if requires is not None else None})
        try:
            final_sdists = [v for v in sdists if not Version(v).is_prerelease]
        except InvalidVersion:
            final_sdists = sdists
        out[project] = {"page": f"{project}/", "releases": releases, "sdists": final_sdists[-RELEASES_READ:]}
        print(f"{project}: {len(releases)} wheel releases, {len(final_sdists)} sdists", file=sys.stderr)
    return out


def parse_sdists(body: bytes) -> list[str]:
    """The sdist file names a page lists (the page scanner keeps wheels only)."""
    return re.findall(r'"filename":\s*"([^"]+\.tar\.gz)"', body.decode("utf-8", "replace")) or \
        re.findall(r">([^<>]+\.tar\.gz)</a>", body.decode("utf-8", "replace"))


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

    def source(self) -> dict[str, str]:
        return {"repo": self.name, "commit": self.commit,
                "date": self.git("log", "-1", "--format=%cs", "HEAD").strip()}


def _list(text: str, name: str) -> list[str]:
    """A YAML or Python flow list's items, quoted or not: ``os: [ubuntu-22.04]``, ``CU = ['126', '128']``."""
    found = re.search(rf"(?<![A-Za-z_-]){name}\s*[:=]\s*\[([^\]]*)\]", text)
    if not found:
        return []
    return [item.strip().strip("'\"") for item in found[1].split(",") if item.strip()]


def xformers(repo: Repo) -> dict[str, Any]:
    releases = {}
    for tag in repo.tags(r"v0\.0\.[0-9]+(\.post[0-9]+)?"):
        wheels = repo.show(tag, ".github/workflows/wheels.yml")
        action = repo.show(tag, ".github/actions/setup-build-cuda/action.yml")
        if not wheels or "upload_pt" not in wheels:
            continue
        torch = re.findall(r"for torch_version in \[([^\]]*)\]", wheels)
        suffixes = re.search(r"upload_pt:.*?suffix:\s*((?:\s*- [^\n]+\n)+)", wheels, re.S)
        default = re.search(r'TORCH_CUDA_DEFAULT = "([0-9]+)"', action or "")
        releases[tag[1:]] = {
            "torch": re.findall(r"['\"]([0-9.]+)['\"]", torch[0]) if torch else [],
            "uploaded": re.findall(r"- ([a-z0-9.]+)", suffixes[1]) if suffixes else [],
            "unlabelled": f"cu{default[1]}" if default else None,
            "os": [o for o in ("ubuntu", "windows") if re.search(rf"'[^']*{o}[^']*'", wheels.split("for torch")[0])]}
    return {**repo.source(), "files": [".github/workflows/wheels.yml", ".github/actions/setup-build-cuda/action.yml"],
            "releases": releases}


def flash_attn(repo: Repo) -> dict[str, Any]:
    releases = {}
    for tag in repo.tags(r"v2\.[0-9]+\.[0-9]+(\.post[0-9]+)?"):
        text = repo.show(tag, ".github/workflows/publish.yml")
        if not text or "matrix:" not in text:
            continue
        matrix = text.split("matrix:", 1)[1].split("steps:", 1)[0].split("uses:", 1)[0]
        excludes = []
        if "exclude:" in matrix:
            for item in re.split(r"\n\s*- ", matrix.split("exclude:", 1)[1])[1:]:
                pairs = dict(re.findall(r"([a-z0-9_-]+):\s*['\"]?([A-Za-z0-9._-]+)['\"]?", item))
                excludes.append(pairs)
        releases[tag[1:]] = {key: _list(matrix, key) for key in ("os", "python-version", "torch-version",
                                                                  "cuda-version", "cxx11_abi")}
        releases[tag[1:]]["exclude"] = excludes
    newest = repo.tags(r"v2\.[0-9]+\.[0-9]+(\.post[0-9]+)?")[-1]
    setup = repo.show(newest, "setup.py") or ""
    base = re.search(r'BASE_WHEEL_URL = \(\s*"([^"]+)"', setup)
    names = re.findall(r'wheel_filename = f"([^"]+)"', setup)
    return {**repo.source(), "files": [".github/workflows/publish.yml", "setup.py"], "wheel_url": base[1] if base else
            None, "wheel_name": next((n for n in names if "+cu" in n), None), "releases": releases}


def torchao(repo: Repo) -> dict[str, Any]:
    pairs: dict[str, list[str]] = {}
    minimum: dict[str, str] = {}
    for tag in repo.tags(r"v0\.[0-9]+\.[0-9]+"):
        text = repo.show(tag, "torchao/__init__.py") or ""
        for ao, torch in re.findall(r'\(_parse_version\("([0-9.]+)"\),\s*_parse_version\("([0-9.]+)"\)\)', text):
            if "dev" not in ao and "dev" not in torch:
                pairs.setdefault(ao, [])
                if torch not in pairs[ao]:
                    pairs[ao].append(torch)
        found = re.search(r'min_torch_version = _parse_version\("([0-9.]+)"\)', text)
        if found:
            minimum[tag[1:]] = found[1]
    return {**repo.source(), "files": ["torchao/__init__.py"], "built_against": pairs, "min_torch": minimum}


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
    for tag in repo.tags(r"v1\.[0-9]+\.[0-9]+"):
        workflow = repo.show(tag, ".github/workflows/fbgemm_gpu_release_cuda.yml") or ""
        options = re.search(r"cuda-version-publish:.*?options:\s*\[([^\]]*)\]", workflow, re.S)
        publish[tag[1:]] = {"cuda": re.findall(r'"([0-9.]+)"', options[1]) if options else [],
                            "date": repo.git("log", "-1", "--format=%cs", tag).strip()}
    return {**repo.source(), "files": ["fbgemm_gpu/docs/src/general/Releases.rst",
                                       ".github/workflows/fbgemm_gpu_release_cuda.yml"],
            "releases": table, "tags": publish}


def readme_tables(repo: Repo) -> dict[str, Any]:
    """The "PyTorch X.Y" tables of a PyG repository's README: per torch minor and OS, the variants with wheels."""
    text = repo.show("HEAD", "README.md") or ""
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
            if all(re.fullmatch(r"cpu|cu[0-9]+|rocm[0-9.]+", v) for v in variants):
                tables.setdefault(minor, {re.sub(r"[`*]", "", row[0]).strip().lower():
                                          [v for v, cell in zip(variants, row[1:], strict=False) if "✅" in cell]
                                          for row in rows[2:]})
        rows = []
        if heading := re.match(r"#+ PyTorch ([0-9]+\.[0-9]+)", line):
            minor = heading[1]
    install = re.search(r"(https://data\.pyg\.org/whl/torch-\$\{TORCH\}\+\$\{CUDA\}\.html|"
                        r"https://data\.pyg\.org/whl/torch-[0-9.]+\+\$\{CUDA\}\.html)", text)
    return {**repo.source(), "files": ["README.md"], "find_links": install[1] if install else None,
            "tables": tables}


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
    upstream = {"xformers": xformers(Repo(args.repos, REPOS["xformers"])),
                "flash-attn": flash_attn(Repo(args.repos, REPOS["flash-attn"])),
                "torchao": torchao(Repo(args.repos, REPOS["torchao"])),
                "fbgemm-gpu": fbgemm(Repo(args.repos, REPOS["fbgemm-gpu"]))}
    for name in ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster"):
        upstream[name] = readme_tables(Repo(args.repos, REPOS[name]))
    document = {"captured": time.strftime("%Y-%m-%d", time.gmtime()), "index": where,
                "default_index": default_index_facts(Fetcher(), root), "upstream": upstream}
    args.output.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
