#!/usr/bin/env python3
"""Check the embedded matrix and the shipped fact tables against recorded evidence; print each disagreement.

    python scripts/audit_matrix.py                        # the committed evidence (scripts/reference)
    python scripts/audit_matrix.py --pages DIR            # default-index pages captured elsewhere
    python scripts/audit_matrix.py --index URL            # a live index, or a loopback replica of one
    python scripts/audit_matrix.py --list                 # the fact classes checked, and against what

Every class is checked both ways where its evidence allows: each fact of the table must have its evidence, and
each piece of evidence must have its fact. The evidence is read by this script's own code (nothing of the matrix
builder is imported); each file under scripts/reference is written by a committed capture script:

- the default index's pages of torch, torchvision and torchaudio and their wheels' METADATA
  (``capture_default_index.py``);
- the release branches' build matrix (``evidence/release-builds.json``, ``capture_release_builds.py``);
- ``evidence/facts.json``: facts with a named source that no page shows (the glibc floor of PyTorch's build
  images);
- pci.ids (``pci-ids/devices.ids``, ``build_pci_tables.py``) and Linux's Intel PCI id lists with pci.ids' Intel
  GPU names (``evidence/intel-pciids.json``, ``capture_intel_pciids.py``);
- NVIDIA's compute capability → architecture list and clang's first CUDA toolkit per architecture
  (``evidence/cuda-archs.json``, ``capture_cuda_archs.py``);
- NVIDIA's supported-gpus.json (each device's last driver branch) and CUTLASS's first CUDA toolkit per Blackwell
  capability (``evidence/nvidia-drivers.json``, ``capture_nvidia_drivers.py``);
- intel/torch-xpu-ops' default AOT device lists per release branch (``evidence/xpu-aot.json``,
  ``capture_xpu_aot.py``);
- AMD's graphics IP version of each product series and amdkfd's gfx target of each version
  (``evidence/amd-gfx.json``, ``capture_amd_gfx.py``);
- the cloud providers' instance type tables: AWS, Google Cloud, Azure (``evidence/cloud-gpus.json``,
  ``capture_cloud_gpus.py``).

Every other ``scripts/audit_*.py`` module is run too (its ``main([])``: what it prints when it disagrees). What has no
evidence here is listed in docs/matrix.md with the reason. Exit 1 on any disagreement, 0 when everything agrees,
2 when the evidence cannot be read.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from torch_install.resolver.matrix import Matrix, load_matrix  # noqa: E402

REFERENCE = HERE / "reference"
EVIDENCE = REFERENCE / "evidence"
PAGES = REFERENCE / "default-index"
ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_BYTES = 32 << 20
TAG_PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows_x86_64", "macos_arm64", "macos_x86_64")
PACKAGE = HERE.parent / "src" / "torch_install"
# the shipped tables the classes below read, by the name the checks use
TABLES = {"nvidia": "detectors/data/nvidia-pci.json", "amd": "detectors/data/amd-pci.json",
          "intel": "detectors/data/intel-pci.json", "names": "detectors/data/gpu-names.json",
          "jetson": "detectors/data/jetson.json", "toolkits": "data/cuda-toolkit-drivers.json"}


class Evidence:
    """Everything the audit compares with, read once."""

    def __init__(self, pages: dict[str, dict[str, Any]], metadata: dict[str, str], builds: dict[str, Any],
                 facts: dict[str, Any], pci_ids: str, intel_pciids: dict[str, Any] | None = None,
                 archs: dict[str, Any] | None = None,
                 cloud: dict[str, Any] | None = None, reference: dict[str, Any] | None = None,
                 drivers: dict[str, Any] | None = None, xpu_aot: dict[str, Any] | None = None,
                 amd: dict[str, Any] | None = None, jetson_containers: dict[str, Any] | None = None) -> None:
        self.pages, self.metadata, self.builds, self.facts, self.pci_ids = pages, metadata, builds, facts, pci_ids
        self.intel_pciids = intel_pciids or {"macros": {}, "pci_ids": {}}
        self.archs, self.cloud = archs or {}, cloud or {}
        self.reference = reference or {}
        self.drivers = drivers or {"devices": {}, "first_toolkit": {}}
        self.xpu_aot = xpu_aot or {"minors": {}}
        self.amd = amd or {"gc_gfx": {}, "asic_gfx": {}, "apus": [], "dgpus": []}
        self.jetson_modules: dict[str, str] = ((jetson_containers or {}).get("files", {})
                                               .get("jetson_containers/l4t_version.py", {})
                                               .get("module_compute_capability", {}))
        self._wheels: dict[str, list[tuple[str, list[Any], dict[str, Any]]]] = {}
        self._files: dict[tuple[str, str], dict[str, Any]] = {}

    def wheels(self, project: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
        """(version, tags, page entry) of each wheel of a project's page that is not yanked, read once."""
        if project not in self._wheels:
            self._wheels[project] = _wheels(self.pages[project])
        return self._wheels[project]

    def files(self, project: str, version: str) -> dict[str, Any]:
        """What one release's wheels say (``_files``), worked out once."""
        if not self._files:
            for name in self.pages:
                by_version: dict[str, list[tuple[list[Any], dict[str, Any]]]] = {}
                for v, tags, entry in self.wheels(name):
                    by_version.setdefault(v, []).append((tags, entry))
                for v, rows in by_version.items():
                    self._files[(name, v)] = _files(rows)
        return self._files.get((project, version)) or _files([])

    def requires(self, name: str, version: str) -> list[Any] | None:
        """The ``Requires-Dist: torch`` requirements of a companion release's captured METADATA (None: none
        captured)."""
        from packaging.requirements import Requirement

        text = next((t for n, t in self.metadata.items() if n.startswith(f"{name}-{version}-")), None)
        if text is None:
            return None
        return [r for line in re.findall(r"(?im)^Requires-Dist:\s*(.+)$", text)
                if (r := Requirement(line)).name == "torch" and not r.marker]


def read_evidence(pages_dir: Path | None = None, index: str | None = None) -> Evidence:
    pages = {}
    for project in ("torch", "torchvision", "torchaudio"):
        if index:
            url = urllib.parse.urljoin(index.rstrip("/") + "/", f"{project}/")
            request = urllib.request.Request(url, headers={"Accept": ACCEPT})
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
                body = response.read(MAX_BYTES + 1)
            if len(body) > MAX_BYTES:
                raise OSError(f"{url}: larger than {MAX_BYTES >> 20} MiB")
            pages[project] = json.loads(body)
        else:
            pages[project] = json.loads(((pages_dir or PAGES) / f"{project}.json").read_text(encoding="utf-8"))
    metadata = {p.name[:-len(".metadata")]: p.read_text(encoding="utf-8")
                for p in (PAGES / "metadata").glob("*.metadata")}
    return Evidence(pages, metadata, _json(EVIDENCE / "release-builds.json"), _json(EVIDENCE / "facts.json"),
                    (REFERENCE / "pci-ids" / "devices.ids").read_text(encoding="utf-8"),
                    _json(EVIDENCE / "intel-pciids.json"),
                    _json(EVIDENCE / "cuda-archs.json"), _json(EVIDENCE / "cloud-gpus.json"),
                    _json(REFERENCE / "torch-matrix.json"), _json(EVIDENCE / "nvidia-drivers.json"),
                    _json(EVIDENCE / "xpu-aot.json"), _json(EVIDENCE / "amd-gfx.json"),
                    _json(REFERENCE / "vendor" / "jetson-containers.json"))


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read_tables() -> dict[str, Any]:
    return {name: _json(PACKAGE / path) for name, path in TABLES.items()}


# -- wheel names, read here -------------------------------------------------------------------------------------
def _wheels(page: dict[str, Any]) -> list[tuple[str, list[Any], dict[str, Any]]]:
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    rows = []
    for entry in page["files"]:
        try:
            _, version, _, tags = parse_wheel_filename(entry["filename"])
        except InvalidWheelFilename:
            continue
        if not entry.get("yanked"):
            rows.append((str(version), list(tags), entry))
    return rows


def _platform(tag: str) -> str | None:
    machine = next((m for m in ("x86_64", "aarch64", "arm64", "amd64") if tag.endswith(m)), None)
    if tag.startswith(("manylinux", "linux")) and machine in ("x86_64", "aarch64"):
        return f"linux_{machine}"
    if tag == "win_amd64":
        return "windows_x86_64"
    if tag.startswith("macosx") and machine in ("arm64", "x86_64"):
        return f"macos_{machine}"
    return None


def _python(tag: Any) -> str | None:
    if not tag.interpreter.startswith("cp") or tag.abi == "abi3":
        return None
    digits = tag.interpreter[2:].rstrip("t")
    return f"{digits[0]}.{digits[1:]}" + ("t" if tag.abi.endswith("t") or tag.interpreter.endswith("t") else "")


def _glibc(tag: str) -> tuple[int, int] | None:
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    if m := re.match(r"manylinux_(\d+)_(\d+)_", tag):
        return int(m[1]), int(m[2])
    return next((v for k, v in legacy.items() if tag.startswith(k + "_")), None)


def _macos(tag: str) -> tuple[int, int] | None:
    m = re.match(r"macosx_(\d+)_(\d+)_", tag)
    return (int(m[1]), int(m[2])) if m else None


def _text(pair: tuple[int, int] | None) -> str | None:
    return f"{pair[0]}.{pair[1]}" if pair else None


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version))


def _cu(version: str) -> str:
    return "cu" + version.replace(".", "")


def _files(rows: list[tuple[list[Any], dict[str, Any]]]) -> dict[str, Any]:
    """What the wheels of one release say: platform -> Python tags (None: a py3 wheel), platform -> Python ("*":
    a py3 wheel) -> lowest macOS, platform -> lowest glibc, and the Requires-Python values."""
    pythons: dict[str, set[str | None]] = {}
    macos: dict[str, dict[str, tuple[int, int]]] = {}
    glibc: dict[str, tuple[int, int]] = {}
    requires: set[str] = set()
    for tags, entry in rows:
        requires.add(entry.get("requires-python") or "")
        for tag in tags:
            platform, python = _platform(tag.platform), _python(tag)
            if platform is None:
                continue
            pythons.setdefault(platform, set()).add(python)
            if floor := _glibc(tag.platform):
                glibc[platform] = min(glibc.get(platform, floor), floor)
            if floor := _macos(tag.platform):
                seen = macos.setdefault(platform, {})
                seen[python or "*"] = min(seen.get(python or "*", floor), floor)
    return {"python": pythons, "macos": macos, "glibc": glibc, "requires": requires}


# -- the classes ------------------------------------------------------------------------------------------------
class Context:
    """One audit: the matrix, the evidence and the shipped tables, each read once."""

    def __init__(self, matrix: Matrix, evidence: Evidence, tables: dict[str, Any]) -> None:
        self.matrix, self.evidence, self.tables = matrix, evidence, tables
        self.torch = {r.version: evidence.files("torch", r.version) for r in matrix.releases}

    def branch(self, version: str) -> dict[str, Any]:
        return self.evidence.builds["releases"].get(".".join(version.split(".")[:2]), {})

    def index_only(self, version: str, platform: str) -> set[str]:
        """The Pythons the release branch builds for torch beyond the default index's wheels and releases (its
        release channel keeps them; a test-channel Python it keeps out is not released): Linux only."""
        if not platform.startswith("linux"):
            return set()
        branch = self.branch(version)
        built = {*branch.get("python", ()), *branch.get("preview_python", ())}
        released = {*branch.get("release_python", branch.get("python", ())),
                    *branch.get("preview_release_python", ())}
        on_index = {p for p in self.torch[version]["python"].get(platform, set()) if p}
        return (built & released) - on_index


Check = Callable[[Context], list[str]]
CLASSES: dict[str, tuple[str, str, Check]] = {}  # name -> (facts, evidence, check)


def check(name: str, facts: str, evidence: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CLASSES[name] = (facts, evidence, function)
        return function
    return register


@check("releases", "which torch releases the matrix has", "the default index's torch page")
def _releases(ctx: Context) -> list[str]:
    on_index = {v for v, _, _ in ctx.evidence.wheels("torch") if re.fullmatch(r"\d+\.\d+\.\d+", v)}
    known = {r.version for r in ctx.matrix.releases}
    low, high = min(known, key=_key), max(known, key=_key)
    out = [f"torch {v}: on the default index, not in the matrix (its releases: {low}–{high})"
           for v in sorted(on_index - known, key=_key) if _key(v) >= _key(low)]
    out += [f"torch {v}: in the matrix, not on the default index" for v in sorted(known - on_index, key=_key)]
    return out


@check("release-date", "each release's date", "the first upload time of its files on the default index")
def _dates(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        uploads = [e.get("upload-time", "")[:10] for v, _, e in ctx.evidence.wheels("torch") if v == release.version]
        if uploads and min(uploads) != release.date:
            out.append(f"torch {release.version}: date {release.date} in the matrix, first upload {min(uploads)}")
    return out


@check("requires-python", "Requires-Python of each release", "the default index's file entries")
def _requires_python(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        requires = ctx.torch[release.version]["requires"]
        if requires and release.requires_python not in requires:
            out.append(f"torch {release.version}: Requires-Python {release.requires_python!r} in the matrix, "
                       f"{sorted(requires)} on the index")
    return out


@check("python-tags", "the Python tags of each release per platform, with the Pythons only the PyTorch index "
                      "has (both directions)",
       "the default index's wheel tags; the release branch's Python lists (test channel built, release channel "
       "kept)")
def _python_tags(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        seen = ctx.torch[release.version]["python"]
        for platform in TAG_PLATFORMS:
            have = set(release.python_tags(platform))
            there = {p for p in seen.get(platform, set()) if p}
            want = there | ctx.index_only(release.version, platform)
            if have != want:
                out.append(f"torch {release.version} {platform}: Pythons {sorted(have)} in the matrix, "
                           f"{sorted(there)} on the index" + (
                               f", {sorted(want - there)} on the PyTorch index only (the release branch)"
                               if want != there else ""))
    return out


@check("glibc", "the glibc floor per Linux platform",
       "the manylinux tags, and the Linux x86_64 floor of PyTorch's build images (evidence/facts.json)")
def _glibc_floor(ctx: Context) -> list[str]:
    out = []
    least = ctx.evidence.facts["glibc_floor"]
    for release in ctx.matrix.releases:
        for platform, floor in ctx.torch[release.version]["glibc"].items():
            major, minor = (int(x) for x in least.get(platform, "0.0").split("."))
            need = _text(max(floor, (major, minor)))
            if need != release.glibc.get(platform):
                out.append(f"torch {release.version} {platform}: glibc {release.glibc.get(platform)} in the matrix, "
                           f"{need} from the wheels' tags and the build images' floor")
        for platform in set(release.glibc) - set(ctx.torch[release.version]["glibc"]):
            if ctx.torch[release.version]["python"]:
                out.append(f"torch {release.version} {platform}: glibc {release.glibc[platform]} in the matrix, "
                           "no manylinux wheel on the index")
    return out


@check("macos", "the macOS floor per platform and per Python tag", "the macosx tags")
def _macos_floor(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        macos = ctx.torch[release.version]["macos"]
        for platform, by_python in macos.items():
            if _text(min(by_python.values())) != release.macos.get(platform):
                out.append(f"torch {release.version} {platform}: macOS {release.macos.get(platform)} in the matrix, "
                           f"{_text(min(by_python.values()))} on the index")
            for python, floor in by_python.items():
                if release.macos_floor(platform, python) != _text(floor):
                    out.append(f"torch {release.version} {platform} Python {python}: macOS "
                               f"{release.macos_floor(platform, python)} in the matrix, {_text(floor)} on the index")
        for platform in set(release.macos) - set(macos):
            out.append(f"torch {release.version} {platform}: macOS {release.macos[platform]} in the matrix, no "
                       "macOS wheel on the index")
    return out


def _default_build(ctx: Context, version: str, platform: str) -> str | None:
    """The default index's build of a release on a platform, from its METADATA's CUDA pins (None: no METADATA
    captured)."""
    from packaging.markers import Marker
    from packaging.utils import parse_wheel_filename

    for name, text in ctx.evidence.metadata.items():
        if not name.startswith(f"torch-{version}-"):
            continue
        if _platform(min(parse_wheel_filename(name)[3], key=str).platform) != platform:
            continue
        env = {"platform_system": "Windows" if platform.startswith("windows") else "Linux",
               "sys_platform": "win32" if platform.startswith("windows") else "linux",
               "platform_machine": {"linux_x86_64": "x86_64", "linux_aarch64": "aarch64"}.get(platform, "AMD64"),
               "python_version": "3.12", "python_full_version": "3.12.0", "extra": ""}
        for line in re.findall(r"(?im)^Requires-Dist:\s*(.+)$", text):
            requirement, _, marker = line.partition(";")
            # "==12.8.90", or in torch 2.6 and older "(==12.4.127)"
            m = re.match(r"(?:nvidia-cuda-runtime(?:-cu\d+)?|cuda-toolkit(?:\[[^\]]*\])?)\s*\(?\s*==\s*(\d+)\.(\d+)",
                         requirement.strip(), re.IGNORECASE)
            if m and (not marker.strip() or Marker(marker.strip()).evaluate(env)):
                return f"cu{m[1]}{m[2]}"
        return "cpu"
    return None


@check("default-build", "the variant the default index's wheel equals, per platform",
       "the wheels' METADATA (CUDA pins where their markers hold)")
def _default_builds(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        for platform in ("linux_x86_64", "linux_aarch64", "windows_x86_64"):
            build = _default_build(ctx, release.version, platform)
            if build is not None and release.pypi.get(platform) != build:
                out.append(f"torch {release.version} {platform}: the default index's build is "
                           f"{release.pypi.get(platform)} in the matrix, {build} by its METADATA")
    return out


# ocloc's IP-version device names (the others name a platform, whose Linux PCI id macro the Intel table lists):
# Xe-LPG is Meteor Lake's GPU, Xe2-LPG Lunar Lake's, Xe2-HPG Battlemage's (Linux's pciids.h platforms of those IPs)
XPU_IP_MACROS = {"xe-lpg": "INTEL_MTL_IDS", "xe2-lpg": "INTEL_LNL_IDS", "xe2-hpg": "INTEL_BMG_IDS"}


def _xpu_family(ctx: Context, device: str) -> str | None:
    """The Intel table's family of an ocloc AOT device name: "mtl-h" -> INTEL_MTL_IDS -> meteor-lake ("ats-m150"
    -> INTEL_ATS_M_IDS)."""
    platform = re.sub(r"[0-9]+$", "", device) if device.startswith("ats-") else device.split("-")[0]
    macro = XPU_IP_MACROS.get(device, f"INTEL_{platform.upper().replace('-', '_')}_IDS")
    return next((name for name, row in ctx.tables["intel"]["families"].items() if macro in row.get("macros", ())),
                None)


@check("xpu-families", "the Intel GPU families each release's XPU build compiles for, per OS, and their label (both "
                       "directions)",
       "intel/torch-xpu-ops cmake/BuildFlags.cmake at each release/2.N branch: its default AOT device list per OS "
       "(evidence/xpu-aot.json), each device's family by the Intel table's PCI id macros")
def _xpu_families(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        minor = ".".join(release.version.split(".")[:2])
        lists = ctx.evidence.xpu_aot["minors"].get(minor)
        xpu = release.xpu
        builds = ctx.branch(release.version).get("xpu", lists is not None)
        if lists is None or not builds:
            if xpu is not None and xpu.confidence not in ("inferred", "unverified"):
                out.append(f"torch {release.version}: XPU families labelled {xpu.confidence} in the matrix, no "
                           "release branch of torch-xpu-ops sets them")
            continue
        if xpu is None:
            out.append(f"torch {release.version}: no XPU families in the matrix, torch-xpu-ops release/{minor} "
                       f"compiles for {lists['linux']} (Linux)")
            continue
        for os_, mine in ((o, xpu.families.get(o, ())) for o in ("linux", "windows")):
            devices = lists[os_]
            want = {f for d in devices if (f := _xpu_family(ctx, d))}
            unknown = [d for d in devices if _xpu_family(ctx, d) is None]
            if set(mine) != want or unknown:
                out.append(f"torch {release.version} {os_}: XPU families {sorted(mine)} in the matrix, {sorted(want)} "
                           f"by torch-xpu-ops release/{minor} ({','.join(devices)})"
                           + (f"; no family for {unknown}" if unknown else ""))
        if xpu.confidence != "source-file":
            out.append(f"torch {release.version}: XPU families labelled {xpu.confidence} in the matrix, read from "
                       f"torch-xpu-ops release/{minor} (source-file)")
    return out


def branch_variants(branch: dict[str, Any]) -> dict[str, set[str]]:
    """platform -> the variants a release branch builds: Linux x86_64 its CUDA (and the CUDA its code adds for
    Linux), ROCm and xpu; Linux aarch64 its aarch64 CUDA list; Windows its CUDA without those it has no Windows
    build of, and xpu; every platform cpu."""
    xpu = {"xpu"} if branch.get("xpu") else set()
    out = {"linux_x86_64": {"cpu", *xpu, *map(_cu, [*branch.get("cuda", ()), *branch.get("linux_extra_cuda", ())]),
                            *(f"rocm{r}" for r in branch.get("rocm", ()))},
           "windows_x86_64": {"cpu", *xpu, *(_cu(c) for c in branch.get("cuda", ())
                                             if c not in branch.get("cuda_no_windows", ()))}}
    if "cuda_aarch64" in branch:
        out["linux_aarch64"] = {"cpu", *map(_cu, [*branch["cuda_aarch64"], *branch.get("aarch64_extra_cuda", ())])}
    return out


@check("variants", "the variant set of each release on Linux x86_64, Linux aarch64 and Windows (CUDA, ROCm, xpu)",
       "the release branch's test channel: its tip builds the minor's newest patch release exactly; an older one "
       "within it, or beyond it only by variants the matrix marks as resting on a secondary source")
def _variants(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        branch = ctx.branch(release.version)
        if not branch:
            continue
        minor = release.version.split(".")[:2]
        newest = max((r.version for r in ctx.matrix.releases if r.version.split(".")[:2] == minor), key=_key)
        for platform, built in branch_variants(branch).items():
            have = set(release.variants(platform))
            extra, missing = have - built, built - have
            ok = not extra and not missing if release.version == newest else extra <= set(release.secondary)
            if not ok:
                out.append(f"torch {release.version} {platform}: variants {sorted(have)} in the matrix, "
                           f"{sorted(built)} built by the release branch")
    return out


@check("stable-cuda", "each release's default CUDA variant",
       "the release branch's stable CUDA, unless the default index's Linux x86_64 wheel is a CUDA build (then "
       "that build)")
def _stable_cuda(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        build = _default_build(ctx, release.version, "linux_x86_64")
        stable = ctx.branch(release.version).get("stable_cuda")
        want = build if build and build.startswith("cu") else _cu(stable) if stable else None
        if want and release.stable_cuda != want:
            out.append(f"torch {release.version}: stable CUDA {release.stable_cuda} in the matrix, {want} by the "
                       "default index's build and the release branch")
    return out


def _torch_pythons(ctx: Context, release: Any) -> dict[str, set[str]]:
    """platform -> every Python the release has wheels for (the default index's, and those only the PyTorch index
    has)."""
    seen = ctx.torch[release.version]["python"]
    return {p: {x for x in seen.get(p, set()) if x} | ctx.index_only(release.version, p) for p in TAG_PLATFORMS
            if seen.get(p)}


def _gaps(ctx: Context, release: Any, files: dict[str, Any]) -> dict[str, list[str]]:
    """platform -> the Pythons torch has wheels for and a cp-tagged companion release has none (a Python only the
    PyTorch index has gets no companion: the release branch builds those for torch alone)."""
    gaps = {}
    for platform, pythons in _torch_pythons(ctx, release).items():
        got = files["python"].get(platform, set())
        if got and None not in got and (missing := sorted(p for p in pythons if p not in got)):
            gaps[platform] = missing
    return gaps


@check("companion-pairing", "the torchvision/torchaudio version that matches each release",
       "the companion's page (it exists) and METADATA (what it requires of torch)")
def _pairing(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        for name, version in release.companions.items():
            if not any(v == version for v, _, _ in ctx.evidence.wheels(name)):
                out.append(f"torch {release.version}: {name} {version} is not on the default index")
                continue
            pins = ctx.evidence.requires(name, version) or []
            if pins and not all(r.specifier.contains(release.version, prereleases=True) for r in pins):
                out.append(f"torch {release.version}: paired with {name} {version}, which requires "
                           f"{', '.join(str(r) for r in pins)} (its METADATA)")
    return out


@check("companion-gaps", "the Pythons a release's companion has no wheels for, per platform (with the Pythons "
                         "only the PyTorch index has torch wheels for)",
       "the companion's wheel tags; the release branch's torch-only Pythons")
def _companion_gaps(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        for name, version in release.companions.items():
            gaps = _gaps(ctx, release, ctx.evidence.files(name, version))
            torch_only = set(ctx.branch(release.version).get("torch_only_python", ()))
            mine = {p: sorted(x) for p, x in release.companion_gaps.get(name, {}).items()}
            if mine != gaps:
                out.append(f"torch {release.version}: {name} {version} lacks Pythons {gaps} on the index, the matrix "
                           f"says {mine}")
            for platform, pythons in mine.items():
                if (beyond := set(pythons) & ctx.index_only(release.version, platform)) - torch_only:
                    out.append(f"torch {release.version}: {name} {version} has no wheels for {sorted(beyond)}, "
                               "which the release branch does not build for torch alone")
    return out


@check("companion-macos", "the macOS a release's companion needs where more than torch's wheel for the same "
                          "Python", "the companion's macosx tags")
def _companion_macos(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        for name, version in release.companions.items():
            files = ctx.evidence.files(name, version)
            want: dict[str, dict[str, str]] = {}
            for platform, by_python in files["macos"].items():
                for python, floor in by_python.items():
                    torch_need = release.macos_floor(platform, python if python != "*" else None)
                    if torch_need is None or _key(_text(floor) or "") > _key(torch_need):
                        want.setdefault(platform, {})[python] = _text(floor) or ""
            mine = {p: dict(v) for p, v in release.companion_macos.get(name, {}).items()}
            if mine != want:
                out.append(f"torch {release.version}: {name} {version} needs macOS {want} by its wheels, the matrix "
                           f"says {mine}")
    return out


@check("companion-python", "the Python patch releases a release's companion excludes",
       "the companion's Requires-Python (!= clauses) on the default index")
def _companion_python(ctx: Context) -> list[str]:
    out = []
    for release in ctx.matrix.releases:
        for name, version in release.companions.items():
            specs = ctx.evidence.files(name, version)["requires"]
            excluded = sorted({m for spec in specs for m in re.findall(r"!=\s*(3\.[0-9]+\.[0-9]+)", spec)})
            mine = sorted(release.companion_python.get(name, ()))
            if mine != excluded:
                out.append(f"torch {release.version}: {name} {version} excludes Pythons {excluded} by its "
                           f"Requires-Python, the matrix says {mine}")
    return out


def _decoupled_on_index(ctx: Context) -> dict[str, dict[str, list[Any]]]:
    """name -> version -> its torch requirements, for every captured companion METADATA that pins no one torch
    (no torch requirement, or only lower bounds)."""
    out: dict[str, dict[str, list[Any]]] = {}
    for file in ctx.evidence.metadata:
        name, version = file.split("-")[:2]
        if name == "torch" or version in out.get(name, {}):
            continue
        pins = ctx.evidence.requires(name, version) or []
        if not any(s.operator in ("==", "===", "~=") or s.operator.startswith("<") for r in pins for s in r.specifier):
            out.setdefault(name, {})[version] = pins
    return out


def _homes(ctx: Context, name: str, version: str) -> list[Any]:
    return [r for r in ctx.matrix.releases if r.companions.get(name) == version]


@check("decoupled-existence", "which companion releases pin no one torch",
       "the captured METADATA of every companion release the matrix pairs")
def _decoupled_existence(ctx: Context) -> list[str]:
    on_index = _decoupled_on_index(ctx)
    have = {(n, v) for n, rows in ctx.matrix.decoupled_companions.items() for v in rows}
    there = {(n, v) for n, rows in on_index.items() for v in rows}
    out = [f"{n} {v}: pins no one torch (its METADATA), not among the matrix's decoupled companions"
           for n, v in sorted(there - have)]
    out += [f"{n} {v}: decoupled in the matrix, but its METADATA "
            + ("is not recorded" if ctx.evidence.requires(n, v) is None else "pins one torch")
            for n, v in sorted(have - there)]
    return out


@check("decoupled-floor", "the first torch each decoupled companion release goes with, and its label",
       "its METADATA's lower bound (verified), else the oldest release whose match it is (inferred, by version "
       "number)")
def _decoupled_floor(ctx: Context) -> list[str]:
    out = []
    on_index = _decoupled_on_index(ctx)
    for name, rows in ctx.matrix.decoupled_companions.items():
        for version, facts in rows.items():
            if version not in on_index.get(name, {}):
                continue
            bounds = [s.version for r in on_index[name][version] for s in r.specifier if s.operator in (">=", ">")]
            if bounds:
                low = max(bounds, key=_key)
                want, label = (low if low.count(".") >= 2 else f"{low}.0"), "verified"
            else:
                homes = _homes(ctx, name, version)
                want, label = (min((r.version for r in homes), key=_key) if homes else "?"), "inferred"
            if (facts.torch_from, facts.confidence) != (want, label):
                out.append(f"{name} {version}: goes with torch from {facts.torch_from} ({facts.confidence}) in the "
                           f"matrix, from {want} ({label}) by its METADATA and the releases it is the match of")
    return out


@check("decoupled-wheels", "each decoupled companion release's Python tags, Requires-Python and macOS floors",
       "its wheel tags and file entries on the default index")
def _decoupled_wheels(ctx: Context) -> list[str]:
    out = []
    for name, rows in ctx.matrix.decoupled_companions.items():
        for version, facts in rows.items():
            files = ctx.evidence.files(name, version)
            pythons = {p: sorted((x or "*" for x in v), key=lambda x: (x != "*", _key(x), x.endswith("t")))
                       for p, v in files["python"].items()}
            mine = {p: sorted(v, key=lambda x: (x != "*", _key(x), x.endswith("t"))) for p, v in facts.python.items()}
            if mine != pythons:
                out.append(f"{name} {version}: Python tags {mine} in the matrix, {pythons} on the index")
            macos = {p: {py: _text(f) for py, f in by.items()} for p, by in files["macos"].items()}
            if {p: dict(v) for p, v in facts.macos.items()} != macos:
                out.append(f"{name} {version}: macOS floors {dict(facts.macos)} in the matrix, {macos} on the index")
            requires = sorted(files["requires"] - {""})
            if (requires[0] if len(requires) == 1 else None) != facts.requires_python:
                out.append(f"{name} {version}: Requires-Python {facts.requires_python!r} in the matrix, {requires} on "
                           "the index")
    return out


@check("decoupled-variants", "the variants each decoupled companion release is built for, per platform",
       "the variant sets of the releases it is the match of (derived: the builds of their release cycles)")
def _decoupled_variants(ctx: Context) -> list[str]:
    out = []
    for name, rows in ctx.matrix.decoupled_companions.items():
        for version, facts in rows.items():
            want: dict[str, set[str]] = {}
            for release in _homes(ctx, name, version):
                for platform in TAG_PLATFORMS:
                    if release.variants(platform):
                        want.setdefault(platform, set()).update(release.variants(platform))
            mine = {p: set(v) for p, v in facts.variants.items()}
            if mine != want or facts.variants_confidence != "derived":
                out.append(f"{name} {version}: variants {_sorted(mine)} ({facts.variants_confidence}) in the matrix, "
                           f"{_sorted(want)} (derived) from the releases it is the match of")
    return out


def _sorted(by: dict[str, set[str]]) -> dict[str, list[str]]:
    return {p: sorted(v) for p, v in sorted(by.items())}


def _pci_lines(pci_ids: str) -> dict[str, dict[str, str]]:
    vendor = None
    lines: dict[str, dict[str, str]] = {"10de": {}, "1002": {}}
    for line in pci_ids.splitlines():
        if line and not line.startswith(("\t", "#")):
            vendor = line[:4]
        elif vendor in lines and (m := re.match(r"^\t([0-9a-f]{4})\s+(.+)$", line)):
            lines[vendor][m[1]] = m[2].strip()
    return lines


# functions of a board that are not its GPU (pci.ids lists them under the same chip code)
NOT_A_GPU = re.compile(r"audio|usb|ucsi|nvswitch|serial bus|switch|upstream port|downstream port|root port|"
                       r"bridge|i2c|smbus", re.IGNORECASE)


@check("pci-nvidia", "the chip of every NVIDIA PCI device id (both directions)", "pci.ids 2026.08.22 excerpt")
def _pci_nvidia(ctx: Context) -> list[str]:
    lines = _pci_lines(ctx.evidence.pci_ids)["10de"]
    devices, chips = ctx.tables["nvidia"]["devices"], ctx.tables["nvidia"]["chips"]
    out = []
    for device, (chip, *_) in devices.items():
        name = lines.get(device)
        if name is None or not name.split()[0].startswith(chip):
            out.append(f"nvidia {device}: chip {chip} in the table, pci.ids says {name!r}")
    for device, name in lines.items():
        token = name.split()[0]
        if device not in devices and not NOT_A_GPU.search(name) and any(token.startswith(c) for c in chips):
            out.append(f"nvidia {device}: pci.ids names a GPU of a known chip ({name!r}), not in the table")
    return out


@check("pci-amd", "the code name of every AMD PCI device id (both directions)", "pci.ids 2026.08.22 excerpt")
def _pci_amd(ctx: Context) -> list[str]:
    lines = _pci_lines(ctx.evidence.pci_ids)["1002"]
    devices = ctx.tables["amd"]["devices"]
    codes = {row["chip"] for row in devices.values()}
    out = []
    for device, row in devices.items():
        name = lines.get(device)
        if name is None or not name.startswith(row["chip"]):
            out.append(f"amd {device}: code name {row['chip']} in the table, pci.ids says {name!r}")
    for device, name in lines.items():
        if device not in devices and not NOT_A_GPU.search(name) and any(
                name == c or name.startswith((c + " ", c + "/")) for c in codes):
            out.append(f"amd {device}: pci.ids names a GPU of a known code name ({name!r}), not in the table")
    return out


# NVIDIA's chip code prefixes: the architecture each names, as NVIDIA's architecture list words it
CHIP_FAMILIES = {"GK": ("Kepler",), "GM": ("Maxwell",), "GP": ("Pascal",), "GV": ("Volta", "Xavier"),
                 "TU": ("Turing",), "GA": ("Ampere",), "AD": ("Ada",), "GH": ("Hopper",), "GB": ("Blackwell",)}


@check("nvidia-chip-cc", "the compute capability of every NVIDIA chip (its architecture; both directions)",
       "NVIDIA's compute capability -> architecture list (cuda-samples helper_cuda.h, evidence/cuda-archs.json), "
       "the chip code's prefix naming the architecture")
def _chip_cc(ctx: Context) -> list[str]:
    names = ctx.evidence.archs["arch_names"]
    out = []
    seen = set()
    for chip, cc in ctx.tables["nvidia"]["chips"].items():
        families = CHIP_FAMILIES.get(chip[:2])
        seen.add(names.get(cc))
        if families is None or names.get(cc) not in families:
            out.append(f"nvidia chip {chip}: compute capability {cc} in the table, which NVIDIA's list calls "
                       f"{names.get(cc) or 'unknown'} (the chip is {' or '.join(families or ('unknown',))})")
    for family in sorted(set(names.values()) - seen):
        out.append(f"NVIDIA's list has {family} GPUs, the chip table none")
    return out


@check("jetson", "the compute capability of every Jetson module, by the word its device tree model carries (both "
                 "directions)",
       "NVIDIA's compute capability list; dusty-nv/jetson-containers' get_cuda_arch (each Jetson module's compute "
       "capability: vendor/jetson-containers.json)")
def _jetson(ctx: Context) -> list[str]:
    names = ctx.evidence.archs["arch_names"]
    modules = ctx.tables["jetson"]["modules"]
    stated = {name.lower(): cc for name, cc in ctx.evidence.jetson_modules.items()}
    out = [f"jetson {row['word']}: compute capability {row['compute_capability']}, which NVIDIA's list does not have"
           for row in modules if row["compute_capability"] not in names]
    for row in modules:
        cc = stated.get(row["word"].lower())
        if cc != row["compute_capability"]:
            out.append(f"jetson {row['word']}: compute capability {row['compute_capability']} in the table, "
                       f"{cc or 'no module of that name'} by jetson-containers")
    for name, cc in ctx.evidence.jetson_modules.items():  # the first module whose word the model names wins
        found = next((row for row in modules if row["word"].lower() in f"nvidia jetson {name}".lower()), None)
        if found is None or found["compute_capability"] != cc:
            out.append(f"jetson-containers' Jetson {name} ({cc}): the table's word for it gives "
                       f"{found and found['compute_capability']}")
    return out


def _floor_of(floors: dict[str, Any], cc: str) -> Any:
    """The matrix's driver floor of a compute capability as the resolver reads it: its row, else the nearest lower
    one of the same major, else its major's."""
    major, minor = (int(x) for x in cc.split("."))
    return next((floors[f"{major}.{m}"] for m in range(minor, -1, -1) if f"{major}.{m}" in floors),
                floors.get(str(major)))


@check("gpu-driver-floor", "the oldest driver branch of each GPU generation newer than every CUDA family floor "
                           "(both directions)",
       "the first CUDA toolkit per compute capability: clang's table (evidence/cuda-archs.json), for the "
       "capabilities it lacks CUTLASS's (evidence/nvidia-drivers.json); that toolkit's GA driver in the toolkit "
       "table (derived)")
def _driver_floor(ctx: Context) -> list[str]:
    first = {**ctx.evidence.drivers["first_toolkit"], **ctx.evidence.archs["first_toolkit"]}
    ga = {row["cuda"]: row for row in ctx.tables["toolkits"]["toolkits"] if row.get("linux")}
    compat = min(int(f.linux.split(".")[0]) for f in ctx.matrix.cuda_families.values() if f.linux)
    floors = dict(ctx.matrix.gpu_driver_floor)
    out = []
    want = {}
    for cc, toolkit in first.items():
        row = ga.get(f"{toolkit}.0") or ga.get(next((c for c in sorted(ga, key=_key) if c.startswith(toolkit + ".")),
                                                    ""))
        if row and int(row["linux"].split(".")[0]) > compat:
            want[cc] = row["linux"].split(".")[0]
    for cc, branch in sorted(want.items(), key=lambda kv: _key(kv[0])):
        floor = _floor_of(floors, cc)
        if floor is None or floor.driver != branch or floor.confidence != "derived":
            out.append(f"compute capability {cc}: driver floor {floor and floor.driver} ({floor and floor.confidence}) "
                       f"in the matrix, R{branch} (derived) from the first toolkit that targets it ({first[cc]})")
    for cc, floor in floors.items():
        if floor.confidence == "derived" and cc not in want:
            out.append(f"compute capability {cc}: a derived driver floor in the matrix, no toolkit evidence for it")
    return out


@check("gpu-driver-last", "the newest driver branch that drives each GPU generation (both directions: every "
                          "generation's branch, and every branch row's generation)",
       "NVIDIA's supported-gpus.json: the legacy branch of each device it no longer drives "
       "(evidence/nvidia-drivers.json), each device's generation by the NVIDIA PCI and chip tables")
def _driver_last(ctx: Context) -> list[str]:
    devices, chips = ctx.tables["nvidia"]["devices"], ctx.tables["nvidia"]["chips"]
    by_cc: dict[str, list[tuple[str | None, str]]] = {}
    for device, row in ctx.evidence.drivers["devices"].items():
        if device in devices and (cc := chips.get(devices[device][0])):
            by_cc.setdefault(cc, []).append((row["last_branch"], row["name"]))
    out = []
    confirmed = set()
    for cc, rows in sorted(by_cc.items(), key=lambda kv: _key(kv[0])):
        branches = [b for b, _ in rows]
        newest = None if None in branches else max(branches, key=_key)  # type: ignore[arg-type]
        row = ctx.matrix.gpu_driver_last_for(int(cc.replace(".", "")))
        if (row and row.driver) != newest:
            out.append(f"compute capability {cc}: last driver branch {row and row.driver} in the matrix, "
                       f"{newest and 'R' + newest or 'none (the current branches drive it)'} by NVIDIA's "
                       f"supported-gpus.json ({', '.join(sorted(n for _, n in rows)[:3])})")
        elif row:
            confirmed.add(row.up_to_sm)
    for row in ctx.matrix.gpu_driver_last:
        if row.up_to_sm not in confirmed:
            out.append(f"driver branch R{row.driver} (up to sm_{row.up_to_sm}): in the matrix, no device of NVIDIA's "
                       "supported-gpus.json has it as its last")
    return out


@check("toolkit-drivers", "the driver each CUDA toolkit release ships with (Linux and Windows; both directions)",
       "NVIDIA's release-notes table as recorded in the reference matrix (cuda_driver_table)")
def _toolkit_drivers(ctx: Context) -> list[str]:
    recorded = {row["cuda"]: row for row in ctx.evidence.reference.get("cuda_driver_table", ())}
    table = {row["cuda"]: row for row in ctx.tables["toolkits"]["toolkits"]}
    out = []
    for cuda, row in recorded.items():
        mine = table.get(cuda) or table.get(cuda.replace(".x", ".0"))
        if mine is None:
            out.append(f"CUDA {cuda}: in NVIDIA's table, not in the toolkit table")
        elif (mine.get("linux"), mine.get("windows")) != (row.get("linux_x86_64"), row.get("windows_x86_64")):
            out.append(f"CUDA {cuda}: drivers {mine.get('linux')}/{mine.get('windows')} in the toolkit table, "
                       f"{row.get('linux_x86_64')}/{row.get('windows_x86_64')} in NVIDIA's table")
    for cuda, mine in table.items():
        unrecorded = cuda not in recorded and cuda.replace(".0", ".x") not in recorded
        if unrecorded and mine.get("confidence") == "source-file":
            out.append(f"CUDA {cuda}: labelled source-file in the toolkit table, not in NVIDIA's table as recorded")
    return out


def _intel_ids(macros: dict[str, Any]) -> dict[str, set[str]]:
    """macro -> the device ids it lists, with those of the macros it includes (Linux's pciids.h, as captured)."""
    def ids(macro: str, seen: frozenset[str] = frozenset()) -> set[str]:
        row = macros.get(macro, {"ids": [], "uses": []})
        return set(row["ids"]).union(*(ids(m, seen | {macro}) for m in row["uses"] if m not in seen))

    return {macro: ids(macro) for macro in macros}


@check("intel-pci", "the family of every Intel GPU PCI device id (both directions)",
       "Linux's include/drm/intel/pciids.h (the ids of each platform's macro) and, for an id Linux does not list, "
       "its pci.ids name (evidence/intel-pciids.json)")
def _intel_pci(ctx: Context) -> list[str]:
    by_macro = _intel_ids(ctx.evidence.intel_pciids["macros"])
    names = ctx.evidence.intel_pciids["pci_ids"]
    families = ctx.tables["intel"]["families"]
    devices = ctx.tables["intel"]["devices"]
    want: dict[str, str] = {}
    out = []
    for family, row in families.items():
        for macro in row.get("macros", ()):
            if macro not in by_macro:
                out.append(f"intel {family}: macro {macro} is not in pciids.h")
            for device in by_macro.get(macro, ()):
                want[device] = family
    for device, family in sorted(want.items()):
        if device not in devices:
            out.append(f"intel {device}: pciids.h lists it for {family} ({names.get(device, 'no pci.ids name')}), "
                       "not in the table")
        elif devices[device]["family"] != family:
            out.append(f"intel {device}: family {devices[device]['family']} in the table, {family} by pciids.h")
    for device in sorted(set(devices) - set(want)):
        family = devices[device]["family"]
        name = names.get(device, "")
        if not any(name.startswith(c) for c in families.get(family, {}).get("code_names", ())):
            out.append(f"intel {device}: {family} in the table, neither pciids.h nor its pci.ids name "
                       f"({name or 'none'}) says so")
    return out


def _code(name: str, digits: bool = True) -> str:
    """A code name as the tables compare it: "Hawk Point" / "HawkPoint1" -> "hawk", "GREEN SARDINE" ->
    "greensardine", "Navi 21" -> "navi21" (``digits=False`` keeps a trailing number: a discrete chip's)."""
    key = re.sub(r"[\s_/-]+", "", name.lower())
    key = key.rstrip("0123456789") if digits else key
    return re.sub(r"(point|ridge)$", "", key) or key


def _amd_row_gfx(ctx: Context, row: dict[str, Any]) -> set[str]:
    """The gfx targets amdkfd gives an asic-info row: by its GC versions, else (a generation before IP
    discovery) by its ASIC name."""
    gc = {g for v in row["gc"] if (g := ctx.evidence.amd["gc_gfx"].get(v))}
    return gc or {g for c in row["codes"] for part in c.split("/") if (g := ctx.evidence.amd["asic_gfx"].get(
        part.upper()))}


def _amd_gpu_gfx(ctx: Context, name: str) -> str | None:
    """The gfx of a GPU the names table or the AMD PCI table names ("Radeon 780M"; a chip: "Raphael")."""
    key = name.lower()
    for gpu in ctx.tables["names"]["gpus"]:
        if gpu.get("vendor") == "amd" and key in (gpu["name"].lower(), *(a.lower() for a in gpu.get("aliases", ()))):
            return gpu.get("gfx")
    for row in ctx.tables["amd"]["devices"].values():  # a chip ("Raphael"), or a product it names ("Radeon 610M")
        products = {p.strip().lower() for inner in re.findall(r"\[([^\]]+)\]", row["name"]) for p in inner.split("/")}
        if row["chip"].lower() == key or key in products:
            return row.get("gfx")
    return None


@check("amd-apu-cpus", "the integrated GPU of every AMD APU CPU-model pattern: its code names and gfx target (both "
                       "directions: each pattern's, and each Ryzen APU series' of the table)",
       "Linux's amdgpu APU table (product series, code names, graphics IP version; evidence/amd-gfx.json) and "
       "amdkfd's gfx target of each graphics IP version")
def _amd_apu_cpus(ctx: Context) -> list[str]:
    apus = [(row, _amd_row_gfx(ctx, row)) for row in ctx.evidence.amd["apus"]]
    out = []
    covered: set[tuple[str, str]] = set()
    for row in ctx.tables["names"]["amd_apu_cpus"]:
        gfx = _amd_gpu_gfx(ctx, row["gpu"])
        codes = {_code(c) for c in row.get("code_names", ())}
        rows = [(r, g) for r, g in apus if codes & {_code(c) for c in r["codes"]}]
        if not codes or not rows:
            out.append(f"AMD APU pattern {row['match']!r}: code names {sorted(row.get('code_names', ()))} are in no "
                       "row of the amdgpu APU table")
        elif gfx not in {x for _, g in rows for x in g}:
            out.append(f"AMD APU pattern {row['match']!r}: {row['gpu']} ({gfx}) in the table, the amdgpu APU table's "
                       f"{', '.join(r['product'] for r, _ in rows)} run as {sorted({x for _, g in rows for x in g})}")
        covered |= {(_code(c), gfx or "") for c in row.get("code_names", ())}
    for row, gfx in apus:
        if row["product"].startswith("Ryzen") and gfx and not any((_code(c), g) in covered for c in row["codes"]
                                                                  for g in gfx):
            out.append(f"amdgpu APU table: {row['product']} ({', '.join(row['codes'])}, {sorted(gfx)}) has no "
                       "CPU-model pattern")
    return out


def _models(text: str) -> set[str]:
    """The model numbers a product name lists, with their suffixes: "RX 6800(XT) /6900(XT) /W6800" -> 6800, 6800XT,
    6900, 6900XT, W6800; "7900 XT /XTX" -> 7900XT, 7900XTX; "Radeon RX 470/480" -> 470, 480."""
    out: set[str] = set()
    last = ""
    for part in re.split(r"\s*/\s*", re.sub(r"\((?:TM|FirePro|Pro|PRO\|WX|RX\|Pro WX|RX\|TM|R9\|TM)\)", "", text)):
        if m := re.search(r"\b([A-Z]{0,2}[0-9]{3,4})\s*((?:[A-Z]{1,3}(?![a-z]))?)(?:\s*\(([A-Z|]+)\))?", part):
            last = m[1]
            out.add(m[1] + m[2])
            out |= {m[1] + m[2] + s for s in (m[3] or "").split("|") if s}
        elif last and (m := re.fullmatch(r"\s*([A-Z]{1,3})\s*", part)):
            out.add(last + m[1])
    return {x.replace(" ", "") for x in out}


@check("amd-chip-gfx", "the gfx target of every AMD code name of the PCI table (both directions: each code name's, "
                       "and each product series' of the tables)",
       "Linux's amdgpu APU and discrete GPU tables (code names, products, graphics IP version; evidence/amd-gfx.json) "
       "and amdkfd's gfx target of each version; a discrete chip is matched by its code name, else by the model "
       "numbers its pci.ids products share with a table row")
def _amd_chip_gfx(ctx: Context) -> list[str]:
    rows = [(row, _amd_row_gfx(ctx, row), apu) for apu, key in ((True, "apus"), (False, "dgpus"))
            for row in ctx.evidence.amd[key]]
    chips: dict[str, dict[str, Any]] = {}
    for row in ctx.tables["amd"]["devices"].values():
        entry = chips.setdefault(row["chip"], {"gfx": {}, "models": set(), "integrated": row.get("integrated")})
        if row.get("gfx"):
            entry["gfx"][row["gfx"]] = entry["gfx"].get(row["gfx"], 0) + 1
        entry["models"] |= _models(" ".join(re.findall(r"\[([^\]]+)\]", row["name"])))
    out = []
    matched: set[int] = set()
    for chip, entry in sorted(chips.items()):
        gfx = max(entry["gfx"], key=entry["gfx"].get) if entry["gfx"] else None  # devices of another are noted
        by_code = [i for i, (row, _, apu) in enumerate(rows) if any(
            _code(c, digits=bool(apu)) == _code(chip, digits=bool(entry["integrated"])) for c in row["codes"])]
        if not by_code and not entry["integrated"]:
            overlap = {i: len(entry["models"] & _models(row["product"])) for i, (row, _, apu) in enumerate(rows)
                       if not apu}
            best = max(overlap.values(), default=0)
            # one shared number may be a namesake ("Pro 5600M" is Navi 12, "RX 5600M" Navi 10), unless it is the
            # row's only one
            by_code = [i for i, n in overlap.items()
                       if n and n == best and n >= min(2, len(_models(rows[i][0]["product"])))]
        matched |= set(by_code)
        want = {g for i in by_code for g in rows[i][1]}
        if not want and (asic := ctx.evidence.amd["asic_gfx"].get(chip.upper().replace(" ", ""))):
            want = {asic}  # a generation before IP discovery, by amdkfd's ASIC name (Kaveri)
        if want and gfx is not None and gfx not in want:
            out.append(f"amd chip {chip}: {gfx} in the PCI table, {sorted(want)} by the amdgpu table's "
                       f"{'; '.join(rows[i][0]['product'] for i in by_code)}")
        elif want and gfx is None and len(want) == 1:
            out.append(f"amd chip {chip}: no gfx in the PCI table, {sorted(want)} by the amdgpu table's "
                       f"{'; '.join(rows[i][0]['product'] for i in by_code)}")
    for i, (row, gfx, apu) in enumerate(rows):  # an APU series without a PCI code name is the APU class's
        if i not in matched and gfx and not apu and all("." in v for v in row["gc"]):
            out.append(f"amdgpu table: {row['product']} ({', '.join(row['codes']) or 'no code name'}, {sorted(gfx)}) "
                       "matches no code name of the PCI table")
    return out


def _lookup(ctx: Context, name: str) -> str | None:
    """The GPU name an instance type resolves to by the names table's patterns (the first that matches)."""
    return next((row["gpu"] for row in ctx.tables["names"]["instance_types"]
                 if re.search(row["match"], name, re.IGNORECASE)), None)


def _same_gpu(table_gpu: str, documented: str) -> bool:
    """Whether the table's GPU word names the documented accelerator ("A100" in "8 x NVIDIA A100 Tensor Core")."""
    words = re.findall(r"[a-z0-9]+", documented.lower())
    wanted = re.findall(r"[a-z0-9]+", table_gpu.lower())
    return all(w in words for w in wanted)


@check("cloud-instance-types", "the GPU of every cloud instance type pattern (both directions: each documented GPU "
                               "size resolves, to its GPU; each pattern matches a documented size)",
       "AWS's, Google Cloud's and Azure's size documentation (evidence/cloud-gpus.json)")
def _cloud(ctx: Context) -> list[str]:
    out = []
    matched: set[str] = set()
    for provider, data in ctx.evidence.cloud.get("providers", {}).items():
        for size, accelerator in data["sizes"].items():
            gpu = _lookup(ctx, size)
            if gpu is None:
                out.append(f"{provider} {size}: {accelerator} by the provider's documentation, no pattern resolves it")
            elif not _same_gpu(gpu, accelerator):
                out.append(f"{provider} {size}: {gpu} in the table, {accelerator} by the provider's documentation")
            matched |= {row["match"] for row in ctx.tables["names"]["instance_types"]
                        if re.search(row["match"], size, re.IGNORECASE)}
    covered = tuple(ctx.evidence.cloud.get("pattern_scope", {}).values())  # the patterns the documents answer for
    for row in ctx.tables["names"]["instance_types"]:
        if row["match"] not in matched and any(re.search(p, row["match"]) for p in covered):
            out.append(f"instance type pattern {row['match']!r} ({row['gpu']}) matches no documented size")
    return out


# -- running ---------------------------------------------------------------------------------------------------
def other_audits() -> list[tuple[str, Any]]:
    """Every other ``scripts/audit_*.py`` module, imported from its file."""
    found = []
    for path in sorted(HERE.glob("audit_*.py")):
        if path.name == Path(__file__).name:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec and spec.loader:
            module = importlib.util.module_from_spec(spec)
            sys.modules.setdefault(path.stem, module)
            spec.loader.exec_module(module)
            found.append((path.stem, module))
    return found


def run_other(module: Any) -> list[str]:
    """What another audit module's ``main([])`` prints when it finds a disagreement (exit 1), else nothing; an
    audit that cannot read its evidence (exit 2) is a disagreement too."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = module.main([])
    if code == 0:
        return []
    lines = [line for line in (out.getvalue() + err.getvalue()).splitlines() if line.strip()]
    return lines or [f"exit {code}"]


def audit(matrix: Matrix | None = None, evidence: Evidence | None = None, tables: dict[str, Any] | None = None,
          only: tuple[str, ...] = ()) -> list[str]:
    """Every disagreement of the matrix and the tables with the evidence (``only``: those classes)."""
    ctx = Context(matrix or load_matrix(), evidence or read_evidence(), tables if tables is not None else read_tables())
    problems: list[str] = []
    for name, (_, _, function) in CLASSES.items():
        if not only or name in only:
            problems += [line for line in function(ctx) if line not in problems]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pages", type=Path, help="directory of captured pages (default: the committed capture)")
    where.add_argument("--index", help="a simple-API root to read live (a loopback replica, or the default index)")
    parser.add_argument("--list", action="store_true", help="list the fact classes checked and their evidence")
    args = parser.parse_args(argv)
    others = other_audits()
    if args.list:
        for name, (facts, evidence, _) in CLASSES.items():
            print(f"{name}: {facts} | {evidence}")
        for module_name, module in others:
            print(f"{module_name}: {(module.__doc__ or '').strip().splitlines()[0]}")
        return 0
    try:
        evidence = read_evidence(args.pages, args.index)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot read the evidence: {exc}", file=sys.stderr)
        return 2
    problems = audit(load_matrix(), evidence)
    for module_name, module in others:
        problems += [f"{module_name}: {line}" for line in run_other(module)]
    for line in problems:
        print(line)
    releases = len(load_matrix().releases)
    print(f"{len(problems)} disagreement{'s' if len(problems) != 1 else ''} over {releases} releases and "
          f"{len(CLASSES)} fact classes" + (f", and {len(others)} other audit{'s' if len(others) != 1 else ''}"
                                            if others else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
