"""The costs that grow with the input: a large index page, other packages, another environment, many GPUs.

Prints, for each case, the median wall and CPU time of the command as a fresh process (and its peak RSS where the
page size matters), each with its ratio to ``python -c pass`` measured in the same run:

* ``plan --online`` against a loopback torch page of 100,000 files (and 10,000), HTML and PEP 691 JSON: cold
  (empty cache), warm (within the cache's TTL: no request) and revalidated (TTL 0: a conditional request the
  server answers 304);
* a plain plan and a plan with other packages (``torch torchvision transformers "numpy<2"``);
* ``doctor --python`` on a venv holding the metadata of an installed torch;
* ``detect --sysroot`` on a generated machine with 64 and with 1,024 NVIDIA GPUs (per-GPU cost).

The plans and the doctor run interleaved with ``python -c pass`` (A B C A B C …) and their CPU ratios are paired
(the median of run-by-run ratios), so a machine whose speed drifts during the run slows both sides alike; the
page and GPU cases run one after another, against that floor's median. The console script beside the interpreter
is what is timed.

Run it from a non-editable install with byte code written (``unset PYTHONDONTWRITEBYTECODE``):
    python bench/bench_scale.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

from console import CLI

ROOT = Path(__file__).resolve().parents[1]
TARGET = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39", "nvidia_driver": "580.82.07",
          "gpus": [{"vendor": "nvidia", "name": "GeForce RTX 4090", "pci_id": "10de:2684",
                    "compute_capability": "8.9"}]}
MEASURE = """
import resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{usage.ru_utime + usage.ru_stime} {usage.ru_maxrss} {wall}")
"""  # the command's own wall time, CPU and peak RSS (not this wrapper's)


def page_rows(count: int) -> list[str]:
    """``count`` wheel names, as a PyTorch index torch page lists them: releases x variants x Pythons x
    platforms, newest releases first until the count is reached."""
    variants = ("cpu", "cu118", "cu121", "cu124", "cu126", "cu128", "cu129", "cu130", "cu132", "rocm6.4",
                "rocm7.2", "xpu")
    pythons = ("cp39-cp39", "cp310-cp310", "cp311-cp311", "cp312-cp312", "cp313-cp313", "cp313-cp313t",
               "cp314-cp314", "cp314-cp314t")
    platforms = ("manylinux_2_28_x86_64", "manylinux_2_28_aarch64", "win_amd64", "linux_x86_64")
    names: list[str] = []
    minor, patch = 15, 0
    while len(names) < count:  # 2.15.0 … 2.0.0, then 2.15.1 … and so on: release versions, as the index has
        version = f"2.{minor}.{patch}"
        names += [f"torch-{version}+{v}-{py}-{pl}.whl" for v in variants for py in pythons for pl in platforms]
        minor, patch = (minor - 1, patch) if minor > 0 else (15, patch + 1)
    return names[:count]


def render(names: list[str], form: str) -> bytes:
    if form == "json":
        files = [{"filename": n, "url": f"/whl/{n.split('+')[1].split('-')[0]}/{quote(n)}",
                  "hashes": {"sha256": hashlib.sha256(n.encode()).hexdigest()}, "requires-python": ">=3.9"}
                 for n in names]
        return json.dumps({"meta": {"api-version": "1.1"}, "name": "torch", "files": files}).encode()
    lines = ["<!DOCTYPE html>", "<html>", "  <body>", "    <h1>Links for torch</h1>"]
    lines += [f'    <a href="/whl/{n.split("+")[1].split("-")[0]}/{quote(n)}#sha256='
              f'{hashlib.sha256(n.encode()).hexdigest()}" data-requires-python="&gt;=3.9">{n}</a><br/>'
              for n in names]
    return "\n".join([*lines, "  </body>", "</html>", ""]).encode()


def serve(pages: dict[str, tuple[bytes, str]]) -> tuple[ThreadingHTTPServer, str]:
    """A loopback server of ``path -> (body, content type)`` with an ETag, answering If-None-Match with 304."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server interface)
            body, kind = pages.get(self.path, (b"", ""))
            if not kind:
                self.send_response(404)
                self.end_headers()
                return
            tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == tag:
                self.send_response(304)
                self.send_header("ETag", tag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", tag)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def run(argv: list[str], env: dict[str, str], runs: int, before: list[str] | None = None,
        prepare: object = None) -> tuple[float, float, float]:
    """Median (wall ms, CPU ms, peak RSS MiB) of ``argv`` as a fresh process; ``prepare(i)`` runs before each."""
    walls, cpus, rss = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "usage"
        for i in range(runs):
            if callable(prepare):
                prepare(i)
            subprocess.run([sys.executable, "-c", MEASURE, str(out), *argv], env=env, check=False)
            cpu, peak, wall = out.read_text().split()
            walls.append(float(wall) * 1000)
            cpus.append(float(cpu) * 1000)
            rss.append(int(peak) / 1024)
    return statistics.median(walls), statistics.median(cpus), statistics.median(rss)


def interleaved(cases: dict[str, list[str]], env: dict[str, str], runs: int
                ) -> dict[str, list[tuple[float, float, float]]]:
    """Each case run in turn (A B C A B C …), so a machine whose speed drifts slows them all alike: per case, its
    runs' (wall ms, CPU ms, peak RSS MiB)."""
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "usage"
        for _ in range(runs):
            for name, argv in cases.items():
                subprocess.run([sys.executable, "-c", MEASURE, str(out), *argv], env=env, check=False)
                cpu, peak, wall = out.read_text().split()
                samples[name].append((float(wall) * 1000, float(cpu) * 1000, int(peak) / 1024))
    return samples


def paired(runs: list[tuple[float, float, float]], against: list[tuple[float, float, float]]
           ) -> tuple[float, float, float, float]:
    """Medians of ``runs`` (wall, CPU, RSS) and the median of their run-by-run CPU ratios to ``against``."""
    return (*(statistics.median(r[i] for r in runs) for i in range(3)),
            statistics.median(r[1] / a[1] for r, a in zip(runs, against, strict=True)))


def line(name: str, measured: tuple[float, ...], floor: tuple[float, ...], rss: bool = False) -> None:
    """One case: wall and CPU medians with their ratios to the floor's (the paired ratio where measured so)."""
    wall, cpu, peak = measured[:3]
    extra = f", peak RSS {peak:.0f} MiB" if rss else ""
    ratio = measured[3] if len(measured) > 3 else cpu / floor[1]
    print(f"  {name:<46} {wall:7.1f} ms wall ({wall / floor[0]:4.1f}x)  {cpu:7.1f} ms CPU "
          f"({ratio:4.2f}x){extra}")


def gpu_sysroot(root: Path, count: int) -> Path:
    """A machine with ``count`` RTX 4090s, in the form detection reads (sysfs PCI devices, the NVIDIA proc files)."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "proc" / "driver" / "nvidia" / "gpus").mkdir(parents=True)
    (root / "proc" / "driver" / "nvidia" / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.82.07  Wed Aug 27 16:35:04 UTC 2025\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    (root / "sys" / "module" / "nvidia").mkdir(parents=True)
    (root / "sys" / "module" / "nvidia" / "version").write_text("580.82.07\n")
    for i in range(count):
        slot = f"0000:{(i // 32) + 1:02x}:{i % 32:02x}.0"
        device = root / "sys" / "bus" / "pci" / "devices" / slot
        device.mkdir(parents=True)
        for name, value in (("vendor", "0x10de"), ("device", "0x2684"), ("class", "0x030000")):
            (device / name).write_text(value + "\n")
        gpu = root / "proc" / "driver" / "nvidia" / "gpus" / slot
        gpu.mkdir(parents=True)
        (gpu / "information").write_text(f"Model: \t\t NVIDIA GeForce RTX 4090\nIRQ:   \t\t {100 + i}\n"
                                          f"Bus Location: \t {slot}\nDevice Minor: \t {i}\n")
    (root / "_host.json").write_text(json.dumps({"system": "Linux", "machine": "x86_64", "python_version": "3.12.4",
                                                 "libc": "glibc 2.39"}))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs, and the 10,000-file page only")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: every start recompiles the sources (unset it to time)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", "NO_COLOR": "1",
               "TORCH_INSTALL_CACHE_DIR": str(work / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        target = work / "target.json"
        target.write_text(json.dumps(TARGET))
        plan = [*CLI, "plan", "--target", str(target), "--format", "json"]
        subprocess.run([*plan], env=env, stdout=subprocess.DEVNULL, check=False)  # byte code written once
        venv = work / "venv"  # another environment, holding the metadata of an installed torch
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next((venv / "lib").glob("python*/site-packages"))
        for item in (ROOT / "tests" / "fixtures" / "site-packages" / "healthy-2.9.1-cu128").iterdir():
            (shutil.copytree if item.is_dir() else shutil.copy)(item, site / item.name)
        cheap = interleaved({
            "floor": [sys.executable, "-c", "pass"],
            "plan": plan,
            "others": [*CLI, "plan", "torch", "torchvision", "transformers", "numpy<2", "--target", str(target),
                       "--format", "json"],
            "doctor": [*CLI, "doctor", "--python", str(venv / "bin" / "python")],
        }, env, max(runs, 11))
        floor = paired(cheap["floor"], cheap["floor"])
        print(f"python -c pass: {floor[0]:.1f} ms wall, {floor[1]:.1f} ms CPU ({max(runs, 11)} runs each, "
              "interleaved with the commands below, medians; ratios paired)")

        print("plans:")
        line("plan --target F --format json", paired(cheap["plan"], cheap["floor"]), floor)
        line("plan torch torchvision transformers numpy<2", paired(cheap["others"], cheap["floor"]), floor)
        print(f"  {'':<46} other packages: {paired(cheap['others'], cheap['plan'])[3]:.2f}x the plain plan's CPU "
              "(paired)")
        print("doctor of another environment:")
        line("doctor --python VENV (torch 2.9.1 metadata)", paired(cheap["doctor"], cheap["floor"]), floor)

        print("online, a loopback torch page:")
        sizes = (10_000,) if args.quick else (10_000, 100_000)
        for size in sizes:
            names = page_rows(size)
            for form in ("html", "json"):
                kind = "application/vnd.pypi.simple.v1+json" if form == "json" else "text/html"
                server, base = serve({"/whl/torch/": (render(names, form), kind)})
                online = [*plan, "--online", "--index-base", f"{base}/whl", "--allow-insecure-index"]
                cache = work / f"cache-{size}-{form}"

                def empty(_: int, cache: Path = cache) -> None:
                    shutil.rmtree(cache, ignore_errors=True)

                cold = run(online, {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}, runs, prepare=empty)
                warm = run(online, {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}, runs)
                again = run(online, {**env, "TORCH_INSTALL_CACHE_DIR": str(cache), "TORCH_INSTALL_INDEX_TTL": "0"},
                            runs)
                server.shutdown()
                line(f"{size:,} files {form}: cold", cold, floor, rss=True)
                line(f"{size:,} files {form}: warm", warm, floor, rss=True)
                line(f"{size:,} files {form}: revalidated (304)", again, floor, rss=True)
                print(f"  {'':<46} revalidation: warm + {again[0] - warm[0]:.0f} ms wall")

        print("detection, many GPUs:")
        per = {}
        for count in (64, 1024):
            root = gpu_sysroot(work / f"gpus{count}", count)
            measured = run([*CLI, "detect", "--json", "--sysroot", str(root)], env, runs)
            line(f"detect --json --sysroot <{count} GPUs>", measured, floor)
            per[count] = (measured[1] - floor[1]) / count
        print(f"  {'':<46} CPU per GPU: {per[64]:.3f} ms at 64, {per[1024]:.3f} ms at 1,024 "
              f"({per[1024] / per[64]:.2f}x)")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"(this script: {usage.ru_maxrss / 1024:.0f} MiB peak; load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
