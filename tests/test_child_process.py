"""Short-lived commands run for their output: limits, group kill, decoding; the callers' wording on top."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from torch_install.child_process import run_captured
from torch_install.doctor.runtime import import_torch
from torch_install.environment import interpreter
from torch_install.environment.interpreter import query_interpreter
from torch_install.errors import InputError

pytestmark = [pytest.mark.skipif(os.name != "posix", reason="POSIX shell scripts and /proc"), pytest.mark.slow]


def _running(word: str) -> bool:
    """Whether a process with ``word`` on its command line is still alive, allowing a killed one a moment to die
    (SIGKILL to a process group is delivered asynchronously)."""
    for _ in range(50):
        if not any(word in _cmdline(pid) for pid in os.listdir("/proc") if pid.isdigit()):
            return False
        time.sleep(0.1)
    return True


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _hanging_script(path: Path, seconds: str) -> Path:
    """A script that starts a background child (not holding the pipes, so only a group kill stops it), then hangs."""
    path.write_text(f"#!/bin/sh\n/bin/sleep {seconds} >/dev/null 2>&1 &\necho started\nexec /bin/sleep {seconds}\n")
    path.chmod(0o755)
    return path


def test_exit_code_and_output_decoded_with_bad_bytes_replaced(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_bytes(b"#!/bin/sh\nprintf 'caf\\303\\251 \\377\\n'\necho oops >&2\nexit 4\n")
    script.chmod(0o755)
    done = run_captured([str(script)], 10)
    assert (done.returncode, done.stdout, done.stderr, done.timed_out) == (4, "café \ufffd\n", "oops\n", False)


def test_timeout_kills_the_command_and_what_it_started(tmp_path: Path) -> None:
    done = run_captured([str(_hanging_script(tmp_path / "hang", "61.25"))], 0.3)
    assert done.timed_out and (done.returncode, done.stdout) == (None, "")
    assert not _running("61.25")


def test_environment_is_exactly_the_one_given(tmp_path: Path) -> None:
    done = run_captured(["/usr/bin/env"], 10, env={"ONLY_THIS": "1"})
    assert done.stdout == "ONLY_THIS=1\n"


def test_a_command_that_cannot_start_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        run_captured([str(tmp_path / "missing")], 10)
    text = tmp_path / "text"
    text.write_text("not a program")
    with pytest.raises(PermissionError):
        run_captured([str(text)], 10)


def test_interrupt_while_waiting_kills_the_command(tmp_path: Path) -> None:
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_captured([str(_hanging_script(tmp_path / "hang", "62.25"))], 60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not _running("62.25")


def test_python_queries_kill_a_hung_wrapper_with_its_children(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interpreter, "FACTS_TIMEOUT", 1.0)
    with pytest.raises(InputError, match=r"did not answer within 1 s \(killed\)$"):
        query_interpreter(str(_hanging_script(tmp_path / "python", "63.25")))
    assert not _running("63.25")
    with pytest.raises(InputError, match=r"did not answer within 0.5 s \(killed\)$"):
        query_interpreter(str(_hanging_script(tmp_path / "python3", "64.25")), timeout=0.5)
    assert not _running("64.25")


def test_import_torch_hang_kills_the_child_group(tmp_path: Path) -> None:
    pkg = tmp_path / "site"
    (pkg / "torch").mkdir(parents=True)
    (pkg / "torch" / "__init__.py").write_text(
        "import subprocess, time\n"
        "subprocess.Popen(['/bin/sleep', '65.25'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "time.sleep(60)\n")
    report = import_torch(sys.executable, {**os.environ, "PYTHONPATH": str(pkg)}, expect_gpu=False, timeout=2)
    assert report.facts == {"timed_out": True} and report.findings[0].code == "import-torch-hung"
    assert not _running("65.25")
