"""Wall time of `torch-install doctor` (no --import-torch) on a venv holding torch metadata, vs collect_env.

Builds a throwaway venv, copies the 2.9.1 CUDA fixture's dist-infos into it, runs
`torch-install doctor --python <venv>/bin/python` N times and prints the median; then runs
`python -m torch.utils.collect_env` in an environment where torch really imports, when there is one.

    python bench/bench_doctor.py [--runs 15] [--with-torch PYTHON]
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from console import CLI

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "site-packages" / "healthy-2.9.1-cu128"


def wall(argv: list[str], runs: int) -> tuple[float, int]:
    times = []
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        code = subprocess.run(argv, capture_output=True, check=False).returncode
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, code


def torch_imports(python: str) -> bool:
    done = subprocess.run([python, "-c", "import torch"], capture_output=True, check=False, timeout=120)
    return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--with-torch", metavar="PYTHON", help="an interpreter where torch is installed")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "src" / "torch_install", quiet=1)  # as an installed package would be
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "env"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next(venv.glob("lib/python*/site-packages"))
        shutil.copytree(FIXTURE, site, dirs_exist_ok=True)
        python = str(venv / "bin" / "python")
        doctor = [*CLI, "doctor", "--python", python]
        wall(doctor, 2)  # warm the file cache
        median, code = wall(doctor, args.runs)
        print(f"torch-install doctor --python <venv with torch 2.9.1 metadata>: median {median:.0f} ms "
              f"over {args.runs} runs (exit code {code}; budget 300 ms)")
        median, code = wall(doctor + ["--json"], args.runs)
        print(f"torch-install doctor --json: median {median:.0f} ms")
    candidates = [p for p in (args.with_torch, sys.executable) if p]
    with_torch = next((p for p in candidates if torch_imports(p)), None)
    if with_torch is None:
        print("python -m torch.utils.collect_env: not run — torch is not installed in any interpreter given "
              "(pass --with-torch PYTHON where it is)")
        return
    median, code = wall([with_torch, "-m", "torch.utils.collect_env"], max(3, args.runs // 5))
    print(f"python -m torch.utils.collect_env ({with_torch}): median {median:.0f} ms (exit code {code})")
    median, code = wall([*CLI, "doctor", "--python", with_torch], args.runs)
    print(f"torch-install doctor --python {with_torch}: median {median:.0f} ms")


if __name__ == "__main__":
    main()
