#!/usr/bin/env python3
"""Build the embedded compatibility matrix from the reference matrix.

    python scripts/build_matrix.py [REFERENCE_JSON] [-o src/torch_install/resolver/data/torch-matrix.json]

The reference file (default: scripts/reference/torch-matrix.json, the researched facts) documents every fact
with prose, sources and confidence. The embedded file keeps the
facts the resolver walks (normalized, no prose) and each fact's confidence; its schema is docs/matrix.md.
Facts the reference lacks but the resolver needs (a Windows arch list never read, an aarch64 cu129 list) are
filled from the nearest equivalent and labelled ``inferred``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_REFERENCE = HERE / "reference" / "torch-matrix.json"
DEFAULT_OUT = HERE.parent / "src/torch_install/resolver/data/torch-matrix.json"
SCHEMA = 1

# manylinux tag -> glibc floor (PEP 600 / PEP 599 / PEP 571 / PEP 513 legacy aliases)
_LEGACY_MANYLINUX = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
# torch's manylinux1 x86_64 wheels (2.0-2.6) need glibc 2.17 whatever the tag says: their bundled libraries
# reference GLIBC_2.17 (libgomp in 2.0-2.5, libc10 in 2.6; RELEASE.md: "manylinux2014 compatible, glibc-2.17")
TORCH_GLIBC_FLOOR = "2.17"

DEFAULT_INDEX_PAGES = HERE / "reference" / "default-index"  # scripts/capture_default_index.py

# Arch lists read from build scripts where the reference copies another platform's. aarch64 cu129: every
# aarch64_ci_build.sh revision omits 7.0/7.5/8.6; the one with a 12.9 case sets 8.0;9.0;10.0;12.0 (2.8 go-live:
# CUDA_AARCH64_ARCHES = ['12.9-aarch64']); 2.9.1-2.11.0 (whose release branches add 12.9-aarch64 to the test
# channel in code) and 2.12.1/2.13.0 have no list of their own (test-infra #8164/#8215 add the variant only), so
# they take the last known aarch64 12.9 list, inferred. Windows cu128/cu129: the stored
# cuda128.bat/cuda129.bat set 7.5;8.0;8.6;9.0;10.0;12.0 without PTX; sm_70 came back for Linux only
# (pytorch#157558); the .bat revisions are undated, so inferred.
ARCH_OVERRIDES: dict[tuple[str, str, str], dict[str, Any]] = {
    ("2.8.0", "linux_aarch64", "cu129"): {"sm": [80, 90, 100, 120], "ptx": [], "conf": "source-file",
                                          "note": "aarch64_ci_build.sh 12.9 case"},
    **{(v, "linux_aarch64", "cu129"): {"sm": [80, 90, 100, 120], "ptx": [], "conf": "inferred",
                                       "note": "the last aarch64 12.9 list (aarch64_ci_build.sh)"}
       for v in ("2.9.1", "2.10.0", "2.11.0", "2.12.1")},
    ("2.13.0", "linux_aarch64", "cu129"): {"sm": [80, 90, 100, 120], "ptx": [], "conf": "inferred",
                                           "note": "the last aarch64 12.9 list (aarch64_ci_build.sh)"},
    **{(v, "windows_x86_64", c): {"sm": [75, 80, 86, 90, 100, 120], "ptx": [], "conf": "inferred",
                                  "note": f"{c.replace('cu', 'cuda')}.bat (undated revision); no sm_70 on Windows"}
       for v, c in (("2.8.0", "cu128"), ("2.9.0", "cu128"), ("2.9.1", "cu128"), ("2.10.0", "cu128"),
                    ("2.8.0", "cu129"), ("2.9.0", "cu129"))},
}

# Pythons the PyTorch index has beyond the default index's (test-infra release/2.13:
# PREVIEW_PYTHON_ARCHES_DICT["release"] = ["3.15", "3.15t"] for Linux x86_64 and aarch64; #8263: "those wheels
# only exist on download.pytorch.org").
INDEX_ONLY_PYTHON = {"2.13.0": {"linux_x86_64": ["3.15", "3.15t"], "linux_aarch64": ["3.15", "3.15t"]}}

# The macOS the MPS backend needs, by torch minor: 12.3 before 2.5 (the MPS docs), 13.0 from 2.5 (pytorch#139425,
# maintainer), 14.0 from 2.10 ("The MPS backend is supported on macOS 14.0+", pytorch#177819; RELEASE.md OS
# table); the switch between 2.6 and 2.9 is not pinned down, so those are inferred.
MPS_MACOS = [((2, 10), "14.0", "maintainer-statement"), ((2, 6), "13.0", "inferred"),
             ((2, 5), "13.0", "maintainer-statement"), ((2, 0), "12.3", "secondary")]

# Intel XPU AOT device names -> device family ids used by Machine.gpus[].family
XPU_AOT_FAMILIES = {
    "pvc": "ponte-vecchio", "dg2": "alchemist", "ats-m150": "alchemist", "bmg": "battlemage",
    "xe2-hpg": "battlemage", "mtl": "meteor-lake", "mtl-h": "meteor-lake", "mtl-u": "meteor-lake",
    "xe-lpg": "meteor-lake", "lnl-m": "lunar-lake", "xe2-lpg": "lunar-lake", "arl-h": "arrow-lake",
    "ptl": "panther-lake", "ptl-h": "panther-lake", "ptl-u": "panther-lake",
}

# AMD targets that are not built but run the code of a built target when HSA_OVERRIDE_GFX_VERSION says so.
# Each maps to the built targets to try, nearest first. Source: ROCm/PyTorch issue threads summarised in
# the reference (doctor-and-containers §5.6, anchors-ltt-torchruntime §2.5) - a user workaround, not support.
GFX_ALIASES = {
    "gfx1031": ["gfx1030"], "gfx1032": ["gfx1030"], "gfx1033": ["gfx1030"], "gfx1034": ["gfx1030"],
    "gfx1035": ["gfx1030"], "gfx1036": ["gfx1030"],
    "gfx1103": ["gfx1100"], "gfx1150": ["gfx1100"], "gfx1151": ["gfx1100"],
    "gfx90c": ["gfx900"],
}


# Oldest driver branch that drives a GPU generation at all, keyed by compute capability (a capability without a row
# takes the nearest lower one of its major): the driver of the first CUDA toolkit whose compiler targets it (clang's
# MinVersionForCudaArch: sm_86 CUDA 11.1, sm_87 11.4, sm_89/sm_90 11.8, evidence/cuda-archs.json; for Blackwell,
# which that table predates, CUTLASS's CUTLASS_NVCC_ARCHS_SUPPORTED: sm_100/sm_120 12.8, sm_103 12.9, sm_110 13.0,
# evidence/nvidia-drivers.json), at that toolkit's GA (data/cuda-toolkit-drivers.json). Older generations (sm_80's
# CUDA 11.0: R450) are no newer than every CUDA family floor in use.
GPU_DRIVER_FLOOR = {
    "8.6": {"driver": "455", "arch": "Ampere", "conf": "derived"},
    "8.7": {"driver": "470", "arch": "Ampere (Jetson Orin)", "conf": "derived"},
    "8.9": {"driver": "520", "arch": "Ada Lovelace", "conf": "derived"},
    "9.0": {"driver": "520", "arch": "Hopper", "conf": "derived"},
    "10.0": {"driver": "570", "arch": "Blackwell", "conf": "derived"},
    "10.3": {"driver": "575", "arch": "Blackwell Ultra", "conf": "derived"},
    "11.0": {"driver": "580", "arch": "Blackwell (Jetson Thor)", "conf": "derived"},
    "12.0": {"driver": "570", "arch": "Blackwell", "conf": "derived"},
}
# Newest driver branch that still drives the older generations: R470 is Kepler's last; R580 is the last for
# Maxwell, Pascal and Volta (NVIDIA's supported-gpus.json of an R590 driver: the legacybranch of each device it no
# longer drives, evidence/nvidia-drivers.json; one Kepler board, GRID K2, ended earlier, at R367).
GPU_DRIVER_LAST = [{"up_to_sm": 37, "driver": "470", "arch": "Kepler", "conf": "source-file"},
                   {"up_to_sm": 72, "driver": "580", "arch": "Maxwell, Pascal and Volta", "conf": "source-file"}]

# Companions whose wheels carry no variant label from this version on: the libtorch stable-ABI builds (reference
# torch-matrix.md, releases 2.11, 2.14 and 2.15: torchvision 0.29.1+ and torchaudio 2.11.1 are py3-none wheels).
COMPANION_LABELS = {"torchvision": {"unlabelled_from": "0.29.1", "conf": "verified", "src": ["pypi_companions"]},
                    "torchaudio": {"unlabelled_from": "2.11.1", "conf": "verified", "src": ["pypi_companions"]}}

# What to tell the user about a platform (or a platform and GPU vendor) where PyTorch publishes no build, beyond
# "none on the index".
PLATFORM_NOTES = {
    "windows_arm64": (
        "Windows on ARM64 (windows_arm64): PyTorch publishes no Windows ARM64 release wheels in this tool's "
        "release data, so there is nothing to install for a native ARM64 Python; a PyTorch test-infra comment says "
        "Windows ARM64 wheels are built for the nightly channel only (unverified: release availability not checked)"),
    "windows_x86_64:amd": (
        "PyTorch publishes no ROCm wheels for Windows (a HIP SDK on the machine does not change that): CPU build "
        "chosen. The ways to the AMD GPU on Windows: AMD's own Windows PyTorch wheels (AMD's \"Install PyTorch on "
        "Windows\" guide, for the Radeon and Ryzen AI GPUs it lists; from AMD's index, not PyTorch's), or the "
        "torch-directml package (DirectX 12, on older torch releases); or WSL2 with AMD's ROCm for WSL"),
    "wsl:amd": (
        "WSL2: the PyTorch index's ROCm wheels bundle a ROCm runtime (libhsa-runtime64) that does not use WSL's "
        "/dev/dxg, so they do not see the GPU: CPU build chosen. For the GPU, follow AMD's WSL procedure (AMD's "
        "\"Install PyTorch for ROCm\" guide for WSL): install ROCm for WSL (amdgpu-install --usecase=wsl,rocm "
        "--no-dkms), then a ROCm build of torch with the bundled libhsa-runtime64.so removed from torch/lib so "
        "the WSL runtime in /opt/rocm/lib is used (secondary: AMD's documentation, not checked here)"),
    "wsl:amd-rocm": (
        "WSL2: this ROCm build bundles a ROCm runtime (libhsa-runtime64) that does not use WSL's /dev/dxg; with "
        "ROCm for WSL installed, follow AMD's WSL procedure (AMD's \"Install PyTorch for ROCm\" guide for WSL): "
        "remove libhsa-runtime64.so* from torch/lib after installing, so the WSL runtime in /opt/rocm/lib is used "
        "(secondary: AMD's documentation, not checked here)"),
}


def _glibc(tags: list[str]) -> str | None:
    floors = []
    for tag in tags:
        if m := re.match(r"manylinux_(\d+)_(\d+)_", tag):
            floors.append((int(m[1]), int(m[2])))
        else:
            legacy = _LEGACY_MANYLINUX.get(tag.split("_")[0])
            if legacy:
                floors.append(tuple(int(x) for x in legacy.split(".")))
    return ".".join(map(str, min(floors))) if floors else None


def _default_index_files() -> dict[str, list[tuple[str, Any, str]]]:
    """project -> [(version, tags, platform key)] of its wheels on the default index (the captured pages)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    out: dict[str, list[tuple[str, Any, str]]] = {}
    for project in ("torch", "torchvision", "torchaudio"):
        page = json.loads((DEFAULT_INDEX_PAGES / f"{project}.json").read_text(encoding="utf-8"))
        rows = out.setdefault(project, [])
        for entry in page["files"]:
            try:
                _, version, _, tags = parse_wheel_filename(entry["filename"])
            except InvalidWheelFilename:
                continue
            rows.append((str(version), tags, entry["filename"]))
    return out


def _platform_of(plat: str) -> str | None:
    if plat.startswith("manylinux") or plat.startswith("linux"):
        return "linux_aarch64" if plat.endswith("aarch64") else "linux_x86_64" if plat.endswith("x86_64") else None
    if plat == "win_amd64":
        return "windows_x86_64"
    if plat.startswith("macosx_"):
        return "macos_arm64" if plat.endswith("arm64") else "macos_x86_64" if plat.endswith("x86_64") else None
    return None


def _python_of(tag: Any) -> str | None:
    """"3.13t" for cp313-cp313t, "3.12" for cp312-cp312; None for py3/abi3 (any Python)."""
    if not tag.interpreter.startswith("cp") or tag.abi == "abi3":
        return None
    digits = tag.interpreter[2:]
    free = digits.endswith("t") or tag.abi.endswith("t")
    digits = digits.rstrip("t")
    return f"{digits[0]}.{digits[1:]}" + ("t" if free else "")


def _macos_by_python(files: list[tuple[str, Any, str]], version: str) -> dict[str, dict[str, str]]:
    """platform -> Python -> macOS floor, where a Python's wheels need more than the release's lowest."""
    floors: dict[str, dict[str, tuple[int, int]]] = {}
    for v, tags, _ in files:
        if v != version:
            continue
        for tag in tags:
            m = re.match(r"macosx_(\d+)_(\d+)_", tag.platform)
            python = _python_of(tag)
            platform = _platform_of(tag.platform)
            if m and python and platform:
                floor = (int(m[1]), int(m[2]))
                seen = floors.setdefault(platform, {})
                seen[python] = min(seen.get(python, floor), floor)
    out: dict[str, dict[str, str]] = {}
    for platform, by_python in floors.items():
        lowest = min(by_python.values())
        higher = {py: f"{f[0]}.{f[1]}" for py, f in by_python.items() if f > lowest}
        if higher:
            out[platform] = higher
    return out


def _companion_gaps(files: dict[str, list[tuple[str, Any, str]]], companions: dict[str, str],
                    pythons: dict[str, list[str]]) -> dict[str, dict[str, list[str]]]:
    """companion -> platform -> the Pythons torch has wheels for there and the companion version has none."""
    gaps: dict[str, dict[str, list[str]]] = {}
    for name, version in companions.items():
        have: dict[str, set[str | None]] = {}
        for v, tags, _ in files.get(name, []):
            if v != version:
                continue
            for tag in tags:
                platform = _platform_of(tag.platform) if tag.platform != "any" else "*"
                if platform:
                    have.setdefault(platform, set()).add(_python_of(tag))
        if not have:
            continue
        for platform, torch_pythons in pythons.items():
            got = have.get(platform, set()) | have.get("*", set())
            if None in got or not got:  # abi3/py3 wheels, or no wheel of this platform at all to judge by
                continue
            missing = [py for py in torch_pythons if py not in got]
            if missing:
                gaps.setdefault(name, {})[platform] = missing
    return gaps


def _companion_macos(files: dict[str, list[tuple[str, Any, str]]], companions: dict[str, str],
                     torch_floor: dict[str, str], torch_by_python: dict[str, dict[str, str]]
                     ) -> dict[str, dict[str, dict[str, str]]]:
    """companion -> platform -> Python -> the macOS its wheels need, where that is more than torch's wheel for
    the same Python needs ("*": a py3 wheel, for every Python)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for name, version in companions.items():
        floors: dict[str, dict[str, tuple[int, int]]] = {}
        for v, tags, _ in files.get(name, []):
            if v != version:
                continue
            for tag in tags:
                m = re.match(r"macosx_(\d+)_(\d+)_", tag.platform)
                platform = _platform_of(tag.platform)
                if m and platform:
                    python = _python_of(tag) or "*"
                    seen = floors.setdefault(platform, {})
                    seen[python] = min(seen.get(python, (int(m[1]), int(m[2]))), (int(m[1]), int(m[2])))
        for platform, by_python in floors.items():
            base = torch_floor.get(platform)
            for python, floor in by_python.items():
                need = torch_by_python.get(platform, {}).get(python) or base
                if need and floor > tuple(int(x) for x in need.split(".")[:2]):
                    out.setdefault(name, {}).setdefault(platform, {})[python] = f"{floor[0]}.{floor[1]}"
    return out


def _companion_patch_exclusions(companions: dict[str, str]) -> dict[str, list[str]]:
    """companion -> the Python patch releases its Requires-Python excludes (``!=3.14.1``), from its files' entries
    on the default index's page."""
    out: dict[str, list[str]] = {}
    for name, version in companions.items():
        page = DEFAULT_INDEX_PAGES / f"{name}.json"
        if not page.exists():
            continue
        entries = json.loads(page.read_text(encoding="utf-8")).get("files", [])
        specs = {e.get("requires-python") or "" for e in entries if e["filename"].startswith(f"{name}-{version}-")}
        excluded = sorted({m for spec in specs for m in re.findall(r"!=\s*(3\.[0-9]+\.[0-9]+)", spec)})
        if excluded:
            out[name] = excluded
    return out


def _mps_macos(version: str) -> dict[str, str]:
    minor = tuple(int(x) for x in version.split(".")[:2])
    for since, macos, conf in MPS_MACOS:
        if minor >= since:
            return {"macos": macos, "conf": conf}
    return {}


def _macos(tags: list[str]) -> str | None:
    floors = [(int(m[1]), int(m[2])) for t in tags if (m := re.match(r"macosx_(\d+)_(\d+)_", t))]
    return ".".join(map(str, min(floors))) if floors else None


def _driver(value: str | None) -> str | None:
    """'580 (no bundled Windows driver version published)' -> '580'."""
    if not value:
        return None
    m = re.match(r"\d+(\.\d+)*", value)
    return m[0] if m else None


def _cuda_families(ref: dict[str, Any]) -> dict[str, Any]:
    compat = ref["cuda_minor_version_compat"]
    out = {}
    for major in ("11", "12", "13"):
        row = compat[major]
        fam: dict[str, Any] = {
            "floor": {"linux": _driver(row["linux_x86_64"]), "windows": _driver(row["windows_x86_64"])},
            "below": row.get("max_exclusive"), "conf": "source-file", "src": compat["sources"],
        }
        if major == "12":
            # NVIDIA's 12.0 GA Windows driver is 527.41; the 12.0 Update 1 driver 528.33 is the floor in use by
            # installers (uv) and the one this tool applies, to stay on the safe side.
            fam["floor"]["windows"] = "528.33"
            fam["note"] = "windows floor = CUDA 12.0 Update 1 driver (GA: 527.41)"
        if major == "13":
            fam["floor_conf"] = {"windows": "inferred"}
            fam["note"] = "no Windows driver version published for 13.x; the R580 branch rule is applied"
        out[major] = fam
    return out


def _arch_entry(entry: dict[str, Any], conf: str | None = None, note: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"sm": list(entry["sm"]), "ptx": list(entry.get("ptx") or []),
                           "conf": conf or entry.get("confidence", "unverified")}
    if note:
        out["note"] = note
    return out


def _fill_arch(releases: list[dict[str, Any]], i: int, platform: str, variant: str) -> dict[str, Any] | None:
    """An arch list the reference lacks: nearest release with the same platform+variant, else same release
    on linux_x86_64. Labelled inferred."""
    for distance in range(1, len(releases)):
        for j in (i - distance, i + distance):
            if 0 <= j < len(releases):
                entry = (releases[j].get("cuda_arch_lists") or {}).get(platform, {}).get(variant)
                if entry:
                    return _arch_entry(entry, "inferred", f"copied from {releases[j]['version']}")
    entry = (releases[i].get("cuda_arch_lists") or {}).get("linux_x86_64", {}).get(variant)
    if entry:
        return _arch_entry(entry, "inferred", "copied from linux_x86_64")
    return None


def _xpu(ref_minor: dict[str, Any] | None) -> dict[str, Any] | None:
    if not ref_minor or not ref_minor.get("wheels") or not ref_minor.get("aot"):
        return None
    out: dict[str, Any] = {"conf": ref_minor.get("conf", "unverified")}
    for os_ in ("linux", "windows"):
        names = [n.strip() for n in (ref_minor["aot"].get(os_) or "").split(",") if n.strip()]
        out[os_] = sorted({XPU_AOT_FAMILIES[n] for n in names if n in XPU_AOT_FAMILIES})
    return out


def _targets(r: dict[str, Any]) -> dict[str, Any]:
    """A release's ``targets`` of any vendor's kind: variant -> the architectures its build is compiled for, as the
    reference's generic ``targets`` field states them (``{"npu31": {"arches": [...], "confidence": ...}}``); none
    when the reference has none (CUDA, ROCm and XPU lists have fields of their own)."""
    targets = {variant: {"arches": entry.get("arches"), "conf": entry.get("confidence", "unverified")}
               for variant, entry in (r.get("targets") or {}).items()}
    return {"targets": targets} if targets else {}


def _release(ref: dict[str, Any], releases: list[dict[str, Any]], i: int) -> dict[str, Any]:
    r = releases[i]
    if unread := {"rocm_gfx_targets", "xpu"} & set(r):  # a minor's facts: rocm_variants / xpu.per_minor hold them
        raise SystemExit(f"torch {r['version']}: {', '.join(sorted(unread))} are read per torch minor "
                         "(rocm_variants[].gfx_targets_by_minor, xpu.per_minor), not per release")
    py = r["python"]["pypi_wheels_by_platform"]
    tags = r["pypi_platform_tags"]
    variants: dict[str, list[str]] = {}
    for platform, labels in r["index_variants"].items():
        if platform.startswith("macos"):
            continue
        variants[platform] = sorted(labels, key=_variant_order)
    for platform in ("macos_arm64", "macos_x86_64"):
        if platform in py:
            variants[platform] = ["default"]
    pypi = {}
    for platform, row in r["pypi_default"].items():
        if not isinstance(row, dict):
            continue
        if platform.startswith("macos"):
            pypi[platform] = "default"
        else:
            pypi[platform] = row.get("variant_equivalent") or "cpu"
    cuda: dict[str, dict[str, Any]] = {}
    for platform, labels in variants.items():
        for variant in labels:
            if not variant.startswith("cu"):
                continue
            entry = (r.get("cuda_arch_lists") or {}).get(platform, {}).get(variant)
            override = ARCH_OVERRIDES.get((r["version"], platform, variant))
            arch = dict(override) if override else _arch_entry(entry) if entry else _fill_arch(releases, i, platform,
                                                                                               variant)
            if arch:
                cuda.setdefault(platform, {})[variant] = arch
    rocm = {}
    for variant in r.get("rocm_variants") or []:
        by_minor = ref["rocm_variants"].get(variant, {}).get("gfx_targets_by_minor", {}).get(r["minor"])
        if by_minor and by_minor.get("targets"):
            rocm[variant] = {"gfx": by_minor["targets"], "conf": by_minor.get("confidence", "unverified")}
        else:
            rocm[variant] = {"gfx": None, "conf": "unverified"}
    comp = r["companions"]
    files = _default_index_files()
    python = {p: list(v) for p, v in py.items()}
    for platform, extra in INDEX_ONLY_PYTHON.get(r["version"], {}).items():
        python[platform] = python.get(platform, []) + [x for x in extra if x not in python.get(platform, [])]
    glibc = {p: g for p, t in tags.items() if p.startswith("linux") and (g := _glibc(t))}
    if glibc.get("linux_x86_64") and _key(glibc["linux_x86_64"]) < _key(TORCH_GLIBC_FLOOR):
        glibc["linux_x86_64"] = TORCH_GLIBC_FLOOR
    companions = {k: v for k in ("torchvision", "torchaudio") if (v := comp.get(f"{k}_recommended"))}
    out: dict[str, Any] = {
        "v": r["version"],
        "date": r["release_date"],
        "requires_python": r["python"]["requires_python"],
        "python": python,
        "glibc": glibc,
        "macos": {p: m for p, t in tags.items() if p.startswith("macos") and (m := _macos(t))},
        "macos_python": _macos_by_python(files["torch"], r["version"]),
        "mps": _mps_macos(r["version"]),
        "variants": variants,
        "variants_conf": r.get("index_variants_confidence", "unverified"),
        "secondary": r.get("index_variants_secondary_only") or [],
        "pypi": pypi,
        "stable_cuda": r.get("stable_cuda_variant"),
        "cuda": cuda,
        "rocm": rocm,
        "xpu": _xpu(ref["xpu"]["per_minor"].get(r["minor"])),
        **_targets(r),
        "companions": companions,
        "companion_gaps": _companion_gaps(files, companions, python),  # the index-only Pythons too
    }
    out["companion_macos"] = _companion_macos(files, companions, out["macos"], out["macos_python"])
    out["companion_python"] = _companion_patch_exclusions(companions)
    return out


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _variant_order(label: str) -> tuple[int, tuple[int, ...]]:
    kind = 0 if label == "cpu" else 1 if label.startswith("cu") else 2 if label.startswith("rocm") else 3
    nums = tuple(int(x) for x in re.findall(r"\d+", label))
    return kind, nums


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


METADATA = DEFAULT_INDEX_PAGES / "metadata"


def decoupled_companions(built: list[dict[str, Any]], metadata: Path = METADATA) -> dict[str, Any]:
    """Companion releases whose wheels pin no one torch (their captured METADATA has no ``Requires-Dist: torch``,
    or an open range such as ``torch>=2.11``): each goes with every torch from its floor (the range's lower bound,
    else the oldest release naming it as its match), not with one release alone. Each carries its own wheels'
    facts, which decide where it installs beside another torch: the Python tags and macOS floors of its files on
    the default index, and the variants of the releases it is the match of (the builds its release cycles made)."""
    from packaging.requirements import Requirement

    files = _default_index_files()
    out: dict[str, Any] = {}
    for path in sorted(metadata.glob("*.metadata")):
        name, version = path.name.split("-")[:2]
        if name not in ("torchvision", "torchaudio") or version in out.get(name, {}):
            continue
        torch = [req for line in path.read_text(encoding="utf-8").splitlines()
                 if line.lower().startswith("requires-dist:")
                 and (req := Requirement(line.split(":", 1)[1].strip())).name == "torch"]
        if any(spec.operator in ("==", "===", "~=") or spec.operator.startswith("<")
               for req in torch for spec in req.specifier):
            continue
        floors = [spec.version for req in torch for spec in req.specifier if spec.operator in (">=", ">")]
        home = [r for r in built if r.get("companions", {}).get(name) == version]
        if floors:
            floor = max(floors, key=_version_key)
            floor, conf = (floor if floor.count(".") >= 2 else f"{floor}.0"), "verified"
            said = f"its METADATA: Requires-Dist: {torch[0]}"
        elif home:
            floor, conf = min((r["v"] for r in home), key=_version_key), "inferred"
            said = (f"its METADATA names no torch: from the oldest release whose match it is, by version number "
                    f"({floor})")
        else:
            continue
        row: dict[str, Any] = {"torch_from": floor, "conf": conf, "src": [f"default index: {name} {version} ({said})"]}
        row.update(_companion_wheels(name, files.get(name, []), version))
        row["variants"] = _home_variants(home)
        row["variants_conf"] = "derived"
        row["variants_src"] = ("the variant sets of torch " + ", ".join(r["v"] for r in reversed(home))
                               + ", whose match it is (the builds of their release cycles)")
        out.setdefault(name, {})[version] = row
    return out


def _companion_wheels(name: str, files: list[tuple[str, Any, str]], version: str) -> dict[str, Any]:
    """``python`` (platform -> the CPython tags of its wheels, ["*"] for a py3 wheel), ``macos`` (macOS platform ->
    Python or "*" -> the lowest macOS its wheels need) and ``requires_python`` of one companion release."""
    pythons: dict[str, set[str]] = {}
    macos: dict[str, dict[str, tuple[int, int]]] = {}
    for v, tags, _ in files:
        if v != version:
            continue
        for tag in tags:
            platform = _platform_of(tag.platform)
            if platform is None:
                continue
            python = _python_of(tag) or "*"
            pythons.setdefault(platform, set()).add(python)
            if m := re.match(r"macosx_(\d+)_(\d+)_", tag.platform):
                seen = macos.setdefault(platform, {})
                seen[python] = min(seen.get(python, (int(m[1]), int(m[2]))), (int(m[1]), int(m[2])))
    out: dict[str, Any] = {
        "python": {p: sorted(v, key=_python_order) for p, v in sorted(pythons.items())},
        "macos": {p: {py: f"{f[0]}.{f[1]}" for py, f in sorted(by.items(), key=lambda x: _python_order(x[0]))}
                  for p, by in sorted(macos.items())}}
    page = json.loads((DEFAULT_INDEX_PAGES / f"{name}.json").read_text(encoding="utf-8"))
    specs = {e.get("requires-python") or "" for e in page["files"] if e["filename"].startswith(f"{name}-{version}-")}
    if len(specs - {""}) == 1:
        out["requires_python"] = (specs - {""}).pop()
    return out


def _python_order(python: str) -> tuple[int, ...]:
    return (0,) if python == "*" else (*_version_key(python.rstrip("t")), python.endswith("t"))


def _home_variants(home: list[dict[str, Any]]) -> dict[str, list[str]]:
    """platform -> the variants of the releases a companion release is the match of, together."""
    out: dict[str, set[str]] = {}
    for release in home:
        for platform, labels in release["variants"].items():
            out.setdefault(platform, set()).update(labels)
    return {p: sorted(v, key=_variant_order) for p, v in sorted(out.items())}


def build(ref: dict[str, Any]) -> dict[str, Any]:
    releases = sorted(ref["releases"], key=lambda r: _version_key(r["version"]))
    built = [_release(ref, releases, i) for i in range(len(releases))]
    built.reverse()  # newest first
    return {
        "schema": SCHEMA,
        "generated": ref["meta"]["generated"],
        "confidence_levels": list(ref["confidence_levels"]),
        "sources": {k: v.get("locator", "") for k, v in ref["sources"].items()},
        "index": {"base": ref["index_layout"]["base"],
                  "channels": {"stable": "", "test": "test", "nightly": "nightly"},
                  "pre_release_channels": ["nightly"]},
        "cuda": {"families": _cuda_families(ref), "gpu_driver_floor": GPU_DRIVER_FLOOR,
                 "gpu_driver_last": GPU_DRIVER_LAST},
        "rocm": {"aliases": GFX_ALIASES, "aliases_conf": "secondary", "platforms": ["linux_x86_64"]},
        "jetson": {"sbsa_from_l4t": "38", "sbsa_from_sm": "110", "conf": "inferred",
                   "wheels": "NVIDIA's Jetson wheels (JetPack redist or the Jetson AI Lab index)"},
        "companion_labels": COMPANION_LABELS,
        "decoupled_companions": decoupled_companions(built),
        "platform_notes": PLATFORM_NOTES,
        "unverified": ref["unverified"],
        "earlier": _earlier_releases(releases[0]["version"]),
        "releases": built,
    }


def _earlier_releases(oldest: str) -> list[str]:
    """The torch releases older than the matrix's oldest, newest first, as the captured default index page lists
    them (their versions only: a pin or a package's need of one is planned on assumed facts)."""
    from packaging.version import Version

    page = json.loads((DEFAULT_INDEX_PAGES / "torch.json").read_text(encoding="utf-8"))
    older = [v for v in page["versions"] if Version(v) < Version(oldest) and not Version(v).is_prerelease]
    return sorted(older, key=Version, reverse=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, nargs="?", default=DEFAULT_REFERENCE,
                        help=f"reference torch-matrix.json (default {DEFAULT_REFERENCE.relative_to(HERE.parent)})")
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        ref = json.loads(args.reference.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"{args.reference}: cannot read reference matrix ({exc})", file=sys.stderr)
        return 2
    data = build(ref)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes, {len(data['releases'])} releases)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
