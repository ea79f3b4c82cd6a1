"""Wall time of `torch-install plan --target F --format json` (budget: 100 ms median), next to `python -c pass`.

Runs each command alternately in fresh processes and prints medians and the ratio to the bare interpreter
start measured in the same run. Usage: python bench/bench_plan.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from console import CLI

BUDGET_MS = 100.0
TARGET = {
    "os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39", "nvidia_driver": "570.133.07",
    "gpus": [{"vendor": "nvidia", "name": "GeForce RTX 4090", "pci_id": "10de:2684", "compute_capability": "8.9"}],
}


def wall_ms(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        # As installed: byte code cached (in a private prefix, so the source tree stays clean).
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        target = Path(tmp) / "target.json"
        target.write_text(json.dumps(TARGET))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "plan --target F --format json": [*CLI, "plan", "--target", str(target), "--format", "json"],
            "plan --target F (text)": [*CLI, "plan", "--target", str(target)],
        }
        check = subprocess.run(commands["plan --target F --format json"], capture_output=True, text=True, env=env,
                               check=False)
        if check.returncode not in (0, 1):
            sys.stderr.write(f"plan failed (exit {check.returncode}): {check.stderr.strip()}\n")
            return 1
        for argv in commands.values():  # warm the file and byte-code caches
            wall_ms(argv, env)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                samples[name].append(wall_ms(argv, env))
    base = statistics.median(samples["python -c pass"])
    print(f"{'command':34} {'median ms':>10} {'min ms':>8} {'x python':>9}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:34} {median:10.1f} {min(values):8.1f} {median / base:9.2f}")
    plan_median = statistics.median(samples["plan --target F --format json"])
    verdict = "within" if plan_median <= BUDGET_MS else "OVER"
    print(f"plan --format json median {plan_median:.1f} ms: {verdict} the {BUDGET_MS:.0f} ms budget ({runs} runs)")
    return 0 if plan_median <= BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
