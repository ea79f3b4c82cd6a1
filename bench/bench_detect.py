"""Benchmark ``torch-install detect`` (prints figures; not a test).

Measures, in one run so the figures are comparable:
  * ``python -c pass`` (interpreter start-up, the floor),
  * ``torch-install detect --json --sysroot <8-GPU fixture>`` as a fresh process,
  * in-process detection on the same fixture,
and checks that detection spawned no subprocess: the command process must not even import ``subprocess``,
and the in-process probe must record no command. The command runs with byte code cached, as an installed
package does (in a private cache prefix, so the source tree stays clean).

Usage: python bench/bench_detect.py [--runs N] [--sysroot DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "sysroots" / "nvidia-8xh100"


def wall(argv: list[str], runs: int, env: dict[str, str] | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return times


def in_process(sysroot: Path, runs: int) -> tuple[list[float], int]:
    sys.path.insert(0, str(ROOT / "src"))
    from torch_install.detectors import detect
    from torch_install.probe import Probe

    detect(Probe(root=sysroot))  # warm: imports and table loading are start-up costs, measured above
    times, commands = [], 0
    for _ in range(runs):
        probe = Probe(root=sysroot)
        start = time.perf_counter()
        detect(probe)
        times.append(time.perf_counter() - start)
        commands += len(probe.accessed.commands)
    return times, commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--sysroot", type=Path, default=FIXTURE)
    args = parser.parse_args()
    python = sys.executable
    detect_argv = [python, "-c", "import sys; from torch_install.cli import console; sys.exit(console())",
                   "detect", "--json", "--sysroot", str(args.sysroot)]
    probe_argv = [python, "-c", "import sys; from torch_install.cli import main; main(); "
                  "sys.stderr.write(str('subprocess' in sys.modules))", *detect_argv[3:]]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        spawned = subprocess.run(probe_argv, check=True, capture_output=True, text=True, env=env).stderr.strip()
        floor = statistics.median(wall([python, "-c", "pass"], args.runs, env))
        command = statistics.median(wall(detect_argv, args.runs, env))
    times, commands = in_process(args.sysroot, args.runs * 5)
    detection = statistics.median(times)
    print(f"python -c pass                         median {floor * 1000:7.1f} ms")
    print(f"torch-install detect --json --sysroot  median {command * 1000:7.1f} ms  "
          f"({command / floor:.2f}x python -c pass; target < 80 ms)")
    print(f"in-process detect(Probe(root=...))     median {detection * 1000:7.2f} ms  (target < 5 ms)")
    print(f"commands run by detection on the fixture: {commands} (expected 0); "
          f"subprocess module imported by the command: {spawned} (expected False)")


if __name__ == "__main__":
    main()
