#!/usr/bin/env python3
"""Check the embedded matrix and detection's PCI tables against recorded evidence; print each disagreement.

    python scripts/audit_matrix.py                        # the committed evidence (scripts/reference)
    python scripts/audit_matrix.py --pages DIR            # default-index pages captured elsewhere
    python scripts/audit_matrix.py --index URL            # a live index, or a loopback replica of one

The evidence, each piece read by this script's own code (nothing of the matrix builder is imported):

- the default index's pages of torch, torchvision and torchaudio (``capture_default_index.py``): which releases
  exist (a release missing from the middle of the matrix is reported), Requires-Python, the Python tags of each
  platform, the glibc floor of the manylinux tags, the macOS floor of each platform and Python tag, and the
  companions' own Python coverage and macOS floors;
- the METADATA headers of those wheels (``…/metadata``): the default index's build of each release per platform
  (its CUDA pins, read where their markers hold), and what each paired companion requires of torch;
- the release branches' build matrix (``evidence/release-builds.json``, ``capture_release_builds.py``): the CUDA
  and ROCm variants of each release, and the Pythons the PyTorch index has beyond the default index;
- ``evidence/facts.json``: facts with a named source that no page shows (the glibc floor of PyTorch's build
  images);
- pci.ids (``pci-ids/devices.ids``): the chip of every NVIDIA device id and the code name of every AMD one.

Arch lists, MPS floors, driver floors and dates have no evidence here: the data labels them by confidence.
Exit 1 on any disagreement, 0 when everything agrees, 2 when the evidence cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from torch_install.resolver.matrix import Matrix, load_matrix  # noqa: E402

REFERENCE = HERE / "reference"
PAGES = REFERENCE / "default-index"
ACCEPT = "application/vnd.pypi.simple.v1+json"
MAX_BYTES = 32 << 20
TAG_PLATFORMS = ("linux_x86_64", "linux_aarch64", "windows_x86_64", "macos_arm64", "macos_x86_64")
DATA = HERE.parent / "src" / "torch_install" / "detectors" / "data"


class Evidence:
    """Everything the audit compares with, read once."""

    def __init__(self, pages: dict[str, dict[str, Any]], metadata: dict[str, str], builds: dict[str, Any],
                 facts: dict[str, Any], pci_ids: str) -> None:
        self.pages, self.metadata, self.builds, self.facts, self.pci_ids = pages, metadata, builds, facts, pci_ids
        self._wheels: dict[str, list[tuple[str, list[Any], dict[str, Any]]]] = {}

    def wheels(self, project: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
        """(version, tags, page entry) of each wheel of a project's page, read once."""
        if project not in self._wheels:
            self._wheels[project] = _wheels(self.pages[project])
        return self._wheels[project]


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
    return Evidence(pages, metadata, json.loads((REFERENCE / "evidence" / "release-builds.json").read_text()),
                    json.loads((REFERENCE / "evidence" / "facts.json").read_text()),
                    (REFERENCE / "pci-ids" / "devices.ids").read_text(encoding="utf-8"))


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


# -- the checks -------------------------------------------------------------------------------------------------
def audit(matrix: Matrix | None = None, evidence: Evidence | None = None,
          pci: tuple[dict[str, Any], dict[str, Any]] | None = None) -> list[str]:
    matrix = matrix or load_matrix()
    evidence = evidence or read_evidence()
    problems = _releases(matrix, evidence)
    for release in matrix.releases:
        problems += _release(matrix, release, evidence)
    nvidia, amd = pci or (json.loads((DATA / "nvidia-pci.json").read_text()),
                          json.loads((DATA / "amd-pci.json").read_text()))
    problems += _pci(nvidia, amd, evidence.pci_ids)
    return problems


def _releases(matrix: Matrix, evidence: Evidence) -> list[str]:
    on_index = {v for v, _, _ in evidence.wheels("torch") if re.fullmatch(r"\d+\.\d+\.\d+", v)}
    known = {r.version for r in matrix.releases}
    low, high = min(known, key=_key), max(known, key=_key)
    out = [f"torch {v}: on the default index, not in the matrix (its releases: {low}–{high})"
           for v in sorted(on_index - known, key=_key) if _key(v) >= _key(low)]
    out += [f"torch {v}: in the matrix, not on the default index" for v in sorted(known - on_index, key=_key)]
    return out


def _release(matrix: Matrix, release: Any, evidence: Evidence) -> list[str]:
    out: list[str] = []
    v = release.version
    mine = [(tags, entry) for version, tags, entry in evidence.wheels("torch") if version == v]
    if not mine:
        return out
    requires = {e.get("requires-python") for _, e in mine}
    if release.requires_python not in requires:
        out.append(f"torch {v}: Requires-Python {release.requires_python!r} in the matrix, "
                   f"{sorted(r or '' for r in requires)} on the index")
    pythons: dict[str, set[str]] = {}
    glibc: dict[str, tuple[int, int]] = {}
    macos: dict[str, dict[str, tuple[int, int]]] = {}
    for tags, _ in mine:
        for tag in tags:
            platform, python = _platform(tag.platform), _python(tag)
            if platform and python:
                pythons.setdefault(platform, set()).add(python)
            if platform and (floor := _glibc(tag.platform)):
                glibc[platform] = min(glibc.get(platform, floor), floor)
            if platform and python and (floor := _macos(tag.platform)):
                seen = macos.setdefault(platform, {})
                seen[python] = min(seen.get(python, floor), floor)
    branch = evidence.builds["releases"].get(".".join(v.split(".")[:2]), {})
    for platform in TAG_PLATFORMS:
        have, there = set(release.python_tags(platform)), pythons.get(platform, set())
        beyond = have - there  # on the PyTorch index only: the release branch must build them
        built = {*branch.get("python", ()), *branch.get("preview_python", ())}
        if there - have or (beyond and not platform.startswith("macos") and not beyond <= built):
            out.append(f"torch {v} {platform}: Pythons {sorted(have)} in the matrix, {sorted(there)} on the index"
                       + (f", {sorted(branch.get('python', ()))} built by the release branch" if branch else ""))
    least = evidence.facts["glibc_floor"]
    for platform, floor in glibc.items():
        major, minor = (int(x) for x in least.get(platform, "0.0").split("."))
        need = max(floor, (major, minor))
        if _text(need) != release.glibc.get(platform):
            out.append(f"torch {v} {platform}: glibc {release.glibc.get(platform)} in the matrix, {_text(need)} from "
                       "the wheels' tags and the build images' floor")
    for platform, by_python in macos.items():
        if _text(min(by_python.values())) != release.macos.get(platform):
            out.append(f"torch {v} {platform}: macOS {release.macos.get(platform)} in the matrix, "
                       f"{_text(min(by_python.values()))} on the index")
        for python, floor in by_python.items():
            if release.macos_floor(platform, python) != _text(floor):
                out.append(f"torch {v} {platform} Python {python}: macOS {release.macos_floor(platform, python)} in "
                           f"the matrix, {_text(floor)} on the index")
    out += _default_builds(release, evidence)
    newest = max((r.version for r in matrix.releases if r.version.split(".")[:2] == v.split(".")[:2]), key=_key)
    out += _variants(release, branch, exact=v == newest)
    out += _companions(matrix, release, evidence, pythons)
    return out


def _default_builds(release: Any, evidence: Evidence) -> list[str]:
    from packaging.markers import Marker
    from packaging.utils import parse_wheel_filename

    out = []
    for name, text in evidence.metadata.items():
        if not name.startswith(f"torch-{release.version}-"):
            continue
        tag = min(parse_wheel_filename(name)[3], key=str)
        platform = _platform(tag.platform)
        if platform is None or platform.startswith("macos"):
            continue
        env = {"platform_system": "Windows" if platform.startswith("windows") else "Linux",
               "sys_platform": "win32" if platform.startswith("windows") else "linux",
               "platform_machine": {"linux_x86_64": "x86_64", "linux_aarch64": "aarch64"}.get(platform, "AMD64"),
               "python_version": "3.12", "python_full_version": "3.12.0", "extra": ""}
        build = "cpu"
        for line in re.findall(r"(?im)^Requires-Dist:\s*(.+)$", text):
            requirement, _, marker = line.partition(";")
            m = re.match(r"(?:nvidia-cuda-runtime(?:-cu\d+)?|cuda-toolkit(?:\[[^\]]*\])?)\s*==\s*(\d+)\.(\d+)",
                         requirement.strip(), re.IGNORECASE)
            if m and (not marker.strip() or Marker(marker.strip()).evaluate(env)):
                build = f"cu{m[1]}{m[2]}"
                break
        if release.pypi.get(platform) != build:
            out.append(f"torch {release.version} {platform}: the default index's build is {release.pypi.get(platform)}"
                       f" in the matrix, {build} by its METADATA ({name})")
    return out


def _variants(release: Any, branch: dict[str, Any], exact: bool) -> list[str]:
    """The release branch's tip builds the minor's newest patch release: its set must be the matrix's; an older
    patch release of the minor may have had fewer."""
    if not branch:
        return []
    have = set(release.variants("linux_x86_64"))
    cuda = [*branch.get("cuda", ()), *branch.get("linux_extra_cuda", ())]
    built = {f"cu{c.replace('.', '')}" for c in cuda} | {f"rocm{r}" for r in branch.get("rocm", ())}
    mine = {x for x in have if x.startswith(("cu", "rocm"))}
    if mine != built if exact else not mine <= built:
        return [f"torch {release.version} linux_x86_64: CUDA/ROCm variants {sorted(mine)} in the matrix, "
                f"{sorted(built)} built by the release branch"]
    return []


def _companions(matrix: Matrix, release: Any, evidence: Evidence, torch_pythons: dict[str, set[str]]) -> list[str]:
    from packaging.requirements import Requirement

    out = []
    for name, version in release.companions.items():
        files = [(tags, e) for v, tags, e in evidence.wheels(name) if v == version]
        if not files:
            out.append(f"torch {release.version}: {name} {version} is not on the default index")
            continue
        have: dict[str, set[str | None]] = {}
        macos: dict[str, dict[str, tuple[int, int]]] = {}
        for tags, _ in files:
            for tag in tags:
                platform = _platform(tag.platform) if tag.platform != "any" else "*"
                if platform:
                    have.setdefault(platform, set()).add(_python(tag))
                if platform and (floor := _macos(tag.platform)):
                    seen = macos.setdefault(platform, {})
                    key = _python(tag) or "*"
                    seen[key] = min(seen.get(key, floor), floor)
        gaps = {}
        for platform, pythons in torch_pythons.items():
            got = have.get(platform, set()) | have.get("*", set())
            if got and None not in got and (missing := sorted(p for p in pythons if p not in got)):
                gaps[platform] = missing
        mine = {p: sorted(x) for p, x in release.companion_gaps.get(name, {}).items()}
        if mine != gaps:
            out.append(f"torch {release.version}: {name} {version} lacks Pythons {gaps} on the index, the matrix "
                       f"says {mine}")
        for platform, by_python in macos.items():
            for python, floor in by_python.items():
                torch_need = release.macos_floor(platform, python if python != "*" else None)
                said = release.companion_macos.get(name, {}).get(platform, {}).get(python)
                need = _text(floor) if torch_need is None or _key(_text(floor) or "") > _key(torch_need) else None
                if said != need:
                    out.append(f"torch {release.version}: {name} {version} {platform} Python {python} needs macOS "
                               f"{need or torch_need} by its wheels, the matrix says {said or torch_need}")
        text = next((t for n, t in evidence.metadata.items() if n.startswith(f"{name}-{version}-")), None)
        if text is None:
            continue
        pins = [Requirement(line) for line in re.findall(r"(?im)^Requires-Dist:\s*(.+)$", text)]
        pins = [r for r in pins if r.name == "torch" and not r.marker]
        if pins and not all(r.specifier.contains(release.version, prereleases=True) for r in pins):
            out.append(f"torch {release.version}: paired with {name} {version}, which requires "
                       f"{', '.join(str(r) for r in pins)} (its METADATA)")
    for name, versions in matrix.decoupled_companions.items():
        for version, first in versions.items():
            text = next((t for n, t in evidence.metadata.items() if n.startswith(f"{name}-{version}-")), "")
            exact = re.search(r"(?im)^Requires-Dist:\s*torch\s*\(?\s*==", text)
            lower = re.search(r"(?im)^Requires-Dist:\s*torch\s*\(?\s*>=\s*([0-9.]+)", text)
            if exact or not text:
                out.append(f"{name} {version}: decoupled in the matrix, but its METADATA "
                           + ("pins one torch" if exact else "is not recorded"))
            elif lower and _key(first) < _key(lower[1]):
                out.append(f"{name} {version}: goes with torch from {first} in the matrix, its METADATA requires "
                           f"torch>={lower[1]}")
    return sorted(set(out), key=out.index)


def _pci(nvidia: dict[str, Any], amd: dict[str, Any], pci_ids: str) -> list[str]:
    out = []
    vendor = None
    lines: dict[str, dict[str, str]] = {"10de": {}, "1002": {}}
    for line in pci_ids.splitlines():
        if line and not line.startswith(("\t", "#")):
            vendor = line[:4]
        elif vendor in lines and (m := re.match(r"^\t([0-9a-f]{4})\s+(.+)$", line)):
            lines[vendor][m[1]] = m[2].strip()
    for device, (chip, *_) in nvidia["devices"].items():
        name = lines["10de"].get(device)
        if name is None or not name.split()[0].startswith(chip):
            out.append(f"nvidia {device}: chip {chip} in the table, pci.ids says {name!r}")
    for device, row in amd["devices"].items():
        name = lines["1002"].get(device)
        if name is None or not name.startswith(row["chip"]):
            out.append(f"amd {device}: code name {row['chip']} in the table, pci.ids says {name!r}")
    return out


def companion_problems() -> list[str]:
    """The disagreements of the table of packages built against one torch (scripts/audit_companions.py)."""
    sys.path.insert(0, str(HERE))
    from audit_companions import REFERENCE as COMPANION_EVIDENCE
    from audit_companions import TABLE
    from audit_companions import audit as audit_companions

    return audit_companions(json.loads(TABLE.read_text(encoding="utf-8")),
                            json.loads(COMPANION_EVIDENCE.read_text(encoding="utf-8")))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pages", type=Path, help="directory of captured pages (default: the committed capture)")
    where.add_argument("--index", help="a simple-API root to read live (a loopback replica, or the default index)")
    args = parser.parse_args(argv)
    try:
        evidence = read_evidence(args.pages, args.index)
    except (OSError, ValueError, KeyError) as exc:
        print(f"cannot read the evidence: {exc}", file=sys.stderr)
        return 2
    problems = audit(load_matrix(), evidence) + companion_problems()
    for line in problems:
        print(line)
    releases = len(load_matrix().releases)
    print(f"{len(problems)} disagreement{'s' if len(problems) != 1 else ''} over {releases} releases")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
