"""Instructions executed by whole torch-install commands (valgrind callgrind), next to ``python -c pass``.

Instruction counts do not move with the machine's load, so two versions of the code can be compared on a shared,
noisy machine where wall times vary by ±20 ms. Usage: ``python bench/bench_instructions.py [--src DIR ...]``:
each ``--src`` is a ``src`` directory (another checkout's) measured beside this one. Needs valgrind.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from console import CLI

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "sysroots" / "nvidia-8xh100"
RTX_4090 = {"vendor": "nvidia", "name": "GeForce RTX 4090", "pci_id": "10de:2684", "compute_capability": "8.9"}
TARGET = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39", "nvidia_driver": "570.133.07",
          "gpus": [RTX_4090]}


def instructions(argv: list[str], env: dict[str, str]) -> int:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)  # byte code
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=False)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if not match:
        raise SystemExit(f"valgrind gave no count for {argv}: {done.stderr.strip()[-300:]}")
    return int(match[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", action="append", default=[], type=Path, help="another src directory to compare")
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        print("valgrind is not installed: no instruction counts", file=sys.stderr)
        return 1
    sources = [ROOT / "src", *args.src]
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "target.json"
        target.write_text(json.dumps(TARGET))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "--version": [*CLI, "--version"],
            "--help": [*CLI, "--help"],
            "detect --json --sysroot <8xH100>": [*CLI, "detect", "--json", "--sysroot", str(FIXTURE)],
            "plan --target F --format json": [*CLI, "plan", "--target", str(target), "--format", "json"],
            "plan --sysroot <8xH100>": [*CLI, "plan", "--sysroot", str(FIXTURE)],
            "plan F torch numpy": [*CLI, "plan", "--target", str(target), "torch", "numpy"],
            "plan F torch xformers (the table)": [*CLI, "plan", "--target", str(target), "torch", "xformers"],
            "plan F torch==2.9.1+cu128": [*CLI, "plan", "--target", str(target), "torch==2.9.1+cu128"],
        }
        print(f"{'command':34}" + "".join(f"{str(s)[-28:]:>30}" for s in sources))
        base: dict[Path, int] = {}
        for name, argv in commands.items():
            cells = []
            for i, src in enumerate(sources):
                env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
                env.update(PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(Path(tmp) / f"pyc{i}"))
                count = instructions(argv, env)
                base.setdefault(src, count)
                cells.append(f"{count / 1e6:10.1f} M ({count / base[src]:4.2f}x)")
            print(f"{name:34}" + "".join(f"{c:>30}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
