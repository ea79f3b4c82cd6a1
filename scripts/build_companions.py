#!/usr/bin/env python3
"""Build the embedded table of packages built against one torch from the captured facts.

    python scripts/build_companions.py [REFERENCE] [-o OUT]

REFERENCE defaults to scripts/reference/companions.json, OUT to src/torch_install/resolver/data/companions.json;
the names of its packages go beside it, in ``companion-names.json`` (a plan whose other packages are none of them
reads only that).

The captured file (``capture_companions.py``) holds what the default index and each package's repository say,
with commits; the embedded table keeps, per package, where its matching build comes from and, for **every** final
release on the default index: the torch it declares (Requires-Dist; absent: not known, as for a release with no
wheel to read), the torch its compiled parts were built for where no requirement declares it (``built_for``), the
variants it has builds for on the PyTorch index, its platforms and Python tags (from its files), whether it is
yanked, and what each fact rests on (``labels``: per package, a release overriding them). Its schema is
``companions.schema.json`` beside it; docs/companions.md explains each kind and label. The table is written one
release to a line: small to ship and to read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_REFERENCE = HERE / "reference" / "companions.json"
DEFAULT_OUT = HERE.parent / "src/torch_install/resolver/data/companions.json"
SCHEMA = 2

OS_OF_PLATFORM = {"linux": ("linux_x86_64", "linux_aarch64"), "windows": ("windows_x86_64",),
                  "macos": ("macos_arm64", "macos_x86_64")}
# What a source build of each package needs (its README's "Requirements"), for the builds-from-source warning.
SOURCE_BUILDS = {
    "flash-attn": "the CUDA toolkit 12.0 or newer (nvcc, matching torch's CUDA major), ninja and packaging, torch "
                  "installed first (pip install flash-attn --no-build-isolation); about 10 minutes on 64 cores, "
                  "hours on a few",
    "torch-scatter": "a C++ compiler and, for a GPU build, the CUDA toolkit of torch's CUDA version (nvcc), torch "
                     "installed first (--no-build-isolation)",
    "torch-sparse": "a C++ compiler and, for a GPU build, the CUDA toolkit of torch's CUDA version (nvcc), torch "
                    "installed first (--no-build-isolation)",
    "torch-cluster": "a C++ compiler and, for a GPU build, the CUDA toolkit of torch's CUDA version (nvcc), torch "
                     "installed first (--no-build-isolation)",
}
OLDEST_TORCH = (2, 0)  # the matrix's first release: builds for older torch are left out

# torch's own pip wheels use the C++11 ABI from 2.7 (flash-attn's publish.yml: "PyTorch 2.7+ pip wheels use
# CXX11_ABI=1 by default"; before, "Pytorch wheels currently don't use it"): the ABI of the prebuilt wheel to take
TORCH_CXX11_ABI_FROM = "2.7"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"[0-9]+", version))


def wheel_platform(tag: str) -> str | None:
    """The platform key of a wheel's platform tag: ``manylinux_2_28_x86_64`` -> linux_x86_64 (None: another)."""
    if tag == "win_amd64":
        return "windows_x86_64"
    if tag == "win_arm64":
        return "windows_arm64"
    found = re.fullmatch(r"(?:many|musl)?linux(?:1|2010|2014|_[0-9]+_[0-9]+)?_(x86_64|aarch64)", tag)
    if found:
        return f"linux_{found[1]}"
    found = re.fullmatch(r"macosx_[0-9]+_[0-9]+_(arm64|x86_64|universal2|intel)", tag)
    if found:
        return {"arm64": "macos_arm64", "x86_64": "macos_x86_64", "intel": "macos_x86_64"}.get(found[1], "macos_arm64")
    return None


def files_facts(files: list[str]) -> tuple[list[str], list[str], bool]:
    """(the platforms of a release's wheels, their Python tags — ``cp310``, ``cp39-abi3``, ``py3`` —, whether
    it has an sdist), read from its file names. A pure-Python wheel (``any``) leaves the platforms empty: any."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    platforms: set[str] = set()
    pythons: set[str] = set()
    pure = False
    for name in files:
        try:
            tags = parse_wheel_filename(name)[3] if name.endswith(".whl") else frozenset()
        except InvalidWheelFilename:
            continue
        for tag in tags:
            pythons.add(f"{tag.interpreter}-abi3" if tag.abi == "abi3" else tag.interpreter)
            if tag.platform == "any":
                pure = True
            elif (platform := wheel_platform(tag.platform)) is not None:
                platforms.add(platform)
    return ([] if pure else sorted(platforms)), sorted(pythons, key=lambda p: (p[:2], _key(p))), \
        any(n.endswith((".tar.gz", ".zip")) for n in files)


def _requirement(requires: list[str] | None, name: str) -> tuple[str | None, str | None]:
    """(the specifier of the ``name`` line, its marker) among a release's Requires-Dist lines: ("", None) when none
    names it, (None, None) when they were not read."""
    if requires is None:
        return None, None
    for line in requires:
        found = re.match(rf"^{name}\s*(\(?\s*([<>=!~][^;)]*))?\)?\s*(;\s*(.*))?$", line, re.IGNORECASE)
        if found:
            return (found[2] or "").replace(" ", ""), found[4]
    return "", None


def _family(requires: list[str] | None) -> dict[str, str]:
    out = {}
    for name in ("torchvision", "torchaudio"):
        spec, _ = _requirement(requires, name)
        if spec:
            out[name] = spec
    return out


def _variants(items: list[str]) -> list[str]:
    """CUDA "12.6.3" / ROCm "7.1" versions as variant ids."""
    out = []
    for item in items:
        if item.startswith(("cu", "rocm", "cpu", "xpu")):
            out.append(item)
        elif re.fullmatch(r"1[0-9]\.[0-9]+(\.[0-9]+)?", item):
            out.append("cu" + "".join(item.split(".")[:2]))
    return out


def base_release(facts: dict[str, Any]) -> dict[str, Any]:
    """What every release carries from the default index: its version, platforms, Python tags and Requires-Python,
    the torch it declares (absent: unknown, no wheel was read), and its yanked flag with the reason."""
    platforms, pythons, _ = files_facts(facts["files"])
    out: dict[str, Any] = {"version": facts["version"]}
    torch, marker = _requirement(facts["requires"], "torch")
    if torch is not None:
        out["torch"] = torch
        if marker:
            out["torch_marker"] = marker
    if platforms:
        out["platforms"] = platforms
    if pythons:
        out["pythons"] = pythons
    if facts.get("requires_python"):
        out["python"] = facts["requires_python"].replace(" ", "")
    if facts["yanked"]:
        out["yanked"] = facts.get("yanked_reason") or ""
    return out


def _index_releases(ref: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return ref["default_index"][name]["releases"]


def xformers(ref: dict[str, Any]) -> dict[str, Any]:
    """The default index's releases; the variants uploaded to the PyTorch index from the workflow at each tag. A
    release with no upload there comes from the user's index (built against the default index's torch build)."""
    upstream = ref["upstream"]["xformers"]["releases"]
    releases = []
    for facts in _index_releases(ref, "xformers"):
        release = base_release(facts)
        uploaded = upstream.get(facts["version"], {}).get("uploaded", [])
        if uploaded:
            release["variants"] = uploaded
        elif "torch" in release:
            release.update({"from": "default", "default_build": True})
        releases.append(release)
    return {"from": "index", "labels": {"torch": "requires-dist", "variants": "build-workflow",
                                        "platforms": "observed-wheel"},
            "src": ["default-index", "xformers"], "releases": releases}


def vllm(ref: dict[str, Any]) -> dict[str, Any]:
    releases = []
    for facts in _index_releases(ref, "vllm"):
        release = base_release(facts)
        if family := _family(facts["requires"]):
            release["family"] = family
        releases.append(release)
    return {"from": "default", "default_build": True, "labels": {"torch": "requires-dist", "family": "requires-dist",
                                                                   "platforms": "observed-wheel"},
            "src": ["default-index"], "releases": releases}


def torchao(ref: dict[str, Any]) -> dict[str, Any]:
    """torchao declares no torch (but 0.3.0): the torch its C++ extensions were built for is a preference, from
    its ``__init__.py`` (0.13 on) or its build workflow's test-infra branch (0.8–0.12: that branch's stable torch,
    inferred; its CUDA and ROCm versions, the variants)."""
    upstream = ref["upstream"]["torchao"]
    releases = []
    for facts in _index_releases(ref, "torchao"):
        release = base_release(facts)
        version = facts["version"]
        labels = {}
        build = upstream["builds"].get(version, {})
        if version in upstream["min_torch"]:
            release["built_for"] = ">=" + upstream["min_torch"][version]
        elif version in upstream["built_against"]:
            release["built_for"] = "==" + upstream["built_against"][version][0]
        elif build.get("stable_torch") and build["test_infra_ref"].startswith("torchao-release"):
            release["built_for"] = "==" + build["stable_torch"]
            labels["built_for"] = "inferred"
        if build.get("test_infra_ref", "").startswith("torchao-release") and build.get("cuda"):
            release["variants"] = ["cpu", *_variants(build["cuda"]), *(f"rocm{r}" for r in build["rocm"])]
        release["platforms"] = [p for p in release.get("platforms", []) if p.startswith("linux_")] or ["linux_x86_64"]
        if labels:
            release["labels"] = labels
        releases.append(release)
    return {"from": "index", "elsewhere": "default",
            "labels": {"torch": "requires-dist", "built_for": "source-file", "variants": "build-workflow",
                       "platforms": "observed-wheel"}, "src": ["default-index", "torchao"], "releases": releases}


def fbgemm(ref: dict[str, Any]) -> dict[str, Any]:
    """fbgemm-gpu declares no torch: each release is built for one torch minor (Releases.rst; after its table,
    release N with torch 2.(N+5) and the CUDA versions of its release workflow: inferred). A release the table
    and the rule do not cover is the user's index's wheel, built for a torch not recorded."""
    upstream = ref["upstream"]["fbgemm-gpu"]
    releases = []
    for facts in _index_releases(ref, "fbgemm-gpu"):
        release = base_release(facts)
        version = facts["version"]
        major, minor = (int(x) for x in version.split(".")[:2])
        row = upstream["releases"].get(version) or upstream["releases"].get(f"{major}.{minor}.0")
        if row:
            torch_minor = re.match(r"([0-9]+\.[0-9]+)", row["torch"])[1]  # type: ignore[index]
            release["variants"] = ["cpu", *_variants(row["cuda"]), *(f"rocm{r}" for r in row["rocm"])]
        elif major == 1:  # the table's rule, release N with torch 2.(N+5), for releases after the table
            torch_minor = f"2.{minor + 5}"
            known = [t for t, tag in upstream["tags"].items() if _key(t) <= _key(f"{major}.{minor}.0") and tag["cuda"]]
            tag = upstream["tags"][max(known, key=_key)] if known else {}  # that release's workflow, else the last
            release["variants"] = ["cpu", *_variants(tag.get("cuda", []))]
            release["labels"] = {"built_for": "inferred", "variants": "build-workflow"}
        else:
            release.update({"from": "default"})
            releases.append(release)
            continue
        release["built_for"] = f"=={torch_minor}.*"
        releases.append(release)
    return {"from": "index", "labels": {"torch": "requires-dist", "built_for": "maintainer-statement",
                                        "variants": "maintainer-statement", "platforms": "observed-wheel"},
            "src": ["default-index", "fbgemm-gpu"], "releases": releases}


def torchrec(ref: dict[str, Any], fbgemm_table: dict[str, Any]) -> dict[str, Any]:
    """torchrec follows FBGEMM's release numbers (it depends on fbgemm-gpu, unpinned): release N with FBGEMM N."""
    by_minor = {".".join(r["version"].split(".")[:2]): r for r in fbgemm_table["releases"] if "built_for" in r}
    releases = []
    for facts in _index_releases(ref, "torchrec"):
        release = base_release(facts)
        pair = by_minor.get(".".join(facts["version"].split(".")[:2]))
        if pair is None:
            release["from"] = "default"
        else:
            release.update({"built_for": pair["built_for"], "variants": pair["variants"]})
        releases.append(release)
    return {"from": "index", "labels": {"torch": "requires-dist", "built_for": "inferred", "variants": "inferred",
                                        "platforms": "observed-wheel"},
            "src": ["default-index", "fbgemm-gpu"], "releases": releases}


def _excluded(combination: dict[str, str], rules: list[dict[str, str]]) -> bool:
    """Whether a workflow matrix's "exclude" entries leave this combination out."""
    return any(all(combination.get(k) == v for k, v in rule.items()) for rule in rules)


def wheel_cuda_tag(cuda: str, facts: dict[str, Any]) -> str:
    """The CUDA part of a prebuilt flash-attn wheel's name for a CUDA version, as that release's setup.py writes
    it: the major only ("12"), or major and minor ("122")."""
    major, minor = cuda.split(".")[:2]
    return major if facts.get("cuda_tag") == "major" else major + minor


def flash_builds(facts: dict[str, Any]) -> list[list[Any]]:
    """A release's prebuilt wheels, from its publish.yml matrix less its excludes: [torch minor, CUDA tag, ABI,
    [Pythons], platform] each, for torch 2.0 on."""
    builds = []
    for torch in facts["torch-version"]:
        minor = ".".join(torch.split(".")[:2])
        if _key(minor) < OLDEST_TORCH:
            continue
        for cuda in facts["cuda-version"]:
            for abi in facts["cxx11_abi"] or ["FALSE"]:
                for image in facts["os"] or ["ubuntu-22.04"]:
                    combination = {"torch-version": torch, "cuda-version": cuda, "cxx11_abi": abi, "os": image}
                    pythons = [p for p in facts["python-version"]
                               if not _excluded({**combination, "python-version": p}, facts["exclude"])]
                    if pythons and "." in cuda:
                        builds.append([minor, wheel_cuda_tag(cuda, facts), abi, pythons,
                                       "linux_aarch64" if "arm" in image else "linux_x86_64"])
    return builds


def flash_attn(ref: dict[str, Any]) -> dict[str, Any]:
    """Every release on the default index (sdists only there); the prebuilt wheels of those whose tag the
    repository copy has (its publish.yml); a newer release's wheels are unknown."""
    upstream = ref["upstream"]["flash-attn"]
    releases = []
    sets: list[list[list[Any]]] = []  # the distinct build lists: most releases share their workflow's
    for facts in _index_releases(ref, "flash-attn"):
        release = base_release(facts)
        release["torch"] = ""  # its setup.py: "torch", unpinned (built against the installed torch)
        built = upstream["releases"].get(facts["version"])
        if built is None:
            release["labels"] = {"builds": "unknown"}
        else:
            if builds := flash_builds(built):
                if builds not in sets:
                    sets.append(builds)
                release["builds"] = sets.index(builds)
            if built.get("cuda_map"):
                release["cuda_map"] = built["cuda_map"]
        releases.append(release)
    url = upstream["wheel_url"].replace("{tag_name}", "v{version}")
    name = (upstream["wheel_name"].replace("{PACKAGE_NAME}", "flash_attn").replace("{flash_version}", "{version}")
            .replace("{cuda_version}", "{cuda}").replace("{torch_version}", "{torch}")
            .replace("{cxx11_abi}", "{cxx11abi}").replace("{python_version}", "{python}")
            .replace("{platform_name}", "{platform}"))
    return {"from": "release-wheel", "url": url.replace("{wheel_name}", name),
            "source_build": SOURCE_BUILDS["flash-attn"], "cxx11abi_from": TORCH_CXX11_ABI_FROM,
            "labels": {"torch": "source-file", "builds": "build-workflow"}, "src": ["default-index", "flash-attn"],
            "build_sets": sets, "releases": releases}


def pyg(ref: dict[str, Any], name: str) -> dict[str, Any]:
    """A find-links page per torch minor and variant, from the README's tables over its history (a minor the
    README has since dropped keeps its last table)."""
    upstream = ref["upstream"][name]
    builds = {minor: {os_name: variants for os_name, variants in table["os"].items() if os_name in OS_OF_PLATFORM}
              for minor, table in sorted(upstream["tables"].items(), key=lambda kv: _key(kv[0]))
              if _key(minor) >= OLDEST_TORCH}
    source = SOURCE_BUILDS.get(name) if any(files_facts(r["files"])[2] for r in _index_releases(ref, name)) else None
    return {"from": "find-links", "url": "https://data.pyg.org/whl/torch-{torch}+{variant}.html",
            "source_build": source, "builds": builds, "labels": {"builds": "maintainer-statement"}, "src": [name]}


def build(ref: dict[str, Any]) -> dict[str, Any]:
    fbgemm_table = fbgemm(ref)
    packages = {"xformers": xformers(ref), "vllm": vllm(ref), "torchao": torchao(ref), "fbgemm-gpu": fbgemm_table,
                "torchrec": torchrec(ref, fbgemm_table), "flash-attn": flash_attn(ref)}
    for name in ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster"):
        packages[name] = pyg(ref, name)
    sources = {"default-index": f"every final release on the default index ({ref['index']}), its files, yanked "
                                f"flags and the Requires-Dist of one wheel of it, read {ref['captured']}"}
    for name, facts in ref["upstream"].items():
        sources[name] = f"{facts['repo']} at {facts['commit'][:10]} ({facts['date']}): {', '.join(facts['files'])}"
        if "test_infra" in facts:
            sources[name] += f"; {facts['test_infra']['repo']} at {facts['test_infra']['commit'][:10]}"
    return {"schema": SCHEMA, "captured": ref["captured"], "sources": sources, "packages": packages}


def dump(table: dict[str, Any]) -> str:
    """The table as JSON, one release (or find-links minor) to a line."""
    def compact(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    sources = json.dumps(table["sources"], indent=1, ensure_ascii=False).replace("\n", "\n ")
    lines = ["{", f' "schema": {table["schema"]},', f' "captured": {compact(table["captured"])},',
             f' "sources": {sources},', ' "packages": {']
    names = list(table["packages"])
    for i, name in enumerate(names):
        package = dict(table["packages"][name])
        rows_key = "releases" if "releases" in package else "builds"
        rows = package.pop(rows_key)
        sets = package.pop("build_sets", None)
        head = compact(package)[1:-1]
        lines.append(f"  {compact(name)}: {{{head},")
        if sets is not None:
            lines.append('   "build_sets": [')
            lines += [f"    {compact(one)}," for one in sets[:-1]] + [f"    {compact(one)}" for one in sets[-1:]]
            lines.append("   ],")
        if rows_key == "releases":
            body = [f"   {compact(r)}" for r in rows]
            lines.append('   "releases": [')
            lines += [("  " + b + ",") for b in body[:-1]] + [("  " + body[-1])] if body else []
            lines.append("   ]")
        else:
            items = [f"    {compact(minor)}: {compact(per_os)}" for minor, per_os in rows.items()]
            lines.append('   "builds": {')
            lines += [item + "," for item in items[:-1]] + items[-1:]
            lines.append("   }")
        lines.append("  }" + ("," if i < len(names) - 1 else ""))
    lines += [" }", "}", ""]
    text = "\n".join(lines)
    assert json.loads(text) == table, "the one-line-per-release form must read back as the table"
    return text


NAMES_FILE = "companion-names.json"


def dump_names(table: dict[str, Any]) -> str:
    """The names file: the table's package names, in its order."""
    about = ("Generated by scripts/build_companions.py with companions.json beside it: do not edit. The names of "
             "the packages that table holds.")
    return json.dumps({"_about": about, "names": list(table["packages"])}, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", nargs="?", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    table = build(json.loads(args.reference.read_text(encoding="utf-8")))
    args.output.write_text(dump(table), encoding="utf-8")
    args.output.with_name(NAMES_FILE).write_text(dump_names(table), encoding="utf-8")
    print(f"wrote {args.output}: {', '.join(table['packages'])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
