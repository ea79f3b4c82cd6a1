"""Deadlines that hold: a server that trickles one byte at a time — in the status line or in the body — is given up
on at TORCH_INSTALL_INDEX_TIMEOUT per attempt and three times that per page, with one warning and the embedded
data used; `variants URL` obeys the same bound. (The bounds asserted are the documented deadlines plus slack for a
slow machine, never a speed figure.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from servers import TrickleServer
from torch_install.cli import main

pytestmark = pytest.mark.slow  # waits out real time limits

BODY_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000000\r\n\r\n"
STATUS_LINE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n0123456789"


@pytest.fixture(autouse=True)
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_INSTALL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_INSTALL_INDEX_TIMEOUT", "0.5")
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "2")
    monkeypatch.delenv("TORCH_INSTALL_INDEX_BASE", raising=False)


def _profile(tmp_path: Path) -> str:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"os": "linux", "arch": "x86_64", "python": "3.12", "glibc": "2.35"}))
    return str(path)


@pytest.mark.parametrize(("head", "trickle"), [(b"", STATUS_LINE), (BODY_HEAD, b" " * 1000)],
                         ids=["status-line", "body"])
def test_a_trickling_index_is_given_up_at_the_deadline(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        head: bytes, trickle: bytes) -> None:
    server = TrickleServer(head, trickle, interval=0.1)  # would take 100 s to finish the body
    try:
        started = time.monotonic()
        code = main(["plan", "--online", "--index-base", f"http://127.0.0.1:{server.port}/whl",
                     "--target", _profile(tmp_path), "--format", "json"])
        took = time.monotonic() - started
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out)["choice"]["variant"] == "cpu"  # the embedded matrix's answer
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "using the embedded matrix" in lines[0], err
    assert re.search(r"not complete (after 0\.5 s|by the page's 1\.5 s deadline)", lines[0]), lines[0]
    assert "attempts)" in lines[0] and server.accepted >= 2  # retried, within the page's 1.5 s
    assert took < 1.5 + 3  # the page's deadline (3 × 0.5 s, backoff included), and slack


def test_variants_url_obeys_the_same_deadline(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_INSTALL_INDEX_RETRIES", "0")
    server = TrickleServer(BODY_HEAD.replace(b"text/html", b"application/json"), b" " * 1000, interval=0.1)
    try:
        started = time.monotonic()
        code = main(["variants", f"http://127.0.0.1:{server.port}/torch-2.10.0-variants.json",
                     "--target", _profile(tmp_path)])
        took = time.monotonic() - started
    finally:
        server.close()
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and "not complete after 0.5 s (1 attempt)" in err, err
    assert took < 0.5 + 5


def test_the_timeout_sets_the_attempt_and_three_times_it_for_the_page() -> None:
    from torch_install.index.client import fetch_settings

    assert fetch_settings({"TORCH_INSTALL_INDEX_TIMEOUT": "4"}) == {"timeout": 4.0, "deadline": 12.0}
    assert fetch_settings({}) == {}


def _slow_page() -> tuple[bytes, bytes]:
    """A real-shaped torch page (about 230 KiB) and its response head."""
    from index_pages import html_page

    rows = [(v, f"torch-2.{m}.{p}+{v}-cp312-cp312-manylinux_2_28_x86_64.whl", ">=3.10")
            for m in range(9, 16) for p in range(3) for v in ("cpu", "cu126", "cu128", "cu130")] * 12
    body = html_page("torch", rows).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body), body


def test_a_slow_link_that_keeps_sending_is_waited_for_not_cut_off(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    head, body = _slow_page()
    server = TrickleServer(head, body, interval=0.05, chunk=4096)  # 80 KiB/s: about 3 s, the attempt limit 0.5 s
    try:
        code = main(["plan", "--online", "--index-base", f"http://127.0.0.1:{server.port}/whl",
                     "--target", _profile(tmp_path), "--format", "json"])
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and server.accepted == 1, err  # one attempt, never restarted
    assert json.loads(out)["choice"]["torch"] == "2.15.2"  # learnt from the page (the embedded data ends at 2.15.0)


def test_a_terminal_is_told_what_a_long_fetch_is_doing(tmp_path: Path) -> None:
    """One status line, rewritten in place on stderr, when stderr is a terminal; none with --json or -q."""
    import os
    import pty
    import subprocess
    import sys

    head, body = _slow_page()
    outputs = {}
    for name, extra in (("text", []), ("json", ["--format", "json"]), ("quiet", ["-q"])):
        server = TrickleServer(head, body, interval=0.05, chunk=4096)
        leader, follower = pty.openpty()
        env = {**os.environ, "TORCH_INSTALL_CACHE_DIR": str(tmp_path / f"cache-{name}"),
               "TORCH_INSTALL_INDEX_TIMEOUT": "0.5", "TORCH_INSTALL_DEFAULT_INDEX": "none"}
        try:
            done = subprocess.Popen([sys.executable, "-m", "torch_install", "plan", "--online", "--index-base",
                                     f"http://127.0.0.1:{server.port}/whl", "--target", _profile(tmp_path), *extra],
                                    stdout=subprocess.DEVNULL, stderr=follower, env=env)
            os.close(follower)
            chunks = []
            while True:
                try:
                    data = os.read(leader, 4096)
                except OSError:
                    break
                if not data:
                    break
                chunks.append(data)
            done.wait(60)
        finally:
            os.close(leader)
            server.close()
        outputs[name] = b"".join(chunks).decode("utf-8", "replace")
    assert "torch-install: fetching http://127.0.0.1:" in outputs["text"] and "KiB" in outputs["text"]
    assert "\r" in outputs["text"] and "\x1b" not in outputs["text"]  # rewritten in place, no colour
    assert "fetching" not in outputs["json"] and "fetching" not in outputs["quiet"]
