#!/usr/bin/env python3
"""Build the embedded table of packages built against one torch from the captured facts.

    python scripts/build_companions.py [REFERENCE] [-o OUT]

REFERENCE defaults to scripts/reference/companions.json, OUT to src/torch_install/resolver/data/companions.json.

The captured file (``capture_companions.py``) holds what the default index and each package's repository say,
with commits; the embedded table keeps, per package, where its matching build comes from and, per release, the
torch it needs, the variants and platforms it has builds for, and each fact's confidence and sources. Its
schema is ``companions.schema.json`` beside it; docs/companions.md explains each kind.
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
SCHEMA = 1

PLATFORM_OF_TAG = {"manylinux_2_28_x86_64": "linux_x86_64", "manylinux_2_24_x86_64": "linux_x86_64",
                   "manylinux_2_17_x86_64": "linux_x86_64", "manylinux2014_x86_64": "linux_x86_64",
                   "linux_x86_64": "linux_x86_64", "manylinux_2_28_aarch64": "linux_aarch64",
                   "manylinux_2_17_aarch64": "linux_aarch64", "manylinux2014_aarch64": "linux_aarch64",
                   "win_amd64": "windows_x86_64", "macosx_11_0_arm64": "macos_arm64"}
OS_PLATFORMS = {"linux": ["linux_x86_64", "linux_aarch64"], "windows": ["windows_x86_64"], "macos": ["macos_arm64"]}
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


# torch's own pip wheels use the C++11 ABI from 2.7 (flash-attn's publish.yml: "PyTorch 2.7+ pip wheels use
# CXX11_ABI=1 by default"; before, "Pytorch wheels currently don't use it"): the ABI of the prebuilt wheel to take
TORCH_CXX11_ABI_FROM = "2.7"


def _platforms(tags: list[str]) -> list[str]:
    return sorted({PLATFORM_OF_TAG[t] for t in tags if t in PLATFORM_OF_TAG})


def _variants(items: list[str]) -> list[str]:
    """CUDA "12.6.3" / ROCm "7.1" versions as variant ids."""
    out = []
    for item in items:
        if item.startswith(("cu", "rocm", "cpu", "xpu")):
            out.append(item)
        elif re.fullmatch(r"1[0-9]\.[0-9]+(\.[0-9]+)?", item):
            out.append("cu" + "".join(item.split(".")[:2]))
    return out


def _torch_spec(requires: list[str] | None) -> str | None:
    for line in requires or []:
        found = re.match(r"^torch\s*(\(?\s*([<>=!~][^;)]*))?\)?\s*(;.*)?$", line)
        if found:
            return (found[2] or "").replace(" ", "") or None
    return None


def _family(requires: list[str] | None) -> dict[str, str]:
    out = {}
    for line in requires or []:
        found = re.match(r"^(torchvision|torchaudio)\s*\(?\s*([<>=!~][^;)]*)", line)
        if found:
            out[found[1]] = found[2].replace(" ", "")
    return out


def xformers(ref: dict[str, Any]) -> dict[str, Any]:
    index = {r["version"]: r for r in ref["default_index"]["xformers"]["releases"]}
    upstream = ref["upstream"]["xformers"]
    releases = []
    for version, facts in sorted(upstream["releases"].items(), key=lambda kv: _key(kv[0]), reverse=True):
        if not facts["uploaded"] or version not in index:
            continue  # no upload to the PyTorch index at that tag, or no wheel on the default index
        declared = _torch_spec(index[version]["requires"])
        torch = declared or ("==" + facts["torch"][0] if facts["torch"] else None)
        if torch is None:
            continue
        releases.append({"version": version, "torch": torch, "variants": facts["uploaded"],
                         "platforms": _platforms(index[version]["platforms"]),
                         "conf": "verified" if declared else "source-file",
                         "src": ["default-index", "xformers"] if declared else ["xformers"]})
    return {"from": "index", "releases": releases}


def vllm(ref: dict[str, Any]) -> dict[str, Any]:
    releases = []
    for release in ref["default_index"]["vllm"]["releases"]:
        torch = _torch_spec(release["requires"])
        if torch is None:
            continue
        releases.append({"version": release["version"], "torch": torch, "family": _family(release["requires"]),
                         "platforms": _platforms(release["platforms"]), "conf": "verified", "src": ["default-index"]})
    return {"from": "default", "default_build": True, "releases": releases}


def torchao(ref: dict[str, Any]) -> dict[str, Any]:
    index = {r["version"]: r for r in ref["default_index"]["torchao"]["releases"]}
    upstream = ref["upstream"]["torchao"]
    releases = []
    for version in sorted(index, key=_key, reverse=True):
        if version in upstream["min_torch"]:
            torch = ">=" + upstream["min_torch"][version]
        elif version in upstream["built_against"]:
            torch = ",".join(f"=={v}" for v in upstream["built_against"][version][:1])
        else:
            continue
        platforms = [p for p in _platforms(index[version]["platforms"]) if p.startswith("linux_")]
        releases.append({"version": version, "torch": torch, "variants": None,
                         "platforms": platforms or ["linux_x86_64"], "conf": "source-file", "src": ["torchao"]})
    return {"from": "index", "elsewhere": "default", "releases": releases}


def fbgemm(ref: dict[str, Any]) -> dict[str, Any]:
    index = {r["version"]: r for r in ref["default_index"]["fbgemm-gpu"]["releases"]}
    upstream = ref["upstream"]["fbgemm-gpu"]
    releases = []
    for version in sorted(index, key=_key, reverse=True):
        major, minor = (int(x) for x in version.split(".")[:2])
        row = upstream["releases"].get(version) or upstream["releases"].get(f"{major}.{minor}.0")
        if row:
            torch_minor = re.match(r"([0-9]+\.[0-9]+)", row["torch"])[1]  # type: ignore[index]
            variants = ["cpu", *_variants(row["cuda"]), *(f"rocm{r}" for r in row["rocm"])]
            conf, src = "maintainer-statement", ["fbgemm-gpu"]
        elif major == 1:  # the table's rule, release N with torch 2.(N+5), for releases after the table
            torch_minor = f"2.{minor + 5}"
            known = [t for t, facts in upstream["tags"].items()
                     if _key(t) <= _key(f"{major}.{minor}.0") and facts["cuda"]]
            tag = upstream["tags"][max(known, key=_key)] if known else {}  # that release's workflow, else the last
            variants = ["cpu", *_variants(tag.get("cuda", []))]
            conf, src = "inferred", ["fbgemm-gpu"]
        else:
            continue
        releases.append({"version": version, "torch": f"=={torch_minor}.*", "variants": variants,
                         "platforms": _platforms(index[version]["platforms"]), "conf": conf, "src": src})
    return {"from": "index", "releases": releases}


def torchrec(ref: dict[str, Any], fbgemm_table: dict[str, Any]) -> dict[str, Any]:
    """torchrec follows FBGEMM's release numbers (it depends on fbgemm-gpu, unpinned): release N with FBGEMM N."""
    by_minor = {".".join(r["version"].split(".")[:2]): r for r in fbgemm_table["releases"]}
    releases = []
    for release in ref["default_index"]["torchrec"]["releases"]:
        pair = by_minor.get(".".join(release["version"].split(".")[:2]))
        if pair is None:
            continue
        releases.append({"version": release["version"], "torch": pair["torch"], "variants": pair["variants"],
                         "platforms": pair["platforms"], "conf": "inferred", "src": ["default-index", "fbgemm-gpu"]})
    return {"from": "index", "releases": releases}


def flash_attn(ref: dict[str, Any]) -> dict[str, Any]:
    upstream = ref["upstream"]["flash-attn"]
    sdists = ref["default_index"]["flash-attn"].get("sdists", [])
    releases = []
    for version, facts in sorted(upstream["releases"].items(), key=lambda kv: _key(kv[0]), reverse=True):
        if not facts["torch-version"] or version not in sdists:
            continue

        def excluded(combination: dict[str, str], rules: list[dict[str, str]] = facts["exclude"]) -> bool:
            """Whether the workflow matrix's "exclude" entries leave this combination out."""
            return any(all(combination.get(k) == v for k, v in rule.items()) for rule in rules)

        builds = []
        for torch in facts["torch-version"]:
            for cuda in facts["cuda-version"]:
                for abi in facts["cxx11_abi"]:
                    for image in facts["os"] or ["ubuntu-22.04"]:
                        combination = {"torch-version": torch, "cuda-version": cuda, "cxx11_abi": abi, "os": image}
                        pythons = [p for p in facts["python-version"]
                                   if not excluded({**combination, "python-version": p})]
                        if pythons:
                            builds.append({"torch": ".".join(torch.split(".")[:2]), "cuda": cuda.split(".")[0],
                                           "cxx11abi": abi, "pythons": pythons,
                                           "platform": "linux_aarch64" if "arm" in image else "linux_x86_64"})
        releases.append({"version": version, "builds": builds, "conf": "source-file", "src": ["flash-attn"]})
    url = upstream["wheel_url"].replace("{tag_name}", "v{version}")
    name = (upstream["wheel_name"].replace("{PACKAGE_NAME}", "flash_attn").replace("{flash_version}", "{version}")
            .replace("{cuda_version}", "{cuda}").replace("{torch_version}", "{torch}")
            .replace("{cxx11_abi}", "{cxx11abi}").replace("{python_version}", "{python}")
            .replace("{platform_name}", "{platform}"))
    return {"from": "release-wheel", "url": url.replace("{wheel_name}", name),
            "source_build": SOURCE_BUILDS["flash-attn"], "cxx11abi_from": TORCH_CXX11_ABI_FROM, "releases": releases}


def pyg(ref: dict[str, Any], name: str) -> dict[str, Any]:
    upstream = ref["upstream"][name]
    builds = {minor: {os_name: variants for os_name, variants in per_os.items() if os_name in OS_PLATFORMS}
              for minor, per_os in upstream["tables"].items()}
    source = SOURCE_BUILDS.get(name) if ref["default_index"][name].get("sdists") else None
    return {"from": "find-links", "url": "https://data.pyg.org/whl/torch-{torch}+{variant}.html",
            "source_build": source, "builds": builds, "conf": "maintainer-statement", "src": [name]}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"[0-9]+", version))


def build(ref: dict[str, Any]) -> dict[str, Any]:
    fbgemm_table = fbgemm(ref)
    packages = {"xformers": xformers(ref), "vllm": vllm(ref), "torchao": torchao(ref), "fbgemm-gpu": fbgemm_table,
                "torchrec": torchrec(ref, fbgemm_table), "flash-attn": flash_attn(ref)}
    for name in ("pyg-lib", "torch-scatter", "torch-sparse", "torch-cluster"):
        packages[name] = pyg(ref, name)
    sources = {"default-index": f"Requires-Dist and wheel platforms of each release on the default index ("
                                f"{ref['index']}), read {ref['captured']}"}
    for name, facts in ref["upstream"].items():
        sources[name] = f"{facts['repo']} at {facts['commit'][:10]} ({facts['date']}): {', '.join(facts['files'])}"
    return {"schema": SCHEMA, "captured": ref["captured"], "sources": sources, "packages": packages}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", nargs="?", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    table = build(json.loads(args.reference.read_text(encoding="utf-8")))
    args.output.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {', '.join(table['packages'])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
