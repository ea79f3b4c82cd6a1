"""Run hostile inputs through the torch-install command and count what goes wrong.

Classes: CLI flag values, --target profiles, sysroot trees, capture archives (escapes, names, member lists),
hostile index servers (and `variants URL`), 64 MiB hostile pages, cache corruption, races and clocks, hostile
environments for the doctor, interrupted or failing installs and concurrent installs (real pip, real venvs),
pip configurations under `--pin`, credentials planted in every input channel, and narrow output encodings. For
each class it prints the inputs tried, raw tracebacks, internal errors (exit 3 "internal error"), hangs (past
the run's limit), data lost (a file written outside its place, a torch that no longer imports, a user's
configuration line gone or pip unable to read it), secrets printed (a planted password in any output) and the
largest peak memory of a run. Every run is a fresh `python -m torch_install` process.

    python scripts/attack_rerun.py [--quick]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the tests' index pages and wheel builder
from wheels import build_wheel  # noqa: E402

SYSROOTS = ROOT / "tests" / "fixtures" / "sysroots"
LIMIT = 30.0  # seconds a run may take before it counts as a hang (index deadlines here are 3 × 1 s)
HOSTILE = ["", " ", "٥٥٠.٥٤.١٥", "3.١٢", "²", "9" * 5000, "1" * 25 + ".1", "-1", "nan", "inf", "\x1b[2Jx", "a\nb",
           "\x00", "$(id)", "`id`", "x" * 100_000, "../../etc/passwd", "http://[::1", "https://h:99999/whl",
           "HTTPS://H/WHL", "torch==" + "9" * 5000, "torch>==1", "rtx 4090 ", "gfx1100\n"]


SECRET = "S3cretPassw0rd"


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}

    def add(self, area: str, rc: int | None, err: str, lost: bool = False, out: str = "", rss_kib: int = 0) -> None:
        row = self.rows.setdefault(area, [0, 0, 0, 0, 0, 0, 0])
        leaked = SECRET in err or SECRET in out
        row[0] += 1
        row[1] += "Traceback (most recent call last)" in err
        row[2] += rc == 3 and "internal error" in err
        row[3] += rc is None
        row[4] += lost
        row[5] += leaked
        row[6] = max(row[6], rss_kib)
        if rc is None or (rc == 3 and "internal error" in err) or "Traceback (most recent" in err or lost or leaked:
            what = err.strip().splitlines()[-1][:200] if err.strip() else ""
            print(f"  [{area}] rc={rc}{' LOST' if lost else ''}{' LEAK' if leaked else ''}: {what}", file=sys.stderr)

    def print(self) -> None:
        print(f"{'class':<36} {'inputs':>7} {'tracebacks':>10} {'exit 3 internal':>15} {'hangs':>6} {'data lost':>9} "
              f"{'secrets':>7} {'max RSS':>8}")
        total = [0] * 7
        for area, row in self.rows.items():
            rss = f"{row[6] // 1024} MB" if row[6] else "-"
            print(f"{area:<36} {row[0]:>7} {row[1]:>10} {row[2]:>15} {row[3]:>6} {row[4]:>9} {row[5]:>7} {rss:>8}")
            total = [*(a + b for a, b in zip(total[:6], row[:6], strict=True)), max(total[6], row[6])]
        print(f"{'total':<36} {total[0]:>7} {total[1]:>10} {total[2]:>15} {total[3]:>6} {total[4]:>9} {total[5]:>7} "
              f"{total[6] // 1024:>5} MB")


def run_full(argv: list[str], env: dict[str, str], limit: float = LIMIT) -> tuple[int | None, str, str]:
    """One command; (exit code or None for a hang, stderr, stdout)."""
    rc, err, out, _ = run_measured(argv, env, limit)
    return rc, err, out


# Runs the command as its own child and writes that child's peak RSS to a file: measured from a small parent, since
# on Linux a child's ru_maxrss starts from the size of the process it was forked from.
_MEASURE = """
import os, resource, subprocess, sys
done = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL)
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.exit(done.returncode)
"""


def run_measured(argv: list[str], env: dict[str, str], limit: float = LIMIT) -> tuple[int | None, str, str, int]:
    """One command; (exit code or None for a hang, stderr, stdout, its peak RSS in KiB)."""
    with tempfile.TemporaryDirectory() as scratch:
        rss_file = os.path.join(scratch, "rss")
        command = [sys.executable, "-c", _MEASURE, rss_file, sys.executable, "-m", "torch_install", *argv]
        try:
            done = subprocess.run(command, capture_output=True, env=env, timeout=limit, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
        except subprocess.TimeoutExpired:
            return None, "hang", "", 0
        try:
            rss = int(Path(rss_file).read_text())
        except (OSError, ValueError):
            rss = 0
        return (done.returncode, done.stderr.decode("utf-8", "replace"), done.stdout.decode("utf-8", "replace"),
                rss)


def run(argv: list[str], env: dict[str, str], limit: float = LIMIT) -> tuple[int | None, str]:
    rc, err, _ = run_full(argv, env, limit)
    return rc, err


# ---- classes -------------------------------------------------------------------------------------------------

def cli_flags(tally: Tally, env: dict[str, str], quick: bool) -> None:
    flags = ["--nvidia-driver", "--rocm", "--python", "--gpu", "--variant", "--index-base", "--os", "--arch",
             "--sysroot", "--target", "--format"]
    values = [v for v in (HOSTILE[:8] if quick else HOSTILE) if "\x00" not in v]  # no argv can hold a NUL
    for flag in flags:
        for value in values:
            rc, err = run(["plan", "--os", "linux", "--arch", "x86_64", flag, value], env)
            tally.add("1 CLI flag values", rc, err)
    for value in values:
        for argv in (["plan", value], ["doctor", "--python", value], ["matrix", "--python", value],
                     ["doctor", "--import-torch", "--import-timeout", value]):
            rc, err = run(argv, env)
            tally.add("1 CLI flag values", rc, err)


def profiles(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
    base = {"os": "linux", "arch": "x86_64", "python": "3.12"}
    texts = ["[" * 100_000, '{"schema": ' + "9" * 5000 + "}", '{"os": "linux", "os": "macos"}', "\ufeff{}", "",
             "\xff\xfe", json.dumps({**base, "gpus": 5}), json.dumps({**base, "gpus": [{"vendor": None}]}),
             json.dumps({**base, "musl": "1"}), json.dumps({"os": "macos", "arch": "arm64", "os_version": "1000000"}),
             json.dumps({**base, "glibc": "2.99999999"}), json.dumps({**base, "notes": ["\nCommand: rm -rf /"]}),
             json.dumps({**base, "gpus": [{"vendor": "nvidia", "compute_capability": "٨.٩"}]}), "nan", "1e999999",
             json.dumps({**base, "gpus": [{"vendor": "nvidia"}] * 10_000}),
             json.dumps({"os": "windows", "rocm": "6.4"})]
    texts += [json.dumps({**base, key: value}) for key in ("nvidia_driver", "rocm", "python", "glibc", "os_version")
              for value in (HOSTILE[:6] if quick else HOSTILE)]
    for i, text in enumerate(texts):
        path = work / f"profile-{i}.json"
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        for command in (["plan"], ["detect"], ["doctor"], ["plan", "--online", "--offline"]):
            rc, err = run([*command, "--target", str(path)], env)
            tally.add("2 --target profiles", rc, err)
    special = [work / "fifo.json"]
    os.mkfifo(special[0])
    (work / "zero.json").symlink_to("/dev/zero")
    special.append(work / "zero.json")
    for path in special:
        rc, err = run(["plan", "--target", str(path)], env)
        tally.add("2 --target profiles", rc, err)


MUTATIONS: dict[str, Callable[[Path], None]] = {
    "empty": lambda p: p.write_bytes(b""),
    "binary": lambda p: p.write_bytes(bytes(range(256)) * 4),
    "huge digits": lambda p: p.write_text("9" * 5000 + "\n"),
    "unicode digits": lambda p: p.write_text("٥٥٠.٥٤.١٥ ² \n"),
    "escapes": lambda p: p.write_text("Model:  \x1b]0;owned\x07\x1b[2J\nCommand: rm -rf /\n"),
    "fifo": lambda p: (p.unlink(), os.mkfifo(p)),
    "link to /dev/zero": lambda p: (p.unlink(), p.symlink_to("/dev/zero")),
    "link out": lambda p: (p.unlink(), p.symlink_to("/etc/hostname")),
    "directory": lambda p: (p.unlink(), p.mkdir()),
}


def sysroots(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
    for fixture in ("rtx4090-intel-igpu", "rx7900xtx", "mi300x", "jetson-orin") if not quick else ("rx7900xtx",):
        files = sorted(p for p in (SYSROOTS / fixture).rglob("*") if p.is_file() and not p.is_symlink())
        for index, source in enumerate(files[:: 1 if not quick else 4]):
            for name, mutate in MUTATIONS.items():
                tree = work / f"sr-{fixture}-{index}-{name.replace(' ', '-').replace('/', '')}"
                shutil.copytree(SYSROOTS / fixture, tree, symlinks=True)
                mutate(tree / source.relative_to(SYSROOTS / fixture))
                for command in ("detect", "plan"):
                    rc, err = run([command, "--sysroot", str(tree)], env)
                    tally.add("3a sysroot trees", rc, err)
                shutil.rmtree(tree, ignore_errors=True)


def _archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", data: bytes = b"",
            pax: dict[str, str] | None = None) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data) if kind == tarfile.REGTYPE else 0
    if pax:
        info.pax_headers = pax
    return info, data if kind == tarfile.REGTYPE else None


def captures(tally: Tally, env: dict[str, str], work: Path) -> None:
    victim = work / "victim.txt"
    victim.write_text("precious\n")
    host = _member("_host.json", data=b'{"system":"Linux","machine":"x86_64","python_version":"3.12.1"}')
    kinds = {
        "traversal": [host, _member("../../outside.txt", data=b"x")],
        "absolute": [host, _member(str(work / "outside.txt"), data=b"x")],
        "symlink out": [host, _member("escape", tarfile.SYMTYPE, "/"), _member("escape/tmp/x", data=b"x")],
        "hard link to victim": [host, _member("h", tarfile.LNKTYPE, str(victim)), _member("h", data=b"owned")],
        "fifo": [host, _member("f", tarfile.FIFOTYPE)],
        "char device": [host, _member("c", tarfile.CHRTYPE)],
        "pax 70 KiB": [host, _member("x", data=b"x", pax={"comment": "a" * 70_000})],
        "driver link ok": [host, _member("sys/bus/pci/devices/0000:01:00.0/driver", tarfile.SYMTYPE,
                                         "../../../bus/pci/drivers/nvidia")],
        "dot-named link, written through": [host, _member("././driver", tarfile.SYMTYPE, str(work)),
                                            _member("driver/outside.txt", data=b"x")],
        "link then file of the same name": [host, _member("d", tarfile.SYMTYPE, str(work)),
                                            _member("d", data=b"x"), _member("d/outside.txt", data=b"x")],
        "2,000 directories deep": [host, _member("a/" * 2000 + "x", data=b"x")],
        "name of 5,000 characters": [host, _member("n" * 5000, data=b"x")],
        "60,000 members": [host, *(_member(f"m/{i}", data=b"") for i in range(60_000))],
        "duplicate names": [host, _member("proc/cpuinfo", data=b"a"), _member("proc/cpuinfo", data=b"b")],
        "file over a directory": [host, _member("sys/x", data=b"x"), _member("sys/x/y", data=b"y")],
    }
    for name, members in kinds.items():
        path = work / f"capture-{name.replace(' ', '-')}.tar.gz"
        _archive(path, members)
        for command in ("detect", "plan"):
            rc, err = run([command, "--sysroot", str(path)], env)
            lost = victim.read_text() != "precious\n" or (work / "outside.txt").exists()
            tally.add("3b capture archives", rc, err, lost)
    capture_member_lists(tally, env, work, host)


def capture_member_lists(tally: Tally, env: dict[str, str], work: Path,
                         host: tuple[tarfile.TarInfo, bytes | None]) -> None:
    """Random member lists (names with dot parts, links, devices, long names), seeded: refused or read, and
    nothing written anywhere."""
    import random

    rng = random.Random(19)
    parts = ["sys", "proc", "..", ".", "a", "x" * 300, "driver", "~", "a b", "é"]
    kinds = [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE]
    links = ["", "/", "../..", "a", str(work), "x" * 2000]
    scratch = work / "member-lists"
    scratch.mkdir()
    for i in range(60):
        members = [host] + [_member("/".join(rng.choice(parts) for _ in range(rng.randint(1, 5))) or "x",
                                    rng.choice(kinds), rng.choice(links), data=b"x") for _ in range(rng.randint(1, 8))]
        path = work / f"members-{i}.tar.gz"
        _archive(path, members)
        rc, err = run(["detect", "--sysroot", str(path)], {**env, "TMPDIR": str(scratch)})
        tally.add("3b capture archives", rc, err, any(scratch.iterdir()) or (work / "outside.txt").exists())


class _Hostile(threading.Thread):
    """A loopback server: each connection gets ``mode``'s answer."""

    def __init__(self, mode: str) -> None:
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.mode = mode
        self.stop = threading.Event()
        self.start()

    def run(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn: socket.socket) -> None:
        def reply(body: bytes, ctype: str = "text/html", status: str = "200 OK", extra: str = "") -> None:
            conn.sendall(f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n{extra}"
                         "Connection: close\r\n\r\n".encode() + body)
        try:
            conn.recv(65536)
            mode = self.mode
            if mode in ("slow-status", "slow-body"):
                head = b"" if mode == "slow-status" else b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"
                conn.sendall(head)
                for byte in b"HTTP/1.1 200 OK\r\n" * 100:
                    if self.stop.wait(0.5):
                        break
                    conn.sendall(bytes([byte]))
            elif mode == "silent":
                self.stop.wait(60)
            elif mode == "maintenance":
                reply(b"<html>Down for maintenance</html>")
            elif mode == "empty":
                reply(b"")
            elif mode == "json-as-json":
                reply(b'{"files": []}', "application/json")
            elif mode == "undecodable":
                reply(b"\xff\xfe\x00<a href=x>")
            elif mode == "nested-json":
                reply(b"[" * 200_000, "application/vnd.pypi.simple.v1+json")
            elif mode == "ipv6-href":
                reply(b'<a href="http://[::1">torch-2.9.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl</a>')
            elif mode == "redirect-ipv6":
                reply(b"", status="302 Found", extra="Location: http://[::1\r\n")
            elif mode == "redirect-loop":
                reply(b"", status="302 Found", extra="Location: /whl/torch/\r\n")
            elif mode == "500":
                reply(b"no", status="500 Internal Server Error")
            elif mode == "huge-length":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n")
            elif mode == "only-cu134":
                name = "torch-2.17.0+cu134-cp312-cp312-manylinux_2_28_x86_64.whl"
                reply(f'<a href="{name}">{name}</a>'.encode())
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


INDEX_MODES = ("slow-status", "slow-body", "silent", "maintenance", "empty", "json-as-json", "undecodable",
               "nested-json", "ipv6-href", "redirect-ipv6", "redirect-loop", "500", "huge-length", "only-cu134")


def hostile_index(tally: Tally, env: dict[str, str], work: Path) -> None:
    target = work / "cpu.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    for mode in INDEX_MODES:
        server = _Hostile(mode)
        try:
            for argv in (["plan", "--online", "--target", str(target), "--format", "pip"],
                         ["variants", f"http://127.0.0.1:{server.port}/torch-2.9.1-variants.json", "--target",
                          str(target)]):
                if argv[0] == "plan":
                    argv += ["--index-base", f"http://127.0.0.1:{server.port}/whl"]
                rc, err, out = run_full(argv, {**env, "TORCH_INSTALL_CACHE_DIR": str(work / f"cache-{mode}")})
                wrong = "2.17.0+cpu" in out  # a pin the index does not offer
                tally.add("4 hostile index, variants URL", rc, err, wrong)
        finally:
            server.close()


def cache_corruption(tally: Tally, env: dict[str, str], work: Path) -> None:
    """Warm a cache from a loopback index of real listings, damage each file kind, plan twice."""
    import http.server

    from index_pages import html_page, load_rows

    page = html_page("torch", load_rows()).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    target = work / "cache-target.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    damages: dict[str, Callable[[Path], None]] = {**MUTATIONS, "nested": lambda p: p.write_text("[" * 100_000),
                                                  "not utf-8": lambda p: p.write_bytes(b"\xff"),
                                                  "wrong types": lambda p: p.write_text('{"format": 2, "value": 5}')}
    try:
        for which in ("meta", "page", "derived"):
            for name, damage in damages.items():
                cache = work / f"cc-{which}-{name.replace(' ', '-').replace('/', '')}"
                cache_env = {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}
                argv = ["plan", "--online", "--index-base", f"http://127.0.0.1:{server.server_port}/whl",
                        "--target", str(target)]
                run(argv, cache_env)
                pattern = {"meta": "*.meta.json", "page": "*.page", "derived": "derived/*.json"}[which]
                found = sorted(cache.glob(pattern))
                if not found:
                    continue
                damage(found[0])
                for _ in range(2):
                    rc, err = run(argv, cache_env)
                    tally.add("4 cache corruption (x2 runs)", rc, err)
    finally:
        server.shutdown()


def doctor_envs(tally: Tally, env: dict[str, str], work: Path) -> None:
    python = work / "dv" / "bin" / "python"
    venv.EnvBuilder(with_pip=False).create(work / "dv")
    site = next((work / "dv" / "lib").glob("python3*/site-packages"))
    marker = work / "PTH-RAN"
    pths = [f"import os; open({str(marker)!r}, 'w').write('ran')", "import sys; print('hello from a .pth')",
            "import subprocess; subprocess.Popen(['setsid', 'sleep', '40'])"]
    fixture = ROOT / "tests" / "fixtures" / "site-packages" / "healthy-2.9.1-cu128"
    for pth in pths:
        (site / "x.pth").write_text(pth + "\n")
        rc, err = run(["doctor", "--python", str(python)], env)
        tally.add("5 doctor hostile environments", rc, err, marker.exists())
    (site / "x.pth").unlink()
    record = next(fixture.glob("nvidia_cuda_runtime*.dist-info")).name
    for name, line in (("unicode size", "nvidia/cuda_runtime/lib/x.so,,²"), ("huge size", "x,," + "9" * 5000),
                       ("huge field", "nvidia/cuda_runtime/lib/x.so," + "a" * 200_000 + ",1")):
        tree = work / f"sp-{name.replace(' ', '-')}"
        shutil.copytree(fixture, tree)
        with open(tree / record / "RECORD", "a") as file:
            file.write(line + "\n")
        rc, err = run(["doctor"], {**env, "PYTHONPATH": str(tree)})
        tally.add("5 doctor hostile environments", rc, err)
    for name, text in (("nested minus", "x = " + "-" * 200_000 + "1"), ("nested parens", "x = " + "(" * 5000 + "1"),
                       ("sum", "x = " + "1+" * 100_000 + "1"), ("payload", "import os; os.system('touch /tmp/P')")):
        tree = work / f"vp-{name.replace(' ', '-')}"
        shutil.copytree(ROOT / "tests" / "fixtures" / "site-packages" / "cpu-2.9.1", tree)
        (tree / "torch" / "version.py").write_text(text)
        rc, err = run(["doctor"], {**env, "PYTHONPATH": str(tree)})
        tally.add("5 doctor hostile environments", rc, err)
    rc, err = run(["doctor", "--python", "/usr/bin/yes"], env)
    tally.add("5 doctor hostile environments", rc, err)


def installs(tally: Tally, env: dict[str, str], work: Path) -> None:
    """The report's data-loss cases: Ctrl-C to the group, SIGINT to torch-install alone, SIGTERM, a failing
    companion. Lost: torch does not import, or import and metadata disagree."""
    import http.server

    python = work / "iv" / "bin" / "python"
    venv.EnvBuilder(with_pip=True).create(work / "iv")
    index = work / "idx" / "whl" / "cpu"
    pip_env = {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(work / "idx"), **k)  # noqa: E731
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}/whl"
    dry = subprocess.run([sys.executable, "-m", "torch_install", "install", "torch", "torchvision", "--python",
                          str(python), "--variant", "cpu", "--index-base", base, "--dry-run"], capture_output=True,
                         text=True, env=pip_env, check=True).stdout.split()
    pins = dict(a.split("==") for a in dry if "==" in a)
    old = work / "old"
    old.mkdir()
    olds = [build_wheel(old, "torch", "1.0.0+cpu"), build_wheel(old, "torchvision", "0.1.0+cpu", requires=["torch"])]
    for project, wheel in (("torch", build_wheel(work, "torch", pins["torch"], files=20000)),
                           ("torchvision", build_wheel(work, "torchvision", pins["torchvision"], requires=["torch"],
                                                       extra={"../../../../evil.txt": b"x"}))):
        (index / project).mkdir(parents=True)
        shutil.copy(wheel, index / wheel.name)
        (index / project / "index.html").write_text(f'<a href="../{wheel.name}">{wheel.name}</a>')

    def imported_version() -> str | None:
        code = ("import torch, importlib.metadata as m; assert torch.__version__ == m.version('torch'); "
                "print(m.version('torch'))")
        done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        for how in ("SIGINT to the group", "SIGINT to torch-install", "SIGTERM to torch-install", "companion fails"):
            subprocess.run([str(python), "-m", "pip", "uninstall", "-q", "-y", "torch", "torchvision"], env=pip_env,
                           capture_output=True)
            for leftover in python.parent.parent.glob("lib/python3*/site-packages/~*"):
                shutil.rmtree(leftover, ignore_errors=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", *map(str, olds)], env=pip_env,
                           check=True)
            packages = ["torch", "torchvision"] if how == "companion fails" else ["torch"]
            log = work / "install.log"
            with open(log, "wb") as out:
                child = subprocess.Popen([sys.executable, "-m", "torch_install", "install", *packages, "--python",
                                          str(python), "--variant", "cpu", "--index-base", base], stdout=out,
                                         stderr=subprocess.STDOUT, env=pip_env, start_new_session=True)
                if how != "companion fails":
                    deadline = time.monotonic() + 120
                    while b"Successfully uninstalled torch" not in log.read_bytes() and child.poll() is None:
                        if time.monotonic() > deadline:
                            break
                        time.sleep(0.01)
                    sig = signal.SIGTERM if "SIGTERM" in how else signal.SIGINT
                    if child.poll() is None:  # not finished (or failed) before the moment came
                        (os.killpg if "group" in how else os.kill)(child.pid, sig)
                try:
                    rc: int | None = child.wait(timeout=180)
                except subprocess.TimeoutExpired:
                    child.kill()
                    rc = None
            text = log.read_text(errors="replace")
            now = imported_version()
            wrong_word = "unchanged" in text.split("error:")[-1] and now != "1.0.0+cpu"  # "unchanged", but it changed
            tally.add("6 install (real pip, real venv)", rc, text, now is None or wrong_word)
    finally:
        server.shutdown()



class _Pages:
    """A loopback index whose pages are set per test: ``pages[path] = (status, content type, body)``; it answers
    conditional requests with 304 (calling ``on_304`` first) when ``etag`` matches."""

    def __init__(self) -> None:
        import http.server

        pages: dict[str, tuple[int, str, bytes]] = {}
        self.pages, self.on_304 = pages, [lambda: None]
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                from urllib.parse import unquote

                status, kind, body = pages.get(unquote(self.path), (404, "text/plain", b"none"))
                if self.headers.get("If-None-Match") == '"v1"' and status == 200:
                    owner.on_304[0]()
                    self.send_response(304)
                    self.send_header("ETag", '"v1"')
                    self.end_headers()
                    return
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("ETag", '"v1"')
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_port}/whl"

    def close(self) -> None:
        self.server.shutdown()


HOSTILE_PAGE_BYTES = 64 * 1024 * 1024 - 4096


def _filled(head: bytes, item: bytes, sep: bytes, tail: bytes) -> bytes:
    count = (HOSTILE_PAGE_BYTES - len(head) - len(tail)) // (len(item) + len(sep))
    return head + sep.join([item] * count) + tail


def hostile_pages(tally: Tally, env: dict[str, str], work: Path) -> None:
    """64 MiB pages of each shape through `plan --online`: a refusal or an answer, and the peak memory."""
    json_type = "application/vnd.pypi.simple.v1+json"
    wheel = b"torch-2.9.1+cpu-cp312-cp312-manylinux_2_28_x86_64.whl"
    bodies = {
        "json of empty objects": (json_type, _filled(b'{"name":"torch","files":[', b"{}", b",", b"]}")),
        "json of arrays": (json_type, _filled(b'{"name":"torch","files":[', b"[[]]", b",", b"]}")),
        "json of one wheel and huge versions": (json_type, _filled(
            b'{"name":"torch","files":[{"filename":"' + wheel + b'","url":"' + wheel + b'"}],"versions":[',
            b'"2.9.1"', b",", b"]}")),
        "json nested deep": (json_type, b'{"files":[' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"]}"),
        "html of empty anchors": ("text/html", _filled(b"<html>", b"<a>x</a>", b"", b"")),
        "html of wheel anchors": ("text/html", _filled(b"<html>", b'<a href="' + wheel + b'">w</a>', b"\n", b"")),
        "html unclosed quotes": ("text/html", _filled(b'<a href="' + wheel + b'"', b' x=".whl', b"", b"")),
    }
    target = work / "pages-target.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    index = _Pages()
    try:
        for name, (kind, body) in bodies.items():
            index.pages["/whl/torch/"] = (200, kind, body)
            argv = ["plan", "--online", "--index-base", index.base, "--target", str(target)]
            rc, err, out, rss = run_measured(argv, {**env, "TORCH_INSTALL_CACHE_DIR": str(work / f"pc-{name}"),
                                                    "TORCH_INSTALL_INDEX_TIMEOUT": "20"}, limit=120)
            tally.add("4b hostile pages (64 MiB)", rc, err, out=out, rss_kib=rss)
            said = err.strip().splitlines()[-1][:150] if err.strip() else ""
            print(f"    {name}: exit {rc}, peak {rss // 1024} MB: {said}", file=sys.stderr)
    finally:
        index.close()


def cache_races(tally: Tally, env: dict[str, str], work: Path) -> None:
    """A 304 for an entry removed meanwhile, a fetched_at that is no time with the index down, a cache directory
    under a regular file."""
    import re

    from index_pages import html_page, load_rows

    page = html_page("torch", load_rows()).encode()
    target = work / "race-target.json"
    target.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    index = _Pages()
    index.pages["/whl/torch/"] = (200, "text/html", page)
    argv = ["plan", "--online", "--index-base", index.base, "--target", str(target)]
    try:
        cache = work / "race-cache"
        race_env = {**env, "TORCH_INSTALL_CACHE_DIR": str(cache), "TORCH_INSTALL_INDEX_TTL": "0"}
        run(argv, race_env)
        index.on_304[0] = lambda: [p.unlink() for p in cache.glob("*.meta.json")]
        for _ in range(3):
            rc, err = run(argv, race_env)
            tally.add("4c cache races and clocks", rc, err)
        index.on_304[0] = lambda: None
        for value in ("NaN", "Infinity", "-Infinity", "1e12", "1e20", "1e308", "-5", "1e400"):
            cache = work / f"clock-{value}"
            clock_env = {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}
            index.pages["/whl/torch/"] = (200, "text/html", page)
            run(argv, clock_env)
            for meta in cache.glob("*.meta.json"):
                meta.write_text(re.sub(r'"fetched_at":[^,}]+', f'"fetched_at":{value}', meta.read_text()))
            index.pages["/whl/torch/"] = (500, "text/plain", b"down")
            for extra in ([], ["--offline"]):
                rc, err = run([*argv, *extra], clock_env)
                tally.add("4c cache races and clocks", rc, err)
        index.pages["/whl/torch/"] = (200, "text/html", page)
        blocker = work / "blocker"
        blocker.write_text("a file\n")
        for _ in range(2):
            rc, err = run(argv, {**env, "TORCH_INSTALL_CACHE_DIR": str(blocker / "cache")})
            tally.add("4c cache races and clocks", rc, err, lost=blocker.read_text() != "a file\n" or "corrupt" in err)
        for home in ("rel", "", "./x"):
            rc, err = run(argv, {**{k: v for k, v in env.items() if k != "TORCH_INSTALL_CACHE_DIR"}, "HOME": home})
            tally.add("4c cache races and clocks", rc, err, lost=(Path.cwd() / "rel").exists())
    finally:
        index.close()


def _wheel_index(work: Path, wheels: list[Path]) -> tuple[_Pages, str]:
    """A loopback PyTorch-index stand-in serving ``wheels`` under /whl/cpu/<project>/ (pages and files)."""
    index = _Pages()
    for wheel in wheels:
        project = wheel.name.split("-")[0]
        path = f"/whl/cpu/{project}/"
        kind, old = index.pages.get(path, (200, "text/html", b""))[1:]
        index.pages[path] = (200, kind, old + f'<a href="/files/{wheel.name}">{wheel.name}</a>\n'.encode())
        index.pages[f"/files/{wheel.name}"] = (200, "application/octet-stream", wheel.read_bytes())
    return index, index.base


def _pip_env(env: dict[str, str], work: Path) -> dict[str, str]:
    """pip and uv reading only this run's configuration (HOME and XDG dirs of their own)."""
    clean = {k: v for k, v in env.items() if not k.startswith(("PIP_", "UV_", "VIRTUAL_ENV"))}
    (work / "xdg").mkdir(exist_ok=True)
    return {**clean, "HOME": str(work / "home"), "XDG_CONFIG_HOME": str(work / "home" / ".config"),
            "XDG_CONFIG_DIRS": str(work / "xdg"), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def _torch_versions(python: Path) -> tuple[str | None, list[str]]:
    """(the version ``import torch`` and its metadata agree on, else None; the torch dist-infos on disk)."""
    code = ("import torch, importlib.metadata as m; assert torch.__version__ == m.version('torch'); "
            "print(m.version('torch'))")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    site = next(python.parent.parent.glob("lib/python3*/site-packages"))
    infos = sorted(p.name for p in site.glob("torch-*.dist-info"))
    return (done.stdout.strip() if done.returncode == 0 else None), infos


def concurrent_installs(tally: Tally, env: dict[str, str], work: Path) -> None:
    """Two installs into one environment started together, three times: one torch at the end, import and
    metadata agreeing."""
    wheels = work / "cc-wheels"
    wheels.mkdir()
    index, base = _wheel_index(work, [build_wheel(wheels, "torch", "2.13.0+cpu", files=2000),
                                      build_wheel(wheels, "torch", "2.14.1+cpu", files=2000)])
    pip_env = {**_pip_env(env, work), "PIP_CONFIG_FILE": os.devnull}
    try:
        for round_ in range(3):
            where = work / f"cv{round_}"
            venv.EnvBuilder(with_pip=True).create(where)
            python = where / "bin" / "python"
            argv = [sys.executable, "-m", "torch_install", "install", "--python", str(python), "--variant", "cpu",
                    "--index-base", base]
            first = subprocess.Popen([*argv, "torch==2.13.0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=pip_env)
            second = subprocess.Popen([*argv, "torch==2.14.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=pip_env)
            for child in (first, second):
                try:
                    _, err_bytes = child.communicate(timeout=300)
                    rc: int | None = child.returncode
                except subprocess.TimeoutExpired:
                    child.kill()
                    err_bytes, rc = b"", None
                version, infos = _torch_versions(python)
                lost = version is None or len(infos) != 1
                tally.add("7 concurrent installs (real pip)", rc, err_bytes.decode("utf-8", "replace"), lost)
    finally:
        index.close()


def pin_configurations(tally: Tally, env: dict[str, str], work: Path) -> None:
    """`install --pin` over pip configurations users have: afterwards pip still works there, every line the user
    wrote is still there, a symlinked pip.conf's target is untouched, and a later install of another build works."""
    wheels = work / "pin-wheels"
    wheels.mkdir()
    index, base = _wheel_index(work, [build_wheel(wheels, "torch", "2.13.0+cpu"),
                                      build_wheel(wheels, "torch", "2.14.1+cpu")])
    pip_env = _pip_env(env, work)
    shared = work / "shared-pip.conf"
    shared.write_text("[global]\ntimeout = 60\n")
    mine = work / "mine.txt"
    mine.write_text("numpy<3\n")
    cases: dict[str, tuple[str, str | None, dict[str, str]]] = {  # venv directory name, pip.conf text, environment
        "path with a space": ("env with space", None, {}),
        "Constraint key of another case": ("e-case", f"[install]\nConstraint = {mine}\n", {}),
        "user's constraint and comments": ("e-user", f"# keep\n[global]\n; admin\nconstraint = {mine}\n", {}),
        "duplicate sections": ("e-dup", "[global]\ntimeout = 5\n[global]\nretries = 2\n", {}),
        "not UTF-8": ("e-latin", "[global]\n# caf\xe9\ntimeout = 5\n", {}),
        "continuation lines": ("e-cont", f"[install]\nconstraint =\n    {mine}\n    {mine}\n", {}),
        "CRLF": ("e-crlf", "[global]\r\ntimeout = 5\r\n", {}),
        "PIP_CONSTRAINT set": ("e-envc", None, {"PIP_CONSTRAINT": str(mine)}),
        "PIP_CONFIG_FILE elsewhere": ("e-envf", None, {"PIP_CONFIG_FILE": str(work / "elsewhere.conf")}),
        "symlinked pip.conf": ("e-link", "LINK", {}),
        "pip.conf is a directory": ("e-dir", "DIR", {}),
    }
    try:
        for name, (directory, text, extra) in cases.items():
            print(f"    --pin: {name}", file=sys.stderr)
            where = work / directory
            venv.EnvBuilder(with_pip=True).create(where)
            python = where / "bin" / "python"
            conf = where / "pip.conf"
            if text == "LINK":
                conf.symlink_to(shared)
            elif text == "DIR":
                conf.mkdir()
            elif text is not None:
                conf.write_bytes(text.encode("latin-1"))
            case_env = {**pip_env, **extra}
            argv = ["install", "--python", str(python), "--variant", "cpu", "--index-base", base]
            worked = subprocess.run([str(python), "-m", "pip", "list"], capture_output=True,
                                    env=case_env).returncode == 0  # some of these files pip refuses itself
            rc, err, out = run_full([*argv, "torch==2.13.0", "--pin"], case_env, limit=300)
            listed = subprocess.run([str(python), "-m", "pip", "list"], capture_output=True, env=case_env)
            works = listed.returncode == 0
            kept = True
            if text not in (None, "LINK", "DIR") and conf.is_file():
                after = conf.read_bytes().decode("latin-1")
                own_key = [line for line in text.splitlines() if "onstraint" in line or line[:1] in (" ", "\t")]
                kept = all(line in after.splitlines() for line in text.splitlines() if line not in own_key)
                if own_key:  # the user's constraint values still in force beside the pin
                    kept = kept and after.count(str(mine)) >= text.count(str(mine))
            lost = (worked and not works) or not kept or shared.read_text() != "[global]\ntimeout = 60\n"
            tally.add("8 pip configuration under --pin", rc, err, lost, out)
            rc, err, out = run_full([*argv, "torch==2.14.1"], case_env, limit=300)
            version, _ = _torch_versions(python)
            tally.add("8 pip configuration under --pin", rc, err, worked and version != "2.14.1+cpu", out)
        where = work / "e-dry"
        venv.EnvBuilder(with_pip=True).create(where)
        python = where / "bin" / "python"
        rc, err, out = run_full(["install", "--python", str(python), "--variant", "cpu", "--index-base", base,
                                 "torch==2.13.0", "--pin", "--", "--dry-run"], pip_env, limit=300)
        tally.add("8 pip configuration under --pin", rc, err, (where / "torch-install-constraints.txt").exists(), out)
    finally:
        index.close()


def credentials(tally: Tally, env: dict[str, str], work: Path) -> None:
    """A password planted in every input channel (index variables, pip.conf, the options after --, --index-base,
    a profile's notes, a token variable), through every command and format: none may appear in any output."""
    profile = work / "cred-profile.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                   "notes": [f"mirror https://eve:{SECRET}@mirror.invalid/simple"]}))
    conf = work / "cred-pip.conf"
    conf.write_text(f"[global]\nindex-url = https://frank:{SECRET}@mirror.invalid/simple\n")
    planted = {**env, "PIP_INDEX_URL": f"https://alice:{SECRET}@mirror.invalid/simple",
               "PIP_EXTRA_INDEX_URL": f"https://bob:{SECRET}@mirror.invalid/extra",
               "UV_INDEX_URL": f"https://carol:{SECRET}@mirror.invalid/uv",
               "UV_EXTRA_INDEX_URL": f"https://{SECRET}@mirror.invalid/uv-extra",
               "UV_INDEX": f"named=https://dan:{SECRET}@mirror.invalid/named", "HF_TOKEN": SECRET,
               "PIP_CONFIG_FILE": str(conf), "VIRTUAL_ENV": sys.prefix}
    after = ["--", "--extra-index-url", f"https://eve:{SECRET}@mirror.invalid/simple"]
    commands = [["plan", "--target", str(profile), "--format", fmt, *after]
                for fmt in ("text", "url", "pip", "uv", "requirements", "constraints", "pyproject", "json",
                            "dockerfile", "variant-env")]
    commands += [["detect"], ["detect", "--json"], ["doctor"], ["doctor", "--json"], ["doctor", "-v"],
                 ["matrix", "--target", str(profile)], ["install", "--dry-run", "--offline", *after],
                 ["plan", "--target", str(profile), "--index-base", f"https://eve:{SECRET}@mirror.invalid/whl"],
                 ["plan", "--target", str(profile), "--online", "--index-base",
                  f"https://{SECRET}@mirror.invalid/whl"],
                 ["variants", f"https://eve:{SECRET}@mirror.invalid/v.json", "--target", str(profile)],
                 ["plan", "--target", str(profile), "--gpu", f"https://eve:{SECRET}@x/"]]
    for argv in commands:
        for debug in ("0", "1"):
            rc, err, out = run_full(argv, {**planted, "TORCH_INSTALL_DEBUG": debug})
            tally.add("9 credentials in every channel", rc, err, out=out)


def encodings(tally: Tally, env: dict[str, str], work: Path) -> None:
    """Every command with stdout and stderr in an encoding without the product's non-ASCII signs."""
    profile = work / "enc-profile.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35",
                                   "nvidia_driver": "550.54.15", "gpus": [{"vendor": "nvidia",
                                                                           "name": "NVIDIA GeForce RTX 4090"}]}))
    commands = [["plan", "--target", str(profile), "--format", fmt]
                for fmt in ("text", "pip", "json", "dockerfile", "pyproject")]
    commands += [["detect"], ["doctor"], ["matrix", "--target", str(profile)], ["plan", "-v", "--gpu", "Tesla K80",
                 "--nvidia-driver", "470.82.01", "--os", "linux", "--arch", "x86_64", "--python", "3.12"],
                 ["completion", "bash"], ["--help"], ["plan", "--help"], ["plan", "--python", "3.x"]]
    for encoding in ("cp1252", "ascii", "latin-1"):
        for argv in commands:
            rc, err = run(argv, {**env, "PYTHONIOENCODING": encoding, "PYTHONUTF8": "0", "LC_ALL": "C"})
            tally.add("10 narrow output encodings", rc, err)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer inputs per class")
    parser.add_argument("--only", action="append", default=[], metavar="CLASS",
                        help="run only these classes (function names: captures, credentials, …); repeatable")
    args = parser.parse_args()
    tally = Tally()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ti-attack-") as scratch:
        work = Path(scratch)
        env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", "TORCH_INSTALL_CACHE_DIR": str(work / "cache"),
               "TORCH_INSTALL_INDEX_TIMEOUT": "1", "TORCH_INSTALL_INDEX_RETRIES": "1", "PYTHONPATH": str(ROOT / "src")}
        for name in ("CUDA_VERSION", "ROCM_VERSION", "TORCH_INSTALL_INDEX_BASE", "VIRTUAL_ENV"):
            env.pop(name, None)
        classes: dict[str, Callable[[], None]] = {
            "cli_flags": lambda: cli_flags(tally, env, args.quick),
            "profiles": lambda: profiles(tally, env, work, args.quick),
            "sysroots": lambda: sysroots(tally, env, work, args.quick),
            "captures": lambda: captures(tally, env, work),
            "hostile_index": lambda: hostile_index(tally, env, work),
            "hostile_pages": lambda: hostile_pages(tally, env, work),
            "cache_corruption": lambda: cache_corruption(tally, env, work),
            "cache_races": lambda: cache_races(tally, env, work),
            "credentials": lambda: credentials(tally, env, work),
            "encodings": lambda: encodings(tally, env, work),
        }
        if os.name == "posix":  # venv layouts, signals, os.wait4
            classes.update(doctor_envs=lambda: doctor_envs(tally, env, work),
                           installs=lambda: installs(tally, env, work),
                           concurrent_installs=lambda: concurrent_installs(tally, env, work),
                           pin_configurations=lambda: pin_configurations(tally, env, work))
        unknown = set(args.only) - set(classes)
        if unknown:
            parser.error(f"--only: no class {', '.join(sorted(unknown))} (one of {', '.join(classes)})")
        for name, run_class in classes.items():
            if not args.only or name in args.only:
                print(f"{name} …", file=sys.stderr)
                run_class()
    tally.print()
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
