#!/usr/bin/env python3
"""Build the NVIDIA and AMD PCI tables of detection from pci.ids (pciutils' PCI ID Repository).

    python scripts/build_pci_tables.py [--pci-ids /path/to/pci.ids]

With ``--pci-ids``, the NVIDIA (10de) and AMD (1002) device lines of that file, with its version header, are
first kept in ``scripts/reference/pci-ids/devices.ids`` (the excerpt the tests rebuild from). Then:

- ``detectors/data/nvidia-pci.json``: every NVIDIA device whose name starts with a chip code the ``chips`` table
  knows (the longest one: "GM204GLM" is GM204), with its product name (the last bracketed part of the line, else
  the line). The ``chips`` table (chip -> compute capability, from NVIDIA's CUDA GPU list) is kept as it is.
- ``detectors/data/amd-pci.json``: every AMD device whose name starts with a code name of ``CHIP_GFX`` (the LLVM
  AMDGPU processor table's code names), with its gfx target; ``DEVICE_GFX`` holds the few ids whose code name
  is shared by parts of two gfx targets; a known APU code name is marked integrated; a code name with no
  established gfx target (``UNKNOWN_GFX``) is listed without one.

The source's version is written into each table.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "src" / "torch_install" / "detectors" / "data"
EXCERPT = HERE / "reference" / "pci-ids" / "devices.ids"
VENDORS = {"10de": "nvidia", "1002": "amd"}

# LLVM AMDGPU processor table (llvm.org/docs/AMDGPUUsage.html): code name -> gfx target, and whether it is an APU
CHIP_GFX: dict[str, tuple[str, bool]] = {
    "Kaveri": ("gfx700", True), "Hawaii": ("gfx701", False), "Tonga": ("gfx802", False),
    "Fiji": ("gfx803", False), "Ellesmere": ("gfx803", False), "Baffin": ("gfx803", False),
    "Lexa": ("gfx803", False), "Polaris 20": ("gfx803", False), "Polaris 22": ("gfx803", False),
    "Polaris12": ("gfx803", False), "Vega 10": ("gfx900", False), "Raven Ridge": ("gfx902", True),
    "Picasso": ("gfx902", True), "Vega 12": ("gfx904", False), "Vega 20": ("gfx906", False),
    "Arcturus": ("gfx908", False), "Aldebaran": ("gfx90a", False), "Renoir": ("gfx90c", True),
    "Cezanne": ("gfx90c", True), "Lucienne": ("gfx90c", True), "Barcelo": ("gfx90c", True),
    "Aqua Vanjaram": ("gfx942", False), "Navi 10": ("gfx1010", False), "Navi 12": ("gfx1011", False),
    "Navi 14": ("gfx1012", False), "Cyan Skillfish": ("gfx1013", True), "Navi 21": ("gfx1030", False),
    "Navi 22": ("gfx1031", False), "Navi 23": ("gfx1032", False), "VanGogh": ("gfx1033", True),
    "Sephiroth": ("gfx1033", True), "Navi 24": ("gfx1034", False), "Rembrandt": ("gfx1035", True),
    "Raphael": ("gfx1036", True), "Granite Ridge": ("gfx1036", True), "Mendocino": ("gfx1036", True),
    "Navi 31": ("gfx1100", False), "Navi 32": ("gfx1101", False), "Navi 33": ("gfx1102", False),
    "Phoenix": ("gfx1103", True), "Phoenix1": ("gfx1103", True), "Phoenix2": ("gfx1103", True),
    "HawkPoint1": ("gfx1103", True), "HawkPoint2": ("gfx1103", True), "Strix": ("gfx1150", True),
    "Strix Halo": ("gfx1151", True), "Krackan": ("gfx1152", True), "Navi 44": ("gfx1200", False),
    "Navi 48": ("gfx1201", False),
}
# ids whose code name covers parts of two targets: MI350X/MI355X are CDNA4 (torch-matrix gpu_arch_names)
DEVICE_GFX = {"75a0": "gfx950", "75a3": "gfx950", "75a8": "gfx950"}
UNKNOWN_GFX = {"Krackan2": True}  # code name -> APU; no source establishes its gfx target


def excerpt(pci_ids: str) -> str:
    """The version header and the NVIDIA and AMD device lines (no subsystems) of a pci.ids file."""
    out: list[str] = []
    vendor = None
    for line in pci_ids.splitlines():
        if line.startswith("#") and re.match(r"#\s+(Version|Date):", line):
            out.append(line)
        elif line and not line.startswith(("\t", "#")):
            vendor = line[:4] if line[:4] in VENDORS and line[4:5] == " " else None
            if vendor:
                out.append(line)
        elif vendor and line.startswith("\t") and not line.startswith("\t\t"):
            out.append(line)
    return "\n".join(out) + "\n"


def devices(text: str) -> tuple[str, dict[str, dict[str, str]]]:
    """(the version, vendor -> device id -> name) of an excerpt."""
    version = next((m[1] for m in re.finditer(r"^#\s+Version:\s*(\S+)", text, re.M)), "unknown")
    found: dict[str, dict[str, str]] = {name: {} for name in VENDORS.values()}
    vendor = None
    for line in text.splitlines():
        if line and not line.startswith(("\t", "#")):
            vendor = VENDORS.get(line[:4])
        elif vendor and (m := re.match(r"^\t([0-9a-f]{4})\s+(.+)$", line)):
            found[vendor][m[1]] = m[2].strip()
    return version, found


NOT_A_GPU = re.compile(r"Audio|USB|UCSI|NVSwitch|Serial Bus|PCI Express Switch|Upstream Port|Downstream Port|"
                       r"Root Port|PCIe? Bridge|Host Bridge|I2C|SMBus", re.IGNORECASE)


def product(name: str) -> str:
    """The product of a device line: its last bracketed part ("GA102 [GeForce RTX 3090]"), else the line."""
    inner = re.findall(r"\[([^\[\]]+)\]", name)
    return inner[-1].strip() if inner else name


def nvidia_table(version: str, names: dict[str, str], current: dict) -> dict:
    chips = current["chips"]
    table: dict[str, list[str]] = {}
    for device, name in sorted(names.items()):
        if NOT_A_GPU.search(name):  # the audio, USB and bridge functions of a board are not its GPU
            continue
        token = name.split()[0]
        chip = max((c for c in chips if token.startswith(c)), key=len, default=None)
        if chip:
            table[device] = [chip, product(name)]
    about = (f"NVIDIA PCI device id -> GPU chip -> CUDA compute capability. Device ids and names: pci.ids "
             f"(pciutils), version {version}, by scripts/build_pci_tables.py. Chip -> compute capability: NVIDIA's "
             "CUDA GPU compute capability list (architecture per chip family). NVML / nvidia-smi compute_cap "
             "overrides this table when available.")
    return {**current, "about": about, "devices": table}


def amd_table(version: str, names: dict[str, str], current: dict) -> dict:
    table: dict[str, dict[str, object]] = {}
    codes = sorted([*CHIP_GFX, *UNKNOWN_GFX], key=len, reverse=True)
    for device, name in sorted(names.items()):
        if NOT_A_GPU.search(name):
            continue
        chip = next((c for c in codes if name == c or name.startswith((c + " ", c + "/"))), None)
        if chip is None:
            continue
        entry: dict[str, object] = {"name": name, "chip": chip}
        gfx, integrated = CHIP_GFX.get(chip, (None, UNKNOWN_GFX.get(chip, False)))
        gfx = DEVICE_GFX.get(device, gfx)
        if gfx:
            entry["gfx"] = gfx
        entry["integrated"] = integrated
        table[device] = entry
    sources = {**current["_sources"], "pci.ids": f"PCI ID Repository pci.ids (github.com/pciutils/pciids), "
                                                 f"version {version}"}
    return {**current, "_sources": sources, "devices": table}


def build(text: str) -> tuple[dict, dict]:
    version, found = devices(text)
    nvidia = json.loads((DATA / "nvidia-pci.json").read_text(encoding="utf-8"))
    amd = json.loads((DATA / "amd-pci.json").read_text(encoding="utf-8"))
    return nvidia_table(version, found["nvidia"], nvidia), amd_table(version, found["amd"], amd)


def render(table: dict) -> str:
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pci-ids", type=Path, help="a pci.ids file to take the excerpt from first")
    args = parser.parse_args(argv)
    if args.pci_ids:
        EXCERPT.parent.mkdir(parents=True, exist_ok=True)
        EXCERPT.write_text(excerpt(args.pci_ids.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
    nvidia, amd = build(EXCERPT.read_text(encoding="utf-8"))
    for name, table in (("nvidia-pci.json", nvidia), ("amd-pci.json", amd)):
        (DATA / name).write_text(render(table), encoding="utf-8")
        print(f"wrote {name}: {len(table['devices'])} devices")
    return 0


if __name__ == "__main__":
    sys.exit(main())
