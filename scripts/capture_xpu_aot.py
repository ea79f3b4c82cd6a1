#!/usr/bin/env python3
"""Capture the Intel GPU devices each torch minor's XPU build compiles ahead of time, per OS.

    python scripts/capture_xpu_aot.py --repo PATH [-o scripts/reference/evidence/xpu-aot.json]

``--repo`` is a git clone of intel/torch-xpu-ops (the XPU operators PyTorch builds in): at each ``release/2.N``
branch, ``cmake/BuildFlags.cmake`` sets the default ahead-of-time device list, ``if(WIN32) set(AOT_TARGETS "…")
else() set(AOT_TARGETS "…")`` (ocloc's device names: ``pvc``, ``bmg``, ``dg2``, ``mtl-h`` …). The file is read as
text at each branch (``git show``; nothing of it run). Writes ``evidence/xpu-aot.json`` (minor -> its branch's
commit and the Linux and Windows lists), which ``scripts/audit_matrix.py`` checks the matrix's XPU device families
against.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "reference" / "evidence" / "xpu-aot.json"
DEFAULTS = re.compile(r"if\s*\(\s*WIN32\s*\)\s*set\s*\(\s*AOT_TARGETS\s+\"([^\"]+)\"\s*\)\s*else\s*\(\s*\)\s*"
                      r"set\s*\(\s*AOT_TARGETS\s+\"([^\"]+)\"\s*\)")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def aot_lists(text: str) -> dict[str, list[str]] | None:
    """{"linux": [...], "windows": [...]} from a BuildFlags.cmake (None: it sets no default list)."""
    m = DEFAULTS.search(text)
    if not m:
        return None
    return {"linux": [n.strip() for n in m[2].split(",") if n.strip()],
            "windows": [n.strip() for n in m[1].split(",") if n.strip()]}


def capture(repo: Path) -> dict[str, object]:
    branches = re.findall(r"refs/(?:remotes/origin/|heads/)release/(2\.[0-9]+)$",
                          _git(repo, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes"), re.M)
    minors: dict[str, object] = {}
    for minor in sorted(set(branches), key=lambda v: tuple(int(x) for x in v.split("."))):
        ref = next(r for r in (f"origin/release/{minor}", f"release/{minor}")
                   if subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "-q", r],
                                     capture_output=True).returncode == 0)
        lists = aot_lists(_git(repo, "show", f"{ref}:cmake/BuildFlags.cmake"))
        if lists:
            minors[minor] = {"commit": _git(repo, "rev-parse", ref).strip(), **lists}
    return {"source": "intel/torch-xpu-ops release/2.N branches, cmake/BuildFlags.cmake (the default AOT_TARGETS "
                      "per OS)", "minors": minors}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = capture(args.repo)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: {len(data['minors'])} release branches")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
