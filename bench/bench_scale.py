"""The costs of the common commands and of what grows with the input, each beside ``python -c pass`` and uv,
measured in one run.

Each figure is given in CPU (user + system of the command and the children it waits for, median of the runs) and
in instructions (valgrind callgrind, ``PYTHONHASHSEED=0``: the load does not move them), each with its ratio to
``python -c pass`` and to uv's nearest command measured in the same run:

* start-up: ``plan --target F --format json``, the same GPU given by name, a plan with other packages, one with
  a package of the companion table (xformers), a plan of a 2,000-line hashed lock (400 packages,
  ``bench_instructions.hashed_lock``) in JSON and text, ``doctor --python`` of another environment; beside uv's
  own accelerator detection and index choice (``uv pip install torch --torch-backend=auto --dry-run --offline``,
  its cache warm);
* a loopback torch page of 10,000 and 100,000 files, HTML and PEP 691 JSON: cold (empty cache), warm (within the
  cache's TTL: no request) and revalidated (TTL 0: a conditional request the server answers 304, without reading
  the page); beside uv reading the same page cold. The per-file cost is the slope between the two sizes; the
  revalidation's cost above what importing requests and one conditional GET cost in the same process;
* ``detect --sysroot`` with 64 and 1,024 GPUs: the per-GPU cost as the slope between the two;
* a fleet of 10 and 100 ``--target`` profiles (32 distinct, repeated): the per-target cost as the slope, and 100
  targets against the 32 distinct ones.

The start-up commands run interleaved with ``python -c pass`` and uv (A B C A B C …), their CPU ratios paired (the
median of run-by-run ratios), so a machine whose speed drifts slows all alike. CPU is read by a Python parent
(``getrusage``); the peak RSS of the page runs by GNU time where it is installed (a small C parent: the command's
own), else by that Python parent (then with its ~9 MiB in it). uv is multi-threaded: its instructions are those of
all its threads, in its own process (callgrind counts every thread; the children it forks to look for nvidia-smi and
rocm_agent_enumerator, which are not there, are not counted).

Run it from a non-editable install with byte code written (``unset PYTHONDONTWRITEBYTECODE``):
    python bench/bench_scale.py [--runs N] [--quick] [--no-instructions] [--uv PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
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

from bench_instructions import hashed_lock
from console import CLI

ROOT = Path(__file__).resolve().parents[1]
TARGET = {"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.39", "nvidia_driver": "580.82.07",
          "gpus": [{"vendor": "nvidia", "name": "GeForce RTX 4090", "pci_id": "10de:2684",
                    "compute_capability": "8.9"}]}
BY_NAME = {**TARGET, "gpus": [{"vendor": "nvidia", "name": "GeForce RTX 4090"}]}
BY_PCI_ID = {**TARGET, "gpus": [{"vendor": "nvidia", "pci_id": "10de:2684"}]}
FLEET_GPUS = [("GeForce RTX 4090", "10de:2684", "8.9"), ("H100", "10de:2330", "9.0"), ("A100", "10de:20b0", "8.0"),
              ("Tesla V100", "10de:1db4", "7.0"), ("GeForce GTX 1080", "10de:1b80", "6.1"),
              ("Tesla T4", "10de:1eb8", "7.5"), ("L40S", "10de:26b9", "8.9"), ("GeForce RTX 5090", "10de:2b85", "12.0")]
FLEET_DRIVERS = ("550.54.15", "570.124.06", "580.82.07", "535.104.05")
TIME = next((t for t in ("/usr/bin/time",) if os.path.isfile(t)), None) if sys.platform.startswith("linux") else None
MEASURE = """
import resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write(f"{wall} {usage.ru_utime} {usage.ru_stime} {usage.ru_maxrss}")
"""  # the command's own wall time, CPU and peak RSS (not this wrapper's), where GNU time is not installed


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
    """A loopback server of ``path -> (body, content type)``. Each page's ETag is worked out once, here: a
    matching If-None-Match is answered 304 without reading the page. Anything else (a wheel, its HEAD) is 404."""
    tags = {path: '"' + hashlib.sha256(body).hexdigest()[:16] + '"' for path, (body, _) in pages.items()}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server interface)
            tag = tags.get(self.path)
            if tag is None:
                self.send_response(404)
                self.end_headers()
                return
            if self.headers.get("If-None-Match") == tag:
                self.send_response(304)
                self.send_header("ETag", tag)
                self.end_headers()
                return
            body, kind = pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", tag)
            self.end_headers()
            self.wfile.write(body)

        def do_HEAD(self) -> None:  # noqa: N802
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Sample:
    """One run of a command: wall and CPU (ms), peak RSS (MiB)."""

    def __init__(self, wall: float, cpu: float, rss: float) -> None:
        self.wall, self.cpu, self.rss = wall, cpu, rss


def timed(argv: list[str], env: dict[str, str], out: Path) -> Sample:
    """One run: wall and CPU from a Python parent (``getrusage``, to the microsecond), peak RSS from GNU time
    where installed (a C parent: the RSS is the command's own; a Python parent's would include its own ~9 MiB)."""
    subprocess.run([sys.executable, "-c", MEASURE, str(out), *argv], env=env, check=False)
    wall, user, system, peak = out.read_text().split()
    return Sample(float(wall) * 1000, (float(user) + float(system)) * 1000, int(peak) / 1024)


def peak_rss(argv: list[str], env: dict[str, str], out: Path) -> float | None:
    """The command's own peak RSS (MiB) by GNU time, or None where it is not installed."""
    if not TIME:
        return None
    subprocess.run([TIME, "-o", str(out), "-f", "%M", *argv], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return int(out.read_text().split()[-1]) / 1024  # after a "Command exited" line, if any


def median(samples: list[Sample], field: str) -> float:
    return statistics.median(getattr(s, field) for s in samples)


def paired(samples: list[Sample], against: list[Sample]) -> float:
    """The median of the run-by-run CPU ratios."""
    return statistics.median(s.cpu / a.cpu for s, a in zip(samples, against, strict=True))


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """Instructions of one run of ``argv`` (after one untimed run: byte code written, caches as they then are)."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return counted(argv, env)


def counted(argv: list[str], env: dict[str, str]) -> int:
    """Instructions of this run of ``argv`` in its own process (a forked child's, inherited, left out)."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env={**env, "PYTHONHASHSEED": "0"}, check=False)
    own = re.search(r"^==(\d+)== Command:", done.stderr, re.M)
    counts = dict(re.findall(r"^==(\d+)== Collected : (\d+)", done.stderr, re.M))
    if not own or own[1] not in counts:
        raise SystemExit(f"valgrind gave no count for {argv}: {done.stderr.strip()[-300:]}")
    return int(counts[own[1]])


class Report:
    """Prints each figure with its ratios to the floor's and uv's, in CPU and in instructions."""

    def __init__(self, floor: Sample, uv: Sample | None, floor_ic: int | None, uv_ic: int | None) -> None:
        self.floor, self.uv, self.floor_ic, self.uv_ic = floor, uv, floor_ic, uv_ic

    def line(self, name: str, cpu: float, ratio: float | None = None, count: int | None = None, uv_cpu: float | None
             = None, uv_count: int | None = None, extra: str = "") -> None:
        """``ratio``: the paired CPU ratio to the floor where measured so; ``uv_cpu``/``uv_count``: uv's figure to
        compare with (its start-up, by default)."""
        uv_cpu = uv_cpu if uv_cpu is not None else (self.uv.cpu if self.uv else None)
        uv_count = uv_count if uv_count is not None else self.uv_ic
        cells = [f"{cpu:8.1f} ms CPU ({ratio if ratio is not None else cpu / self.floor.cpu:5.2f}x floor"]
        cells[-1] += f", {cpu / uv_cpu:5.2f}x uv)" if uv_cpu else ")"
        if count is not None and self.floor_ic:
            cells.append(f"{count / 1e6:8.1f} M ({count / self.floor_ic:5.2f}x floor"
                         + (f", {count / uv_count:5.2f}x uv)" if uv_count else ")"))
        print(f"  {name:<44} " + "  ".join(cells) + (f"  {extra}" if extra else ""), flush=True)


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


def fleet_targets(work: Path, count: int) -> list[str]:
    """``--target`` arguments for ``count`` Linux machines: 8 GPU models x 4 drivers, 32 distinct profiles, repeated."""
    profiles = [{**TARGET, "glibc": "2.35", "nvidia_driver": driver,
                 "gpus": [{"vendor": "nvidia", "name": name, "pci_id": pci_id, "compute_capability": cc}]}
                for name, pci_id, cc in FLEET_GPUS for driver in FLEET_DRIVERS]
    argv = []
    for i in range(count):
        path = work / f"node{i}.json"
        path.write_text(json.dumps(profiles[i % len(profiles)]))
        argv += ["--target", str(path)]
    return argv


REVALIDATION = """
import contextlib, gc, io, sys
gc.disable()  # as the console script runs a command
from torch_install.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main(sys.argv[3:])
if sys.argv[1] == "get":  # what the revalidation needs: requests, and one conditional GET as the client makes it
    import requests
    with requests.Session() as session:
        url = sys.argv[sys.argv.index("--index-base") + 1] + "/torch/"
        with session.get(url, headers={"If-None-Match": sys.argv[2]}, stream=True, allow_redirects=False,
                         verify=True, timeout=(5, 15)) as response:
            assert response.status_code == 304
"""  # a plan in one process (warm; or at TTL 0, the revalidation), then with "get" requests and one GET answered 304


def uv_command(uv: str, venv: Path) -> list[str]:
    return [uv, "pip", "install", "torch", "--torch-backend=auto", "--dry-run", "--offline", "--python",
            str(venv / "bin" / "python")]


def uv_page_command(uv: str, base: str, target_dir: Path) -> list[str]:
    """uv reading the same loopback page cold: the resolve fails at the chosen wheel's metadata (404)."""
    return [uv, "pip", "install", "torch", "--dry-run", "--no-cache", "--index-url", base,
            "--python-platform", "x86_64-manylinux_2_28", "--python-version", "3.12", "--target", str(target_dir)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 runs, and the 10,000-file page only")
    parser.add_argument("--no-instructions", action="store_true", help="CPU only, without valgrind")
    parser.add_argument("--uv", help="the uv to compare with (default: beside this interpreter, else on PATH)")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    uv = args.uv or next((str(p) for p in (Path(sys.executable).with_name("uv"),) if p.is_file()),
                         shutil.which("uv"))
    counting = not args.no_instructions and shutil.which("valgrind") is not None
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set: every start recompiles the sources (unset it to time)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out = work / "usage"
        env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", "NO_COLOR": "1",
               "TORCH_INSTALL_CACHE_DIR": str(work / "cache"), "UV_CACHE_DIR": str(work / "uv-cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for name, profile in (("target", TARGET), ("by-name", BY_NAME), ("by-pci-id", BY_PCI_ID)):
            (work / f"{name}.json").write_text(json.dumps(profile))
        plan = [*CLI, "plan", "--target", str(work / "target.json"), "--format", "json"]
        subprocess.run(plan, env=env, stdout=subprocess.DEVNULL, check=False)  # byte code written once
        venv = work / "venv"  # another environment, holding the metadata of an installed torch
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = next((venv / "lib").glob("python*/site-packages"))
        for item in (ROOT / "tests" / "fixtures" / "site-packages" / "healthy-2.9.1-cu128").iterdir():
            (shutil.copytree if item.is_dir() else shutil.copy)(item, site / item.name)
        lock = hashed_lock(work / "requirements.txt", 397)  # 2,002 lines
        empty = work / "empty-venv"  # the interpreter uv plans for
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(empty)], check=True)
        cheap = {
            "floor": [sys.executable, "-c", "pass"],
            "plan": plan,
            "by name": [*CLI, "plan", "--target", str(work / "by-name.json"), "--format", "json"],
            "by PCI id": [*CLI, "plan", "--target", str(work / "by-pci-id.json"), "--format", "json"],
            "others": [*CLI, "plan", "torch", "torchvision", "transformers", "numpy<2", "--target",
                       str(work / "target.json"), "--format", "json"],
            "table": [*CLI, "plan", "torch", "xformers", "--target", str(work / "target.json"), "--format", "json"],
            "lock": [*CLI, "plan", "--target", str(work / "target.json"), "-r", str(lock), "--format", "json"],
            "plan text": [*CLI, "plan", "--target", str(work / "target.json")],
            "lock text": [*CLI, "plan", "--target", str(work / "target.json"), "-r", str(lock)],
            "doctor": [*CLI, "doctor", "--python", str(venv / "bin" / "python")],
        }
        if uv:
            cheap["uv"] = uv_command(uv, empty)
            subprocess.run(cheap["uv"], env=env, capture_output=True, check=False)  # its cache: the interpreter
        samples: dict[str, list[Sample]] = {name: [] for name in cheap}
        for _ in range(max(runs, 11)):
            for name, argv in cheap.items():
                samples[name].append(timed(argv, env, out))
        count = {name: instructions(argv, env) for name, argv in cheap.items()} if counting else {}
        floor = Sample(median(samples["floor"], "wall"), median(samples["floor"], "cpu"),
                       median(samples["floor"], "rss"))
        uv_start = Sample(0, median(samples["uv"], "cpu"), median(samples["uv"], "rss")) if uv else None
        report = Report(floor, uv_start, count.get("floor"), count.get("uv"))
        load = os.getloadavg()[0]
        floor_rss = peak_rss(cheap["floor"], env, out)
        print(f"python -c pass: {floor.cpu:.1f} ms CPU, {floor_rss or floor.rss:.1f} MiB peak"
              + (f", {count['floor'] / 1e6:.1f} M instructions" if counting else "")
              + f" ({max(runs, 11)} runs each, interleaved; load average {load:.2f}; "
              f"peak RSS by {'GNU time' if TIME else 'a Python parent'})")
        if uv:
            print(f"{subprocess.run([uv, '--version'], capture_output=True, text=True).stdout.strip()}: "
                  f"`pip install torch --torch-backend=auto --dry-run --offline` (its own detection, cache warm): "
                  f"{uv_start.cpu:.1f} ms CPU" + (f", {count['uv'] / 1e6:.1f} M instructions" if counting else ""))
        print("start-up (ratios to uv: its --torch-backend=auto dry run):")
        for name, label in (("plan", "plan --target F --format json"),
                            ("by name", "the same, GPU by name"), ("by PCI id", "the same, GPU by PCI id"),
                            ("others", "plan torch torchvision transformers numpy<2"),
                            ("table", "plan torch xformers (the companion table)"),
                            ("lock", "plan -r <2,000-line hashed lock> (json)"),
                            ("lock text", "the same, text"),
                            ("doctor", "doctor --python VENV (torch 2.9.1 metadata)")):
            report.line(label, median(samples[name], "cpu"), paired(samples[name], samples["floor"]),
                        count.get(name))
        print(f"  {'':<44} other packages: {paired(samples['others'], samples['plan']):.2f}x the plain plan's CPU "
              "(paired)" + (f", {count['others'] / count['plan']:.3f}x its instructions" if counting else ""))
        print(f"  {'':<44} 2,000-line lock: {paired(samples['lock'], samples['plan']):.2f}x (json), "
              f"{paired(samples['lock text'], samples['plan text']):.2f}x (text) the plain plan's CPU (paired)"
              + (f", {count['lock'] / count['plan']:.3f}x / {count['lock text'] / count['plan text']:.3f}x its "
                 "instructions" if counting else ""))
        if counting:
            print(f"  {'':<44} GPU by name: {count['by name'] / count['by PCI id']:.3f}x the plan by PCI id "
                  "in instructions")

        print("online, a loopback torch page (ratios to uv: uv reading the same page cold):")
        sizes = (10_000,) if args.quick else (10_000, 100_000)
        cold_counts: dict[str, dict[int, int]] = {"html": {}, "json": {}}
        for size in sizes:
            names = page_rows(size)
            for form in ("html", "json"):
                kind = "application/vnd.pypi.simple.v1+json" if form == "json" else "text/html"
                body = render(names, form)
                server, base = serve({"/whl/torch/": (body, kind)})
                tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'  # the server's, as serve() makes it
                online = [*plan, "--online", "--index-base", f"{base}/whl", "--allow-insecure-index"]
                cache = work / f"cache-{size}-{form}"
                page_env = {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}
                fresh = {**page_env, "TORCH_INSTALL_INDEX_TTL": "0"}
                cold, warm, again, uv_cold = [], [], [], []
                for _ in range(runs):
                    shutil.rmtree(cache, ignore_errors=True)
                    cold.append(timed(online, page_env, out))
                    warm.append(timed(online, page_env, out))
                    again.append(timed(online, fresh, out))
                    if uv:
                        uv_cold.append(timed(uv_page_command(uv, f"{base}/whl", work / "uv-target"), env, out))
                uv_cpu = median(uv_cold, "cpu") if uv else None
                counts: dict[str, int] = {}
                if counting:
                    shutil.rmtree(cache, ignore_errors=True)
                    counts["cold"] = cold_counts[form][size] = counted(online, page_env)
                    counts["warm"] = counted(online, page_env)
                    counts["again"] = counted(online, fresh)
                    if uv:
                        counts["uv"] = counted(uv_page_command(uv, f"{base}/whl", work / "uv-target"), env)
                    python = str(Path(CLI[0]).with_name("python")) if len(CLI) == 1 else sys.executable
                    plain = counted([python, "-c", REVALIDATION, "warm", tag, *online[1:]], page_env)
                    request = counted([python, "-c", REVALIDATION, "get", tag, *online[1:]], page_env)
                    reval = counted([python, "-c", REVALIDATION, "warm", tag, *online[1:]], fresh)
                shutil.rmtree(cache, ignore_errors=True)
                rss = {"cold": peak_rss(online, page_env, out), "warm": peak_rss(online, page_env, out),
                       "again": peak_rss(online, fresh, out)}
                if uv:
                    rss["uv"] = peak_rss(uv_page_command(uv, f"{base}/whl", work / "uv-target"), env, out)
                server.shutdown()
                for label, measured, key in (("cold", cold, "cold"), ("warm", warm, "warm"),
                                             ("revalidated (304)", again, "again")):
                    peak = rss[key] if rss[key] is not None else median(measured, "rss")
                    report.line(f"{size:,} files {form}: {label}", median(measured, "cpu"), count=counts.get(key),
                                uv_cpu=uv_cpu, uv_count=counts.get("uv"), extra=f"peak RSS {peak:.0f} MiB")
                if uv:
                    peak = rss["uv"] if rss["uv"] is not None else median(uv_cold, "rss")
                    report.line(f"{size:,} files {form}: uv, cold", uv_cpu or 0, count=counts.get("uv"),
                                uv_cpu=uv_cpu, uv_count=counts.get("uv"), extra=f"peak RSS {peak:.0f} MiB")
                if counting:
                    print(f"  {'':<44} revalidation: {(counts['again'] - counts['warm']) / 1e6:+.1f} M over warm; "
                          f"{(reval - request) / 1e6:+.1f} M over the warm plan, importing requests and one "
                          f"conditional GET in one process ({(request - plain) / 1e6:.1f} M of it)")
        if counting and len(sizes) > 1:
            low, high = sizes
            for form in ("html", "json"):
                slope = (cold_counts[form][high] - cold_counts[form][low]) / (high - low)
                print(f"  {'':<44} cold, {form}: {slope / 1e3:.1f} k instructions a file "
                      f"(slope {low:,} -> {high:,} files)")

        print("detection, many GPUs (per GPU: the slope between the two sizes):")
        gpus: dict[int, tuple[float, int | None]] = {}
        for size in (64, 1024):
            root = gpu_sysroot(work / f"gpus{size}", size)
            argv = [*CLI, "detect", "--json", "--sysroot", str(root)]
            measured = [timed(argv, env, out) for _ in range(runs)]
            gpus[size] = (median(measured, "cpu"), instructions(argv, env) if counting else None)
            report.line(f"detect --json --sysroot <{size} GPUs>", gpus[size][0], count=gpus[size][1])
        cpu_slope = (gpus[1024][0] - gpus[64][0]) / 960
        line = f"  {'':<44} per GPU: {cpu_slope:.3f} ms CPU"
        if counting:
            line += f", {((gpus[1024][1] or 0) - (gpus[64][1] or 0)) / 960 / 1e6:.2f} M instructions"
        print(line)

        print("several targets, --format json (per target: the slope between the two sizes):")
        fleet: dict[int, tuple[float, int | None, int]] = {}
        for size in (10, 32, 100):
            argv = [*CLI, "plan", *fleet_targets(work, size), "--format", "json"]
            answer = len(subprocess.run(argv, env=env, capture_output=True, check=False).stdout)
            measured = [timed(argv, env, out) for _ in range(runs)]
            fleet[size] = (median(measured, "cpu"), instructions(argv, env) if counting else None, answer)
            report.line(f"{size} targets (of {min(size, 32)} profiles)", fleet[size][0], count=fleet[size][1],
                        extra=f"answer {answer / 1024:.0f} KiB")
        line = f"  {'':<44} per target: {(fleet[100][0] - fleet[10][0]) / 90:.2f} ms CPU"
        if counting:
            ten, thirty_two, hundred = (fleet[n][1] or 0 for n in (10, 32, 100))
            line += (f", {(hundred - ten) / 90 / 1e6:.2f} M instructions; 100 targets of 32 profiles over a plain "
                     f"plan: {(hundred - count['plan']) / (thirty_two - count['plan']):.2f}x 32 targets' (one each)")
        print(line)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"(this script: {usage.ru_maxrss / 1024:.0f} MiB peak; load average {os.getloadavg()[0]:.2f} at the end)")


if __name__ == "__main__":
    main()
