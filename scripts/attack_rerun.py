"""Run hostile inputs through the torch-install command and count what goes wrong.

Classes: CLI flag values, --target profiles, sysroot trees, capture archives, hostile index servers (and
`variants URL`), cache corruption, hostile environments for the doctor, and interrupted or failing installs
(real pip, a real venv). For each class it prints the inputs tried, raw tracebacks, internal errors (exit 3
"internal error"), hangs (past the run's limit), and data lost (a file written outside its place, or a torch
that no longer imports). Every run is a fresh `python -m torch_install` process.

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


class Tally:
    def __init__(self) -> None:
        self.rows: dict[str, list[int]] = {}

    def add(self, area: str, rc: int | None, err: str, lost: bool = False) -> None:
        row = self.rows.setdefault(area, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += "Traceback (most recent call last)" in err
        row[2] += rc == 3 and "internal error" in err
        row[3] += rc is None
        row[4] += lost
        if rc is None or (rc == 3 and "internal error" in err) or "Traceback (most recent" in err:
            print(f"  [{area}] rc={rc}: {err.strip().splitlines()[-1][:200] if err.strip() else ''}", file=sys.stderr)

    def print(self) -> None:
        print(f"{'class':<34} {'inputs':>7} {'tracebacks':>10} {'exit 3 internal':>15} {'hangs':>6} {'data lost':>9}")
        total = [0] * 5
        for area, row in self.rows.items():
            print(f"{area:<34} {row[0]:>7} {row[1]:>10} {row[2]:>15} {row[3]:>6} {row[4]:>9}")
            total = [a + b for a, b in zip(total, row, strict=True)]
        print(f"{'total':<34} {total[0]:>7} {total[1]:>10} {total[2]:>15} {total[3]:>6} {total[4]:>9}")


def run_full(argv: list[str], env: dict[str, str], limit: float = LIMIT) -> tuple[int | None, str, str]:
    """One command; (exit code or None for a hang, stderr, stdout)."""
    try:
        done = subprocess.run([sys.executable, "-m", "torch_install", *argv], capture_output=True, env=env,
                              timeout=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "hang", ""
    return done.returncode, done.stderr.decode("utf-8", "replace"), done.stdout.decode("utf-8", "replace")


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
    }
    for name, members in kinds.items():
        path = work / f"capture-{name.replace(' ', '-')}.tar.gz"
        _archive(path, members)
        for command in ("detect", "plan"):
            rc, err = run([command, "--sysroot", str(path)], env)
            lost = victim.read_text() != "precious\n" or (work / "outside.txt").exists()
            tally.add("3b capture archives", rc, err, lost)


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
        for which in ("meta", "files", "derived"):
            for name, damage in damages.items():
                cache = work / f"cc-{which}-{name.replace(' ', '-').replace('/', '')}"
                cache_env = {**env, "TORCH_INSTALL_CACHE_DIR": str(cache)}
                argv = ["plan", "--online", "--index-base", f"http://127.0.0.1:{server.server_port}/whl",
                        "--target", str(target)]
                run(argv, cache_env)
                pattern = {"meta": "*.meta.json", "files": "*.files.json", "derived": "derived/*.json"}[which]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer inputs per class")
    args = parser.parse_args()
    tally = Tally()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ti-attack-") as scratch:
        work = Path(scratch)
        env = {**os.environ, "TORCH_INSTALL_DEFAULT_INDEX": "none", "TORCH_INSTALL_CACHE_DIR": str(work / "cache"),
               "TORCH_INSTALL_INDEX_TIMEOUT": "1", "TORCH_INSTALL_INDEX_RETRIES": "1", "PYTHONPATH": str(ROOT / "src")}
        for name in ("CUDA_VERSION", "ROCM_VERSION", "TORCH_INSTALL_INDEX_BASE", "VIRTUAL_ENV"):
            env.pop(name, None)
        cli_flags(tally, env, args.quick)
        profiles(tally, env, work, args.quick)
        sysroots(tally, env, work, args.quick)
        captures(tally, env, work)
        hostile_index(tally, env, work)
        cache_corruption(tally, env, work)
        if os.name == "posix":
            doctor_envs(tally, env, work)
            installs(tally, env, work)
    tally.print()
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
