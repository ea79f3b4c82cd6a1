#!/usr/bin/env python3
"""Capture NVIDIA's driver-branch facts: which branch last drove each GPU, and the first CUDA toolkit of Blackwell.

    python scripts/capture_nvidia_drivers.py --supported-gpus FILE --cutlass-cmake FILE [-o ...]
        [--supported-gpus-source TEXT] [--cutlass-source "NVIDIA/cutlass@COMMIT"]

- ``--supported-gpus``: NVIDIA's ``supported-gpus.json`` (shipped in the Linux driver package, ``supported-gpus/``):
  each row names a PCI device id and, for a GPU the driver no longer supports, the ``legacybranch`` ("470.xx") that
  was the last to drive it. The whole file or a set of its rows (the rows are kept as read).
- ``--cutlass-cmake``: NVIDIA/cutlass ``CMakeLists.txt``; its ``CUTLASS_NVCC_ARCHS_SUPPORTED`` lists, each under
  ``if (CUDA_VERSION VERSION_GREATER_EQUAL 12.8)``, give the first CUDA toolkit whose compiler targets each compute
  capability (``103a`` counts for 10.3). Only the capabilities clang's table lacks are used by the audit.

Both files are read as text (nothing of them run). Writes ``evidence/nvidia-drivers.json``: device id -> the last
branch that drives it (null: the current branches do), and compute capability -> first toolkit. The audit checks
the matrix's ``cuda.gpu_driver_last`` and ``cuda.gpu_driver_floor`` against it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "nvidia-drivers.json"


def legacy_branches(data: dict[str, object]) -> dict[str, dict[str, str | None]]:
    """"1180" -> {"name": "GeForce GTX 680", "last_branch": "470"}: the rows without a subsystem id (a subsystem row
    names a board of the same device), else the device's first row."""
    out: dict[str, dict[str, str | None]] = {}
    for row in data["chips"]:  # type: ignore[attr-defined]
        device = str(row["devid"]).lower().removeprefix("0x")
        if device in out and "subdevid" in row:
            continue
        branch = row.get("legacybranch")
        out[device] = {"name": row["name"], "last_branch": str(branch).split(".")[0] if branch else None}
    return dict(sorted(out.items()))


def first_toolkits(text: str) -> dict[str, str]:
    """"10.3" -> "12.9": the lowest ``CUDA_VERSION VERSION_GREATER_EQUAL`` bound under which CUTLASS lists each
    architecture (an ``else()`` of ``VERSION_LESS X`` holds from X on)."""
    out: dict[str, tuple[int, ...]] = {}
    stack: list[list[tuple[int, ...]]] = []  # per open if: [its lower bound, its VERSION_LESS bound]
    for line in text.splitlines():
        line = line.strip()
        if m := re.match(r"if\s*\((.*)\)\s*$", line):
            lower = max((_version(v) for v in re.findall(r"VERSION_GREATER_EQUAL\s+([0-9.]+)", m[1])), default=())
            less = max((_version(v) for v in re.findall(r"VERSION_LESS\s+([0-9.]+)", m[1])), default=())
            stack.append([lower, less])
        elif re.match(r"else\s*\(\s*\)", line) and stack:
            stack[-1] = [stack[-1][1], ()]
        elif re.match(r"endif\s*\(", line) and stack:
            stack.pop()
        elif m := re.match(r"list\(APPEND\s+CUTLASS_NVCC_ARCHS_SUPPORTED\s+([^)]*)\)", line):
            bound = max((row[0] for row in stack), default=())
            for arch in m[1].split():
                if bound and (digits := re.fullmatch(r"([0-9]+)([0-9])[a-z]?", arch)):
                    cc = f"{digits[1]}.{digits[2]}"
                    out[cc] = min(out.get(cc, bound), bound)
    return {cc: ".".join(map(str, v)) for cc, v in sorted(out.items(), key=lambda kv: _version(kv[0]))}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--supported-gpus", type=Path, required=True)
    parser.add_argument("--supported-gpus-source", default="NVIDIA's supported-gpus.json (the Linux driver package)")
    parser.add_argument("--cutlass-cmake", type=Path, required=True)
    parser.add_argument("--cutlass-source", default="NVIDIA/cutlass CMakeLists.txt")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = {"sources": {"last_branch": args.supported_gpus_source,
                        "first_toolkit": f"{args.cutlass_source} (CUTLASS_NVCC_ARCHS_SUPPORTED)"},
            "devices": legacy_branches(json.loads(args.supported_gpus.read_text(encoding="utf-8"))),
            "first_toolkit": first_toolkits(args.cutlass_cmake.read_text(encoding="utf-8"))}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['devices'])} devices, {len(data['first_toolkit'])} toolkits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
