#!/usr/bin/env python3
"""Capture AMD's own GPU facts: each product's graphics IP version, and the gfx target each version runs as.

    python scripts/capture_amd_gfx.py --kfd-device FILE --apu-table FILE --dgpu-table FILE [-o ...]
        [--kfd-source TEXT] [--apu-source TEXT] [--dgpu-source TEXT]

- ``--kfd-device``: amdkfd's ``kfd_device.c`` (Linux ``drivers/gpu/drm/amd/amdkfd``, AMD's ROCm/amdgpu): in
  ``kgd2kfd_probe`` each ``case IP_VERSION(11, 0, 1):`` (or ``case CHIP_TONGA:``) sets ``gfx_target_version =
  110003``, the gfx target the compute stack reports for that graphics IP (110003 -> gfx1103; 90012 -> gfx90c);
- ``--apu-table`` / ``--dgpu-table``: the amdgpu documentation's ``apu-asic-info-table.csv`` and
  ``dgpu-asic-info-table.csv`` (Linux ``Documentation/gpu/amdgpu``, kept by AMD): each row a product series, its
  code names and its GC (graphics core) version.

The files are read as text (nothing of them run). Writes ``evidence/amd-gfx.json``: GC version -> gfx target,
ASIC name -> gfx target, and the tables' rows (product, code names, GC versions), which ``scripts/audit_matrix.py``
checks the AMD APU CPU-model patterns and the AMD PCI table's gfx targets against.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "amd-gfx.json"


def gfx_name(target_version: int) -> str:
    """110003 -> "gfx1103", 90012 -> "gfx90c": major, then minor and stepping as hex digits."""
    major, rest = divmod(target_version, 10000)
    minor, step = divmod(rest, 100)
    return f"gfx{major}{minor:x}{step:x}"


def kfd_targets(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(GC version -> gfx, ASIC -> gfx) from ``kgd2kfd_probe``'s switch: the cases above each assignment."""
    body = text.split("kgd2kfd_probe", 1)[1]
    by_ip: dict[str, str] = {}
    by_asic: dict[str, str] = {}
    ips: list[str] = []
    asics: list[str] = []
    for line in body.splitlines():
        if m := re.search(r"case\s+IP_VERSION\((\d+),\s*(\d+),\s*(\d+)\)\s*:", line):
            ips.append(f"{m[1]}.{m[2]}.{m[3]}")
        elif m := re.search(r"case\s+CHIP_([A-Z0-9_]+)\s*:", line):
            asics.append(m[1])
        elif m := re.search(r"gfx_target_version\s*=\s*(\d+)\s*;", line):
            for ip in ips:
                by_ip[ip] = gfx_name(int(m[1]))
            for asic in asics:
                by_asic[asic] = gfx_name(int(m[1]))
            ips, asics = [], []
        elif re.search(r"\bbreak\s*;", line):
            ips, asics = [], []
        if re.search(r"^\s*if\s*\(!f2g\)", line):
            break
    return by_ip, by_asic


def table_rows(text: str) -> list[dict[str, object]]:
    """The rows of an asic-info table: product, code names ("GREEN SARDINE / Cezanne" -> two) and GC versions
    ("11.0.1 / 11.0.4" -> two; "9.3" -> "9.3.0"; a bare generation number such as "8" is kept as it is)."""
    rows = []
    for cells in csv.reader(io.StringIO(text), skipinitialspace=True):
        if not cells or cells[0] == "Product Name":
            continue
        product, codes, gc = cells[0].strip(), cells[1].strip(), cells[3].strip()
        versions = [v if v.count(".") != 1 else f"{v}.0" for v in (p.strip() for p in gc.split("/")) if v]
        rows.append({"product": product, "codes": [c.strip() for c in re.split(r"\s*/\s*", codes) if c.strip()],
                     "gc": versions})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kfd-device", type=Path, required=True)
    parser.add_argument("--kfd-source", default="drivers/gpu/drm/amd/amdkfd/kfd_device.c (kgd2kfd_probe)")
    parser.add_argument("--apu-table", type=Path, required=True)
    parser.add_argument("--apu-source", default="Documentation/gpu/amdgpu/apu-asic-info-table.csv")
    parser.add_argument("--dgpu-table", type=Path, required=True)
    parser.add_argument("--dgpu-source", default="Documentation/gpu/amdgpu/dgpu-asic-info-table.csv")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    by_ip, by_asic = kfd_targets(args.kfd_device.read_text(encoding="utf-8"))
    data = {"sources": {"gc_gfx": args.kfd_source, "apus": args.apu_source, "dgpus": args.dgpu_source},
            "gc_gfx": dict(sorted(by_ip.items(), key=lambda kv: [int(x) for x in kv[0].split(".")])),
            "asic_gfx": dict(sorted(by_asic.items())),
            "apus": table_rows(args.apu_table.read_text(encoding="utf-8")),
            "dgpus": table_rows(args.dgpu_table.read_text(encoding="utf-8"))}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(by_ip)} GC versions, {len(data['apus'])} APU and {len(data['dgpus'])} "
          "discrete rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
