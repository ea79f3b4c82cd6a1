#!/usr/bin/env python3
"""Capture NVIDIA's compute capability -> architecture list and the first CUDA toolkit of each architecture.

    python scripts/capture_cuda_archs.py --helper-cuda PATH --clang-cuda PATH [-o scripts/reference/evidence/...]
        [--helper-source "NVIDIA/cuda-samples@COMMIT"] [--clang-source "llvm/llvm-project@COMMIT"]

- ``--helper-cuda``: NVIDIA/cuda-samples ``Common/helper_cuda.h``; its ``_ConvertSMVer2ArchName`` table gives each
  compute capability's architecture ("0x89, "Ada"").
- ``--clang-cuda``: llvm-project ``clang/lib/Basic/Cuda.cpp``; its ``MinVersionForCudaArch`` (or
  ``MinVersionForOffloadArch``) switch gives the first CUDA toolkit whose compiler targets each compute capability.

Both files are read as text (their tables matched, nothing of them run). Writes ``evidence/cuda-archs.json``,
which ``scripts/audit_matrix.py`` checks the NVIDIA chip table, the Jetson table and the matrix's GPU driver floors
against.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "cuda-archs.json"


def arch_names(text: str) -> dict[str, str]:
    """"8.9" -> "Ada": the rows of ``_ConvertSMVer2ArchName``'s table (0xMm: M the major, m the minor, in hex)."""
    body = text.split("_ConvertSMVer2ArchName", 1)[1].split("};", 1)[0]
    return {f"{int(m[1], 16)}.{int(m[2], 16)}": m[3]
            for m in re.finditer(r"\{\s*0x([0-9a-fA-F]+)([0-9a-fA-F])\s*,\s*\"([^\"]+)\"\s*\}", body)}


def first_toolkits(text: str) -> dict[str, str]:
    """"8.9" -> "11.8": each ``case …::SM_89:`` of the minimum-version switch, with the ``CUDA_118`` it returns
    (variants such as sm_90a are left out: the plain capability is what a GPU has)."""
    body = re.split(r"CudaVersion\s+MinVersionFor(?:Cuda|Offload)Arch\s*\(", text, maxsplit=1)[1]
    body = body.split("\n}\n", 1)[0]
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in body.splitlines():
        if m := re.search(r"case\s+\w+::SM_(\d+)(_?)\s*:", line):
            pending.append(m[1])
        elif re.search(r"case\s+\w+::SM_\d+[a-z]\s*:", line):
            continue
        elif m := re.search(r"return\s+CudaVersion::CUDA_(\d+)(\d)\s*;", line):
            for sm in pending:
                out[f"{sm[:-1]}.{sm[-1]}"] = f"{m[1]}.{m[2]}"
            pending = []
        elif "return" in line:
            pending = []
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--helper-cuda", type=Path, required=True)
    parser.add_argument("--helper-source", default="NVIDIA/cuda-samples Common/helper_cuda.h")
    parser.add_argument("--clang-cuda", type=Path, required=True)
    parser.add_argument("--clang-source", default="llvm/llvm-project clang/lib/Basic/Cuda.cpp")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = {"sources": {"arch_names": f"{args.helper_source} (_ConvertSMVer2ArchName)",
                        "first_toolkit": f"{args.clang_source} (MinVersionForCudaArch)"},
            "arch_names": arch_names(args.helper_cuda.read_text(encoding="utf-8")),
            "first_toolkit": first_toolkits(args.clang_cuda.read_text(encoding="utf-8"))}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['arch_names'])} architectures, {len(data['first_toolkit'])} toolkits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
