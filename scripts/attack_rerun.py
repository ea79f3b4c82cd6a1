"""Run hostile inputs through the torch-install command and count what goes wrong.

Classes: CLI flag values, --target profiles, sysroot trees, capture archives (escapes, names, member lists, tar
headers written every way tar readers read them), hostile index servers (and `variants URL`), 64 MiB hostile
pages, cache corruption, races and clocks, hostile environments for the doctor, interrupted or failing installs
and concurrent installs (real pip, real venvs), pip configurations under `--pin` (in every INI spelling pip reads),
credentials planted in every input channel and written in every alphabet a URL can hold, narrow output encodings,
output that cannot be written (a full disk, a closed descriptor, a reader that leaves), project input (includes
and include-groups that nest, fan out and loop; long blank runs, continuations and values; malformed TOML),
special files named as input or as `--merge` targets, and the valid and invalid TOML forms `--merge` meets (the
README's merge flow among them, run twice). For each class it prints the inputs tried, raw tracebacks (and
"Exception ignored" blocks), internal errors (exit 3 "internal error"), hangs (past the run's limit), data lost (a
file written outside its place, a torch that no longer imports, a user's configuration line gone or pip unable to
read it, a special file replaced, a merged file that is no longer TOML or lost what the user wrote), secrets
printed (a planted password in any output) and the largest peak memory of a run. Every run is a fresh `python -m
torch_install` process; `--max-runs` and `--budget-seconds` bound the whole attack (runs past the budget are
counted as skipped).

    python scripts/attack_rerun.py [--quick] [--only CLASS …] [--max-runs N] [--budget-seconds S] [--json FILE]
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
from tar_headers import header as _tar_header  # noqa: E402
from wheels import build_wheel  # noqa: E402

SYSROOTS = ROOT / "tests" / "fixtures" / "sysroots"
LIMIT = 30.0  # seconds a run may take before it counts as a hang (index deadlines here are 3 × 1 s)
HOSTILE = ["", " ", "٥٥٠.٥٤.١٥", "3.١٢", "²", "9" * 5000, "1" * 25 + ".1", "-1", "nan", "inf", "\x1b[2Jx", "a\nb",
           "\x00", "$(id)", "`id`", "x" * 100_000, "../../etc/passwd", "http://[::1", "https://h:99999/whl",
           "HTTPS://H/WHL", "torch==" + "9" * 5000, "torch>==1", "rtx 4090 ", "gfx1100\n"]


SECRET = "S3cretPassw0rd"


SKIPPED = -1  # the exit code of a run the budget did not allow


class Budget:
    """How many runs the attack may still start, and until when."""

    def __init__(self, runs: int | None = None, seconds: float | None = None) -> None:
        self.runs = runs
        self.deadline = time.monotonic() + seconds if seconds is not None else None

    def spend(self) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return False
        if self.runs is not None:
            if self.runs <= 0:
                return False
            self.runs -= 1
        return True


BUDGET = Budget()
LAST_RSS = [0]  # the peak memory (KiB) of the last run started, which Tally.add counts unless told another
NOISE = ("Traceback (most recent call last)", "Exception ignored in")


class Tally:
    COLUMNS = ("inputs", "tracebacks", "internal", "hangs", "data lost", "secrets", "max RSS KiB", "skipped")

    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}

    def add(self, area: str, rc: int | None, err: str, lost: bool = False, out: str = "", rss_kib: int | None = None,
            secrets: tuple[str, ...] = (SECRET,)) -> None:
        """One run's findings; ``rss_kib``: its peak memory (default: that of the last run measured)."""
        row = self.rows.setdefault(area, [0] * len(self.COLUMNS))
        rss_kib = LAST_RSS[0] if rss_kib is None else rss_kib
        if rc == SKIPPED:
            row[7] += 1
            return
        leaked = any(secret in err or secret in out for secret in secrets)
        traceback = any(noise in err for noise in NOISE) or rc == 120  # 120: the interpreter's failed last flush
        row[0] += 1
        row[1] += traceback
        row[2] += rc == 3 and "internal error" in err
        row[3] += rc is None
        row[4] += lost
        row[5] += leaked
        row[6] = max(row[6], rss_kib)
        if rc is None or (rc == 3 and "internal error" in err) or traceback or lost or leaked:
            what = err.strip().splitlines()[-1][:200] if err.strip() else ""
            print(f"  [{area}] rc={rc}{' LOST' if lost else ''}{' LEAK' if leaked else ''}: {what}", file=sys.stderr)

    def totals(self) -> list[int]:
        total = [0] * len(self.COLUMNS)
        for row in self.rows.values():
            total = [max(a, b) if i == 6 else a + b for i, (a, b) in enumerate(zip(total, row, strict=True))]
        return total

    def print(self) -> None:
        print(f"{'class':<36} {'inputs':>7} {'tracebacks':>10} {'exit 3 internal':>15} {'hangs':>6} {'data lost':>9} "
              f"{'secrets':>7} {'max RSS':>8} {'skipped':>7}")
        for area, row in [*self.rows.items(), ("total", self.totals())]:
            rss = f"{row[6] // 1024} MB" if row[6] else "-"
            print(f"{area:<36} {row[0]:>7} {row[1]:>10} {row[2]:>15} {row[3]:>6} {row[4]:>9} {row[5]:>7} {rss:>8} "
                  f"{row[7]:>7}")

    def json(self) -> dict[str, dict[str, int]]:
        return {area: dict(zip(self.COLUMNS, row, strict=True))
                for area, row in [*self.rows.items(), ("total", self.totals())]}


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


def run_measured(argv: list[str], env: dict[str, str], limit: float = LIMIT, command: list[str] | None = None,
                 cwd: Path | None = None) -> tuple[int | None, str, str, int]:
    """One command (``python -m torch_install ARGV``, or ``command`` as given; in ``cwd``); (exit code, None for a
    hang or SKIPPED past the budget, stderr, stdout, its peak RSS in KiB)."""
    LAST_RSS[0] = 0
    if not BUDGET.spend():
        return SKIPPED, "", "", 0
    with tempfile.TemporaryDirectory() as scratch:
        rss_file = os.path.join(scratch, "rss")
        command = [sys.executable, "-c", _MEASURE, rss_file, *(command or [sys.executable, "-m", "torch_install",
                                                                           *argv])]
        try:
            done = subprocess.run(command, capture_output=True, env=env, timeout=limit, stdin=subprocess.DEVNULL,
                                  start_new_session=True, cwd=cwd)
        except subprocess.TimeoutExpired:
            return None, "hang", "", 0
        try:
            rss = LAST_RSS[0] = int(Path(rss_file).read_text())
        except (OSError, ValueError):
            rss = 0
        return (done.returncode, done.stderr.decode("utf-8", "replace"), done.stdout.decode("utf-8", "replace"),
                rss)


def attack(tally: Tally, area: str, argv: list[str], env: dict[str, str], lost: Callable[[], bool] | None = None,
           limit: float = LIMIT, command: list[str] | None = None, secrets: tuple[str, ...] = (SECRET,),
           codes: tuple[int, ...] | None = None, cwd: Path | None = None) -> tuple[int | None, str, str]:
    """One run counted in ``area``: its peak memory, whether ``lost()`` says data was lost after it, and (with
    ``codes``) an exit code outside them counted as lost too (a wrong answer)."""
    rc, err, out, rss = run_measured(argv, env, limit, command, cwd)
    wrong = codes is not None and rc not in (*codes, None, SKIPPED, 3)
    tally.add(area, rc, err, (rc != SKIPPED and lost is not None and lost()) or wrong, out, rss, secrets)
    return rc, err, out


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


# with --quick: the spellings pip reads otherwise than a hand-written INI reader would
QUICK_PIN_CASES = ("indented key", "tab-indented key", "text after the header", "spaced header",
                   "every key indented", "PIP_CONFIG_FILE with [global] constraint")


def pin_configurations(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
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
        "indented key": ("e-indent", f"[install]\n    constraint = {mine}\n", {}),
        "tab-indented key": ("e-tab", f"[install]\n\tconstraint = {mine}\n", {}),
        "text after the header": ("e-after", f"[install] extra\nconstraint = {mine}\n", {}),
        "spaced header": ("e-spaced", f"[ install ]\nconstraint = {mine}\n", {}),
        "every key indented": ("e-all", f"[global]\n  timeout = 5\n[install]\n  constraint = {mine}\n", {}),
        "PIP_CONFIG_FILE with [global] constraint": ("e-envg", None, {"PIP_CONFIG_FILE": str(work / "g.conf")}),
    }
    (work / "g.conf").write_text(f"[global]\nconstraint = {mine}\n")
    try:
        for name, (directory, text, extra) in cases.items():
            if quick and name not in QUICK_PIN_CASES:
                continue
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


TARGET_FLAGS = ["--os", "linux", "--arch", "x86_64", "--python", "3.12"]


def project_input(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
    """Requirements files and pyprojects that nest, fan out, loop and run long: each one exit 0 or 2, in time."""
    area = "11 project input (includes, TOML)"
    root = work / "project-input"
    root.mkdir()

    def write(name: str, text: str | bytes) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape"))
        return path

    def plan(*argv: str) -> None:
        attack(tally, area, ["plan", *TARGET_FLAGS, *argv], env, codes=(0, 2))

    for depth in (10, 22) if quick else (10, 22, 31):  # two includes of the next file at each level: 2**depth paths
        for i in range(depth):
            write(f"d{depth}/f{i}.txt", f"-r f{i + 1}.txt\n-r f{i + 1}.txt\n")
        write(f"d{depth}/f{depth}.txt", "numpy\n" * (1 if depth > 12 else 1000))
        plan("-r", str(root / f"d{depth}" / "f0.txt"))
    write("loop/a.txt", "-r b.txt\n")
    write("loop/b.txt", "-c a.txt\n")
    write("self.txt", "-r self.txt\n")
    (root / "linked.txt").symlink_to(root / "linked.txt")
    for i in range(40):
        write(f"deep/n{i}.txt", f"-r n{i + 1}.txt\n")
    write("deep/n40.txt", "numpy\n")
    for i in range(1001):
        write(f"wide/w{i}.txt", f"pkg{i}\n")
    write("wide/all.txt", "".join(f"-r w{i}.txt\n" for i in range(1001)))
    os.mkfifo(root / "fifo.txt")
    write("includes-fifo.txt", f"-r {root / 'fifo.txt'}\n")
    (root / "zero.txt").symlink_to("/dev/zero")
    write("includes-zero.txt", f"-c {root / 'zero.txt'}\n")
    (root / "dir.txt").mkdir()
    for name in ("loop/a.txt", "self.txt", "linked.txt", "deep/n0.txt", "wide/all.txt", "includes-fifo.txt",
                 "includes-zero.txt", "dir.txt", "fifo.txt"):
        plan("-r", str(root / name))
    long_lines = {"blanks": "numpy" + " " * 1_000_000 + "# c\n", "blank then word": "numpy" + " " * 100_000 + "x\n",
                  "comment marks": "numpy" + " #" * 500_000 + "\n", "continuations": "numpy\\\n" * 500_000 + "\n",
                  "a 1 MB hash": "numpy --hash=sha256:" + "a" * 1_000_000 + "\n",
                  "a 1 MB quoted hash": 'numpy --hash="sha256:' + "a" * 1_000_000 + '"\n',
                  "5,000 digits": "torch==" + "9" * 5000 + "\n", "digits in a marker": "pkg ; python_version > '3." +
                  "9" * 5000 + "'\n", "NUL bytes": "numpy\x00\n" * 1000,
                  "lone surrogates": "numpy\udcff\n", "100,000 hashed lines": "".join(
                      f"pkg{i}==1.0 \\\n    --hash=sha256:{i:064x}\n" for i in range(40_000 if quick else 100_000))}
    for name, text in long_lines.items():
        plan("-r", str(write(f"long/{name.replace(' ', '-')}.txt", text)))
    attack(tally, area, ["plan", *TARGET_FLAGS, "-r", str(write("long/var.txt", "${BIG}\n"))],
           {**env, "BIG": "x" * 100_000}, codes=(0, 2))  # (an argument or variable holds at most 128 KiB)
    groups = {
        "diamond 24": "".join(f'g{i} = [{{include-group = "g{i + 1}"}}, {{include-group = "g{i + 1}"}}]\n'
                              for i in range(24)) + 'g24 = ["numpy"]\n',
        "chain 3,000": "".join(f'g{i} = [{{include-group = "g{i + 1}"}}]\n' for i in range(3000)) + 'g3000 = []\n',
        "self": 'g0 = [{include-group = "G0"}]\n', "missing": 'g0 = [{include-group = "nope"}]\n',
        "not a list": 'g0 = "numpy"\n', "not a table": 'g0 = [{include-group = 5}]\n',
    }
    for name, table in groups.items():
        folder = root / f"groups-{name.replace(' ', '-').replace(',', '')}"
        folder.mkdir()
        (folder / "pyproject.toml").write_text(f'[project]\nname = "x"\nversion = "1"\n[dependency-groups]\n{table}')
        plan("--project", str(folder), "--group", "g0")
    for name, text in TOML_INPUTS.items():
        folder = root / f"toml-{len(name)}-{abs(hash(name)) % 10_000}"
        folder.mkdir()
        (folder / "pyproject.toml").write_bytes(text)
        plan("--project", str(folder))
        (folder / "pixi.toml").write_bytes(text)
        (folder / "pyproject.toml").unlink()
        plan("--project", str(folder))


# Valid pyprojects of every form a user writes, and invalid ones: each as a project read and as a --merge target
TOML_VALID = {
    "inline index array": '[project]\nname = "x"\n[tool.uv]\nindex = [{ name = "internal", url = '
                          '"https://internal.invalid/simple" }]\n',
    "empty index array": '[project]\nname = "x"\n[tool.uv]\nindex = []\n',
    "dotted keys": 'project.name = "x"\ntool.uv.index = []\n',
    "inline tool.uv": '[project]\nname = "x"\n[tool]\nuv = { sources = {} }\n',
    "inline tool.uv with an index list": '[project]\nname = "x"\n[tool]\nuv = { index = [] }\n',
    "the user's own PyTorch index": '[project]\nname = "x"\ndependencies = ["xformers"]\n[[tool.uv.index]]\nname = '
                                    '"pytorch-cu124"\nurl = "https://download.pytorch.org/whl/cu124"\nexplicit = true\n'
                                    '[tool.uv.sources]\nxformers = { index = "pytorch-cu124" }\n',
    "split index array": '[project]\nname = "x"\n[[tool.uv.index]]\nname = "a"\nurl = "https://a.invalid/simple"\n'
                         '[tool.uv]\npackage = true\n[[tool.uv.index]]\nname = "b"\nurl = "https://b.invalid/simple"\n',
    "comments everywhere": '# top\n[project] # p\nname = "x" # n\ndependencies = [ # d\n  "numpy", # n\n]\n# end\n',
    "CRLF": '[project]\r\nname = "x"\r\ndependencies = ["numpy"]\r\n',
    "extras and groups": '[project]\nname = "x"\ndependencies = ["numpy"]\n[project.optional-dependencies]\n'
                         'viz = ["matplotlib"]\n[dependency-groups]\ndev = ["pytest"]\n',
}
TOML_INVALID = {
    "project a string": 'project = "x"\n', "tool an integer": 'tool = 5\n[project]\nname = "x"\n',
    "tool.uv a string": '[project]\nname = "x"\n[tool]\nuv = "x"\n',
    "tool.uv.index a table": '[project]\nname = "x"\n[tool.uv.index]\nname = "a"\nurl = "https://a.invalid"\n',
    "tool.uv.index a string": '[project]\nname = "x"\n[tool.uv]\nindex = "x"\n',
    "tool.uv.index of integers": '[project]\nname = "x"\n[tool.uv]\nindex = [1, 2]\n',
    "tool.uv.sources a string": '[project]\nname = "x"\n[tool.uv]\nsources = "x"\n',
    "tool.uv.sources an array": '[project]\nname = "x"\n[tool.uv]\nsources = []\n',
    "not TOML": '[project\nname = "x"\n', "nested 50,000": '[project]\nname = "x"\nx = ' + "[" * 50_000 + "]" * 50_000,
    "a number of 5,000 digits": '[project]\nname = "x"\nx = ' + "9" * 5000 + "\n",
    "dependencies a string": '[project]\nname = "x"\ndependencies = "torch"\n',
}
TOML_INPUTS = {name: text.encode() for name, text in {**TOML_VALID, **TOML_INVALID}.items()}
TOML_INPUTS["latin-1"] = '[project]\nname = "caf\xe9"\n'.encode("latin-1")


def toml_forms(tally: Tally, env: dict[str, str], work: Path) -> None:
    """--merge into each valid form: the result is TOML, keeps what the user wrote (every key line and comment of
    it, its line ends) and a second run changes nothing; into each invalid one: exit 2, the file untouched."""
    import tomllib

    area = "12 --merge TOML forms"
    for number, (name, text) in enumerate({**TOML_VALID, **TOML_INVALID}.items()):
        path = work / f"merge-{number}" / "pyproject.toml"
        path.parent.mkdir()
        path.write_bytes(text.encode())
        argv = ["plan", *TARGET_FLAGS, "--format", "pyproject", "--merge", str(path)]
        valid = name in TOML_VALID

        def merged_wrong(path: Path = path, text: str = text, valid: bool = valid) -> bool:
            after = path.read_bytes().decode("utf-8", "replace")
            if not valid:
                return after != text
            try:
                tomllib.loads(after)
            except tomllib.TOMLDecodeError:
                return True
            kept = all(line in after for line in text.splitlines() if line.strip().startswith(("#", "name")))
            return not kept or (("\r\n" in text) != ("\r\n" in after))

        attack(tally, area, argv, env, merged_wrong, codes=(0,) if valid else (2,))
        if valid:
            first = path.read_bytes()
            attack(tally, area, argv, env, lambda path=path, first=first: path.read_bytes() != first, codes=(0,))
    # the README's flow, twice: a project merged into its own pyproject keeps its dependencies as they were
    project = work / "merge-own-project"
    project.mkdir()
    own = project / "pyproject.toml"
    own.write_text('[project]\nname = "x"\nversion = "1"\ndependencies = ["torch>=2.8", "transformers", "numpy<2"]\n'
                   '[project.optional-dependencies]\nviz = ["matplotlib"]\n[dependency-groups]\ndev = ["pytest"]\n')
    argv = ["plan", *TARGET_FLAGS, "--project", str(project), "--extra", "viz", "--group", "dev", "--format",
            "pyproject", "--merge", str(own)]

    def moved_or_doubled() -> bool:
        try:
            dependencies = tomllib.loads(own.read_text())["project"]["dependencies"]
        except (tomllib.TOMLDecodeError, KeyError, TypeError):
            return True
        others = [d for d in dependencies if not d.startswith("torch")]
        return others != ["transformers", "numpy<2"]

    attack(tally, area, argv, env, moved_or_doubled, codes=(0,))
    first = own.read_bytes()
    attack(tally, area, argv, env, lambda: own.read_bytes() != first, codes=(0,))
    readme_flow(tally, env, work)


def readme_flow(tally: Tally, env: dict[str, str], work: Path) -> None:
    """The README's merge flow as it is written there, in the project and on this machine, twice: the first run
    keeps every requirement where the project has it (each once), the second leaves the file byte for byte."""
    import tomllib

    area = "12 --merge TOML forms"
    project = work / "merge-readme-flow"
    project.mkdir()
    own = project / "pyproject.toml"
    own.write_text('[project]\nname = "x"\nversion = "1"\ndependencies = ["torch>=2.8", "torchvision", '
                   '"transformers"]\n[project.optional-dependencies]\nspeed = ["xformers"]\n')
    argv = ["plan", "--project", ".", "--extra", "speed", "--format", "pyproject", "--merge", "pyproject.toml"]

    def names(requirements: list[str]) -> list[str]:
        return [requirement.split("=")[0].split(">")[0].split("<")[0].strip() for requirement in requirements]

    def moved_or_doubled() -> bool:
        try:
            project = tomllib.loads(own.read_text())["project"]
        except (tomllib.TOMLDecodeError, KeyError):
            return True
        return (names(project.get("dependencies", [])) != ["torch", "torchvision", "transformers"]
                or names(project.get("optional-dependencies", {}).get("speed", [])) != ["xformers"])

    attack(tally, area, argv, env, moved_or_doubled, codes=(0, 1), cwd=project)
    first = own.read_bytes()
    attack(tally, area, argv, env, lambda: own.read_bytes() != first, codes=(0, 1), cwd=project)


def special_files(tally: Tally, env: dict[str, str], work: Path) -> None:
    """A FIFO, a device, a link, a hard link, a directory named as a --merge target or a -r file: refused (or the
    link's target edited), never replaced, never waited on, never read without end."""
    import stat

    area = "13 special files (-r, --merge)"
    victim = work / "victim" / "pyproject.toml"
    victim.parent.mkdir()
    victim.write_text('[project]\nname = "victim"\n')
    kinds: dict[str, Callable[[Path], None]] = {
        "fifo": lambda p: os.mkfifo(p), "symlink to a pyproject": lambda p: p.symlink_to(victim),
        "hard link": lambda p: os.link(victim, p), "link to /dev/zero": lambda p: p.symlink_to("/dev/zero"),
        "link to /dev/urandom": lambda p: p.symlink_to("/dev/urandom"), "directory": lambda p: p.mkdir(),
    }
    if os.geteuid() == 0:  # a device node of its own, as /dev/null is (never the system's)
        kinds["character device"] = lambda p: os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    for number, make in enumerate(kinds.values()):
        path = work / f"special-{number}" / "pyproject.toml"
        path.parent.mkdir()
        make(path)
        for argv, codes in ((["--format", "pyproject", "--merge", str(path)], None), (["-r", str(path)], (2,)),
                            (["--project", str(path.parent)], None)):
            before, links = os.lstat(path), victim.stat().st_nlink

            def replaced(path: Path = path, before: os.stat_result = before, links: int = links) -> bool:
                after = os.lstat(path)
                same = stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
                return not same or victim.stat().st_nlink != links

            attack(tally, area, ["plan", *TARGET_FLAGS, *argv], env, replaced, limit=20, codes=codes)
    readonly = work / "special-ro"
    readonly.mkdir()
    (readonly / "pyproject.toml").write_text('[project]\nname = "x"\n')
    if os.geteuid() != 0:  # root writes anywhere
        readonly.chmod(0o555)
        attack(tally, area, ["plan", *TARGET_FLAGS, "--format", "pyproject", "--merge",
                             str(readonly / "pyproject.toml")], env, codes=(2, 3))
        readonly.chmod(0o755)


# what a user name or password can hold in a URL as urllib and pip read it
URL_ALPHABET = [c for c in map(chr, range(0x21, 0x7f)) if c not in "/?#"] + list("éü中") + ["%40", "%2F", "%20"]


def redaction_alphabets(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
    """User names and passwords drawn from every character a URL's credentials can hold, planted in the options
    after --, a requirements file, PIP_INDEX_URL and --index-base, through every format, -v and the doctor: no
    part of them may be printed."""
    import random
    import shlex

    area = "14 credentials of every alphabet"
    rng = random.Random(33)
    profile = work / "alphabet-profile.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    for case in range(10 if quick else 60):
        user, password = ("".join(rng.choice(URL_ALPHABET) for _ in range(rng.randint(0, 10))) for _ in range(2))
        marks = (f"Uq{case}x", f"Uz{case}x", f"Pq{case}x", f"Pz{case}x")
        url = f"https://{marks[0]}{user}{marks[1]}:{marks[2]}{password}{marks[3]}@mirror.invalid/simple"
        requirements = work / f"alphabet-{case}.txt"
        requirements.write_text(f"--extra-index-url {shlex.quote(url)}\nnumpy\n")
        planted = {**env, "PIP_INDEX_URL": url, "VIRTUAL_ENV": sys.prefix}
        after = ["--", "--extra-index-url", url]
        runs = [["plan", "--target", str(profile), "--format", fmt, *after]
                for fmt in ("text", "pip", "json", "dockerfile", "requirements")]
        runs += [["plan", "--target", str(profile), "--format", "requirements", "-r", str(requirements)],
                 ["plan", "--target", str(profile), "--index-base", url], ["plan", "--target", str(profile), "-v",
                                                                             *after],
                 ["doctor", "--json"], ["install", "--dry-run", "--offline", *after]]
        for argv in runs:
            attack(tally, area, argv, planted, secrets=marks)
        attack(tally, area, ["plan", "--target", str(profile)], {**planted, "TORCH_INSTALL_INDEX_BASE": url},
               secrets=marks, codes=(2,))


def tar_headers(tally: Tally, env: dict[str, str], work: Path, quick: bool) -> None:
    """Capture archives whose headers tar readers read differently: signed and underscored sizes, negative and
    huge base-256 sizes, links whose size hides the next header, PAX records that resize or sparsify, sparse
    members, other compressions named .tar.gz. Each one refused or read within bounds, nothing written."""
    import bz2
    import gzip
    import lzma

    area = "15 capture tar headers"
    host = b'{"system":"Linux","machine":"x86_64","python_version":"3.12.1"}'
    first = _tar_header(b"_host.json", len(host)) + host + b"\0" * (512 - len(host))
    bomb = 16 << 20 if quick else 64 << 20
    bodies = {
        "plus-sign PAX bomb": _tar_header(b"././@PaxHeader", b"+%011o" % bomb, b"x") + b"\0" * bomb,
        "underscore size": _tar_header(b"x", b"0_000000001\0") + b"\0" * 512,
        "negative base-256": _tar_header(b"x", b"\xff" * 12),
        "huge base-256": _tar_header(b"x", b"\x80" + (1 << 60).to_bytes(11, "big")),
        "link hiding a header": _tar_header(b"l", 1024, b"2") + _tar_header(b"././@PaxHeader", 1 << 30, b"x"),
        "PAX size": _tar_header(b"././@PaxHeader", 26, b"x") + b"26 size=99999999999999999\n".ljust(512, b"\0")
        + _tar_header(b"x", 0),
        "sparse": _tar_header(b"s", 1, b"S") + b"\0" * 512,
        "malformed PAX": _tar_header(b"././@PaxHeader", 10, b"x") + b"99 path=x\n".ljust(512, b"\0"),
    }
    scratch = work / "tar-scratch"
    scratch.mkdir()
    for name, body in bodies.items():
        path = work / f"tar-{name.replace(' ', '-')}.tar.gz"
        path.write_bytes(gzip.compress(first + body + b"\0" * 1024, compresslevel=1))
        for command in ("detect", "plan"):
            attack(tally, area, [command, "--sysroot", str(path)], {**env, "TMPDIR": str(scratch)},
                   lambda: any(scratch.iterdir()), codes=(0, 2))
    plain = first + b"\0" * 1024
    for name, data in {"xz": lzma.compress(plain), "bzip2": bz2.compress(plain), "random": os.urandom(4096),
                       "gzip of random": gzip.compress(os.urandom(4096)), "truncated": gzip.compress(plain)[:40],
                       "empty": b""}.items():
        path = work / f"tar-as-{name.replace(' ', '-')}.tar.gz"
        path.write_bytes(data)
        attack(tally, area, ["detect", "--sysroot", str(path)], {**env, "TMPDIR": str(scratch)},
               lambda: any(scratch.iterdir()), codes=(2,))


def unwritable_output(tally: Tally, env: dict[str, str], work: Path) -> None:
    """Every command with its stdout or stderr on a full disk or closed, and read by a reader that leaves after
    one byte: a documented exit code (74, or the command's own), never a traceback or an internal error."""
    area = "16 full, closed and left output"
    profile = work / "output-profile.json"
    profile.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    commands = [["plan", "--target", str(profile), "--format", fmt] for fmt in ("text", "json", "dockerfile", "pip")]
    commands += [["detect"], ["detect", "--json"], ["doctor"], ["matrix", "--target", str(profile)],
                 ["completion", "bash"], ["--help"], ["plan", "--python", "3.x"],
                 ["plan", "--gpu", "Tesla K80", "--nvidia-driver", "470.82.01", *TARGET_FLAGS],
                 ["install", "--dry-run", "--offline"]]
    python = [sys.executable, "-m", "torch_install"]
    redirections = {">/dev/full": 'exec "$@" >/dev/full', ">&-": 'exec "$@" >&-',
                    "2>/dev/full": 'exec "$@" 2>/dev/full', "2>&-": 'exec "$@" 2>&-'}
    if not os.path.exists("/dev/full"):
        redirections = {k: v for k, v in redirections.items() if "full" not in k}
    head = '{ "$@"; echo "exit=$?" >&2; } | head -c 1 >/dev/null'  # the command's own code, said on stderr
    env = {**env, "VIRTUAL_ENV": sys.prefix}
    for argv in commands:
        for script in redirections.values():
            attack(tally, area, argv, env, command=["sh", "-c", script, "sh", *python, *argv], codes=(0, 1, 2, 74))
        rc, err, out, rss = run_measured(argv, env, command=["sh", "-c", head, "sh", *python, *argv])
        own = err.rsplit("exit=", 1)[-1].strip()
        code = None if rc is None else SKIPPED if rc == SKIPPED else int(own) if own.isdigit() else -2
        tally.add(area, code, err, code not in (None, SKIPPED, 0, 1, 2), out, rss)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer inputs per class")
    parser.add_argument("--only", action="append", default=[], metavar="CLASS",
                        help="run only these classes (function names: captures, credentials, …); repeatable")
    parser.add_argument("--max-runs", type=int, help="start at most this many runs in all")
    parser.add_argument("--budget-seconds", type=float, help="start no run after this many seconds")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures to FILE as JSON")
    args = parser.parse_args()
    global BUDGET
    BUDGET = Budget(args.max_runs, args.budget_seconds)
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
            "project_input": lambda: project_input(tally, env, work, args.quick),
            "toml_forms": lambda: toml_forms(tally, env, work),
            "redaction_alphabets": lambda: redaction_alphabets(tally, env, work, args.quick),
            "tar_headers": lambda: tar_headers(tally, env, work, args.quick),
        }
        if os.name == "posix":  # venv layouts, signals, os.wait4
            classes.update(doctor_envs=lambda: doctor_envs(tally, env, work),
                           installs=lambda: installs(tally, env, work),
                           concurrent_installs=lambda: concurrent_installs(tally, env, work),
                           pin_configurations=lambda: pin_configurations(tally, env, work, args.quick),
                           special_files=lambda: special_files(tally, env, work),
                           unwritable_output=lambda: unwritable_output(tally, env, work))
        unknown = set(args.only) - set(classes)
        if unknown:
            parser.error(f"--only: no class {', '.join(sorted(unknown))} (one of {', '.join(classes)})")
        for name, run_class in classes.items():
            if not args.only or name in args.only:
                print(f"{name} …", file=sys.stderr)
                run_class()
    tally.print()
    print(f"({time.monotonic() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps({"classes": tally.json(), "seconds": round(time.monotonic() - started)},
                                        indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
