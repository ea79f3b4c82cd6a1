"""Running a short-lived command for its output: no shell, stdin at end-of-file, a time limit, output decoded.

The command gets its own process group (POSIX), so when it runs past the limit, or this process is
interrupted, the command and anything it started are killed together and cannot hold the pipes open.
Used by the probe (``nvidia-smi`` and friends), ``--python`` interpreter queries and ``doctor
--import-torch``. The installer is not run this way: its progress streams to the terminal, with no limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping


@dataclass(frozen=True)
class Captured:
    """What a command left: exit code (negative: killed by that signal), stdout and stderr as text.

    ``returncode`` is None when it ran past its time limit and was killed; its output is then empty."""

    returncode: int | None
    stdout: str = ""
    stderr: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def run_captured(argv: list[str], timeout: float, env: Mapping[str, str] | None = None) -> Captured:
    """Run ``argv`` and wait at most ``timeout`` seconds; output is decoded as UTF-8 (bad bytes replaced).

    A command that cannot be started raises ``OSError`` (``FileNotFoundError``, ``PermissionError`` …):
    each caller words that failure for its own user.
    """
    import subprocess  # only when a command really runs: detection on files never pays for it

    posix = os.name == "posix"
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=dict(env) if env is not None else None, start_new_session=posix)
    with proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return Captured(None)
        except BaseException:  # Ctrl-C while waiting: the command must not outlive us in its own group
            _kill_group(proc)
            raise
    return Captured(proc.returncode, stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"))


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
