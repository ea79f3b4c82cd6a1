"""Running a short-lived command for its output: no shell, stdin at end-of-file, a time limit, output decoded.

The command gets its own process group (POSIX), so when it runs past the limit, or this process is
interrupted, the command and anything it started are killed together and cannot hold the pipes open.
Used by the probe (``nvidia-smi`` and friends), ``--python`` interpreter queries and ``doctor
--import-torch``. The installer is not run this way: its progress streams to the terminal, with no limit.
"""

from __future__ import annotations

import os

from .records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping
    from typing import IO

    from .progress import Status


class Captured(Record):
    """What a command left: exit code (negative: killed by that signal), stdout and stderr as text.

    ``returncode`` is None when it ran past its time limit and was killed; its output is then empty."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


MAX_OUTPUT = 8 << 20  # bytes kept of each stream; a command printing more is killed (``doctor --python /usr/bin/yes``)
_GRACE = 1.0  # seconds to collect what a finished command left in its pipes


def run_captured(argv: list[str], timeout: float, env: Mapping[str, str] | None = None,
                 label: str | None = None) -> Captured:
    """Run ``argv`` and wait at most ``timeout`` seconds in all; output is decoded as UTF-8 (bad bytes replaced).

    Each stream is read by its own thread into at most ``MAX_OUTPUT`` bytes; a command that prints more is
    killed (exit -9, the streams kept so far, a line saying why). Past the deadline the command's process group
    is killed; a grandchild that left the group (``setsid``) and holds the pipes open is not waited for.
    A command that cannot be started raises ``OSError`` (``FileNotFoundError``, ``PermissionError`` …):
    each caller words that failure for its own user. With ``label``, a wait of more than a second shows it in
    one status line (``progress``).
    """
    import subprocess  # only when a command really runs: detection on files never pays for it
    import threading
    import time

    posix = os.name == "posix"
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=dict(env) if env is not None else None, start_new_session=posix)
    buffers = (bytearray(), bytearray())
    overflow = threading.Event()

    def pump(stream: IO[bytes], buffer: bytearray) -> None:
        try:
            while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
                room = MAX_OUTPUT - len(buffer)
                buffer += chunk[:room]
                if len(chunk) > room:
                    overflow.set()
                    return
        except (OSError, ValueError):  # the pipe closed under us: the command was killed
            return

    assert proc.stdout is not None and proc.stderr is not None
    readers = [threading.Thread(target=pump, args=(stream, buffer), daemon=True)
               for stream, buffer in zip((proc.stdout, proc.stderr), buffers, strict=True)]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    line = None
    if label is not None:
        from .progress import Status

        line = Status()
    try:
        while proc.poll() is None:
            if line is not None:
                line.show(f"torch-install: {label} … {line_seconds(line)} s")
            if overflow.is_set():
                _kill_group(proc)
                proc.wait()
                return Captured(-9, _text(buffers[0]), _text(buffers[1]) + f"\n[output over {MAX_OUTPUT >> 20} "
                                                                           "MiB: killed]")
            if time.monotonic() >= deadline:
                _kill_group(proc)
                proc.wait()
                return Captured(None)
            overflow.wait(min(0.02, max(0.0, deadline - time.monotonic())))
        grace = min(deadline, time.monotonic() + _GRACE)
        for reader in readers:  # what it left in the pipes; a grandchild holding them is not waited for
            reader.join(max(0.0, grace - time.monotonic()))
        if overflow.is_set():
            return Captured(-9, _text(buffers[0]), _text(buffers[1]) + f"\n[output over {MAX_OUTPUT >> 20} MiB]")
        return Captured(proc.returncode, _text(buffers[0]), _text(buffers[1]))
    except BaseException:  # Ctrl-C while waiting: the command must not outlive us in its own group
        _kill_group(proc)
        raise
    finally:
        if line is not None:
            line.clear()
        for stream, reader in zip((proc.stdout, proc.stderr), readers, strict=True):
            if not reader.is_alive():  # a reader still blocked (a grandchild holds the pipe) keeps its stream
                stream.close()


def line_seconds(line: Status) -> int:
    import time

    return int(time.monotonic() - line.started)


def _text(data: bytearray) -> str:
    return bytes(data).decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the command's process group (POSIX), else the command alone."""
    if os.name == "posix":
        import signal

        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except OSError:
            pass
    proc.kill()
