"""Benchmark `plan --online` against a loopback index the size of download.pytorch.org/whl/torch/.

Prints median wall times (ms) of the CLI as a subprocess: the offline plan, a cold online plan (empty cache:
fetch, parse, merge), and a warm one (fresh cache: no request), each without and with the default index (a
loopback replica serving its captured torch page, ~1,000 files) as the second source, and `python -c pass` for
scale. The target for a warm plan is within 20 ms of the offline plan, and the default index's share within
20 ms. Commands run with byte code cached, as an installed package does.
Run: .venv/bin/python bench/bench_online.py [runs]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pytest_httpserver import HTTPServer  # noqa: E402

from console import CLI  # noqa: E402
from index_pages import serve_index  # noqa: E402

PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64")
PYTHONS = ("cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp313-cp313t", "cp314-cp314")
VARIANTS = ("cpu", "cu126", "cu128", "cu129", "cu130", "cu132", "cu134", "rocm6.4", "rocm7.2", "rocm7.14", "xpu")


def index_rows() -> list[tuple[str, str, str | None]]:
    """About 8,000 files: 2.0.0 … 2.16.0 patch releases × variants × Pythons × platforms."""
    versions = [f"2.{minor}.{patch}" for minor in range(17) for patch in range(3 if minor < 10 else 2)]
    rows = []
    for version in versions:
        new = version.startswith("2.16.")
        for variant in VARIANTS:
            if variant in ("cu134", "rocm7.14") and not new:  # the made-up future variants: 2.16 only
                continue
            for python in PYTHONS:
                for platform in PLATFORMS:
                    if variant.startswith("rocm") and platform != PLATFORMS[0]:
                        continue
                    rows.append((variant, f"torch-{version}+{variant}-{python}-{platform}.whl", ">=3.10"))
    return rows


def timed(argv: list[str], env: dict[str, str], runs: int, fresh_cache: Path | None = None) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of ``runs`` runs. CPU time (user + system of the child) is what to compare on a
    busy machine: it does not count time spent waiting for a core."""
    import resource

    walls, cpus = [], []
    for i in range(runs):
        if fresh_cache is not None:
            env = {**env, "TORCH_INSTALL_CACHE_DIR": str(fresh_cache / f"run{i}")}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        if result.returncode not in (0, 1) or result.stderr:
            raise SystemExit(f"{' '.join(argv)} failed: {result.stderr.strip()}")
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    import logging
    import os

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log lines between the figures
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    server = HTTPServer()
    server.start()
    try:
        rows = index_rows()
        base = serve_index(server, rows)
        pages = Path(__file__).resolve().parents[1] / "scripts" / "reference" / "default-index"
        server.expect_request("/simple/torch/").respond_with_data(
            (pages / "torch.json").read_text(encoding="utf-8"), content_type="application/vnd.pypi.simple.v1+json")
        default_index = server.url_for("/simple/")
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "target.json"
            target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                          "nvidia_driver": "600.10", "gpus": [{"vendor": "nvidia",
                                                                               "compute_capability": "8.9"}]}))
            # as installed: byte code cached (in a private prefix, so the source tree stays clean)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env.update(TORCH_INSTALL_CACHE_DIR=str(Path(tmp) / "warm"), PYTHONPYCACHEPREFIX=str(Path(tmp) / "pyc"),
                       TORCH_INSTALL_DEFAULT_INDEX="none")
            both = {**env, "TORCH_INSTALL_DEFAULT_INDEX": default_index,
                    "TORCH_INSTALL_CACHE_DIR": str(Path(tmp) / "warm-both")}
            plan = [*CLI, "plan", "--format", "json", "--target", str(target)]
            online = [*plan, "--online", "--index-base", base]
            cold_ms = timed(online, env, runs, fresh_cache=Path(tmp) / "cold")
            cold_both_ms = timed(online, both, runs, fresh_cache=Path(tmp) / "cold-both")
            subprocess.run(online, env=env, capture_output=True, check=False)  # fill the warm caches
            subprocess.run(online, env=both, capture_output=True, check=False)
            offline, warm, warm_both, nothing = [], [], [], []
            for _ in range(runs):  # interleaved, so load on the machine affects all alike
                offline.append(timed(plan, env, 1))
                warm.append(timed(online, env, 1))
                warm_both.append(timed(online, both, 1))
                nothing.append(timed([sys.executable, "-c", "pass"], env, 1))
            offline_ms = tuple(statistics.median(x[i] for x in offline) for i in (0, 1))
            warm_ms = tuple(statistics.median(x[i] for x in warm) for i in (0, 1))
            warm_both_ms = tuple(statistics.median(x[i] for x in warm_both) for i in (0, 1))
            pass_ms = tuple(statistics.median(x[i] for x in nothing) for i in (0, 1))
        size = sum(len(r[1]) for r in rows)
        print(f"index: {len(rows)} files on {base}/torch/ (~{size // 1024} KiB of names), {runs} runs, median")
        print("                       wall ms   CPU ms")
        print(f"offline plan          {offline_ms[0]:7.1f}  {offline_ms[1]:7.1f}")
        print(f"online plan, cold     {cold_ms[0]:7.1f}  {cold_ms[1]:7.1f}   (fetch + parse + merge, empty cache)")
        print(f"online plan, warm     {warm_ms[0]:7.1f}  {warm_ms[1]:7.1f}   (vs offline: wall "
              f"{warm_ms[0] - offline_ms[0]:+.1f}, CPU {warm_ms[1] - offline_ms[1]:+.1f}; target ≤ +20)")
        print(f"+ default index, cold {cold_both_ms[0]:7.1f}  {cold_both_ms[1]:7.1f}   (vs cold without it: wall "
              f"{cold_both_ms[0] - cold_ms[0]:+.1f}, CPU {cold_both_ms[1] - cold_ms[1]:+.1f})")
        print(f"+ default index, warm {warm_both_ms[0]:7.1f}  {warm_both_ms[1]:7.1f}   (vs warm without it: wall "
              f"{warm_both_ms[0] - warm_ms[0]:+.1f}, CPU {warm_both_ms[1] - warm_ms[1]:+.1f}; target ≤ +20)")
        print(f"python -c pass        {pass_ms[0]:7.1f}  {pass_ms[1]:7.1f}   (warm online with both sources: "
              f"{warm_both_ms[0] / pass_ms[0]:.1f}x wall)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
