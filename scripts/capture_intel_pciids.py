#!/usr/bin/env python3
"""Capture the Intel GPU PCI device ids of each platform from Linux's ``include/drm/intel/pciids.h``, and pci.ids'
names of Intel's GPU devices.

    python scripts/capture_intel_pciids.py --pciids PATH [--source "REPO@COMMIT include/drm/intel/pciids.h"]
        --pci-ids PATH [-o scripts/reference/evidence/intel-pciids.json]

The header defines one ``INTEL_<PLATFORM>_IDS(MACRO__, ...)`` macro per platform (and sub-platform), each a list of
``MACRO__(0x56a0, ...)`` entries and of the sub-platform macros it includes. Its text is read line by line
(nothing of it compiled or run); the output keeps, per macro, the device ids it lists and the macros it includes,
which ``scripts/audit_matrix.py`` checks detection's Intel PCI table against. From pci.ids (pciutils' PCI ID
Repository) it keeps the name of every Intel (8086) device the header lists and of every other one its name calls
a GPU (graphics, Arc, Iris, a DG/Xe part or a GPU platform's code name): ids Linux no longer lists, or not yet.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "intel-pciids.json"


def macros(text: str) -> dict[str, dict[str, list[str]]]:
    """macro -> {"ids": the device ids it lists, "uses": the macros it includes}."""
    out: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in text.splitlines():
        if m := re.match(r"#define\s+(INTEL_\w+_IDS)\(\s*MACRO__", line):
            current = m[1]
            out[current] = {"ids": [], "uses": []}
        elif current and (m := re.search(r"\bMACRO__\(\s*0[xX]([0-9A-Fa-f]{4})", line)):
            out[current]["ids"].append(m[1].lower())
        elif current and (m := re.search(r"\b(INTEL_\w+_IDS)\(\s*MACRO__", line)):
            out[current]["uses"].append(m[1])
        if current and not line.rstrip().endswith("\\"):
            current = None
    return out


# an Intel device line of pci.ids that names a GPU
GPU_NAME = re.compile(r"Graphics|\bArc\b|Iris|\bUHD\b|\bXe\b|\bDG[12]\b|ACMP|\bCRI\b|\bNVL-|Ponte Vecchio|Battlemage|"
                      r"Lakefield|Panther Lake")


def intel_names(pci_ids: str, listed: set[str]) -> tuple[str, dict[str, str]]:
    """(pci.ids' version, id -> name of the Intel devices the header lists or whose name calls them a GPU)."""
    version = next((m[1] for m in re.finditer(r"^#\s+Version:\s*(\S+)", pci_ids, re.M)), "unknown")
    out: dict[str, str] = {}
    vendor = None
    for line in pci_ids.splitlines():
        if line and not line.startswith(("\t", "#")):
            vendor = line[:4]
        elif vendor == "8086" and (m := re.match(r"^\t([0-9a-f]{4})\s+(.+)$", line)) and (
                m[1] in listed or GPU_NAME.search(m[2])):
            out[m[1]] = m[2].strip()
    return version, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pciids", type=Path, required=True, help="a copy of include/drm/intel/pciids.h")
    parser.add_argument("--source", default="Linux include/drm/intel/pciids.h", help="where the copy is from")
    parser.add_argument("--pci-ids", type=Path, required=True, help="a pci.ids file")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    found = macros(args.pciids.read_text(encoding="utf-8"))
    version, names = intel_names(args.pci_ids.read_text(encoding="utf-8"),
                                 {d for m in found.values() for d in m["ids"]})
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"source": args.source, "macros": found, "pci_ids_version": version,
                                       "pci_ids": names}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(found)} macros, {sum(len(m['ids']) for m in found.values())} ids")
    return 0


if __name__ == "__main__":
    sys.exit(main())
