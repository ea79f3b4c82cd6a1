"""Median in-process time of resolve() for a spread of machines (target < 5 ms each), and of load_matrix().

    python bench/bench_resolve.py [REPEATS]
"""

from __future__ import annotations

import statistics
import sys
import time

from torch_install.machine import Gpu, Machine
from torch_install.resolver import Request, resolve
from torch_install.resolver.matrix import load_matrix, matrix_from_dict

LINUX = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}
MACHINES = {
    "h100-580": Machine(**LINUX, nvidia_driver="580.95.05", gpus=(Gpu("nvidia", "H100", compute_capability="9.0"),)),
    "gtx1080-580 (walks releases)": Machine(**LINUX, nvidia_driver="580.95.05",
                                            gpus=(Gpu("nvidia", "GTX 1080", compute_capability="6.1"),)),
    "mixed 5090+1080Ti (worst case)": Machine(**LINUX, nvidia_driver="580.95.05", gpus=(
        Gpu("nvidia", "RTX 5090", compute_capability="12.0"), Gpu("nvidia", "GTX 1080 Ti", compute_capability="6.1"))),
    "rx6700xt": Machine(**LINUX, gpus=(Gpu("amd", "RX 6700 XT", gfx="gfx1031"),)),
    "cpu": Machine(**LINUX),
}


def median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    start = time.perf_counter()
    matrix = load_matrix()
    print(f"load_matrix (first call, parse + build): {(time.perf_counter() - start) * 1000:.2f} ms")
    import json
    from pathlib import Path

    import torch_install.resolver.matrix as m

    text = (Path(m.__file__).parent / "data" / "torch-matrix.json").read_text()
    parse = median_ms(lambda: matrix_from_dict(json.loads(text)), 50)
    print(f"matrix_from_dict(json.loads(...)) median: {parse:.2f} ms")
    request = Request()
    resolve(MACHINES["cpu"], request, matrix)  # warm lazy imports
    for name, machine in MACHINES.items():
        print(f"resolve {name}: median {median_ms(lambda mc=machine: resolve(mc, request, matrix), repeats):.3f} ms")


if __name__ == "__main__":
    main()
