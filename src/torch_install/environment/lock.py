"""One installer per environment at a time: every install transaction (``transaction.py``: ``install``,
``doctor --fix``) holds an exclusive lock on the environment from before its snapshot to after its pin, and each
installer it runs holds it too, for the installer's whole life, so two runs never interleave their installs into
one site-packages, even when torch-install itself is killed while its pip goes on.

The lock is an OS file lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows) on ``.torch-install.lock`` in the
environment's prefix, or, where the prefix cannot be written (a system Python), on a file of the user's cache
named after the prefix. ``flock`` belongs to the open file, which the installer inherits (``Lock.fds``, passed to
it): the OS drops the lock when the last of them exits, however it exits, so nothing is ever left locked by a
process that is gone. The file names its holders, each by process id and start time (a process id alone may have
been reused): a second run that finds the lock taken names who holds it (torch-install, or the pip it started,
still running after torch-install was stopped) and waits for it, saying so once, up to ``--lock-timeout`` seconds
(0: refuse at once). On Windows the lock is the process's own: an installer left running by a killed torch-install
does not hold it.
"""

from __future__ import annotations

import os
import stat
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import EnvironmentFailure

LOCK_FILE = ".torch-install.lock"
DEFAULT_TIMEOUT = 600.0  # seconds a second run waits: a CUDA build of torch can take minutes to download
POLL = 0.2


class Lock:
    """The environment's lock, held: its file, and the descriptor that an installer inherits to hold it too."""

    __slots__ = ("fd", "path")

    def __init__(self, fd: int, path: str) -> None:
        self.fd, self.path = fd, path

    @property
    def fds(self) -> tuple[int, ...]:
        """The descriptors to pass to an installer so that it holds the lock while it runs (none on Windows)."""
        return (self.fd,) if os.name == "posix" else ()

    def holder(self, role: str, pid: int) -> None:
        """Name a holder in the lock file: ``role`` ("torch-install", "installer"), its pid and start time."""
        os.write(self.fd, f"{role} {pid} {start_time(pid)}\n".encode())


def start_time(pid: int) -> str:
    """When process ``pid`` started, as its OS tells (Linux: clock ticks since boot, field 22 of /proc/PID/stat);
    "" where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            data = file.read(4096)
    except OSError:
        return ""
    fields = data[data.rfind(b")") + 2:].split()
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else ""


def _running(pid: int, started: str) -> bool:
    """Whether ``pid`` is a live process that started at ``started`` (not a later one given the same pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, another user's
        pass
    return not started or start_time(pid) in ("", started)


def _lock_paths(prefix: str) -> list[str]:
    """Where the lock of an environment may be: in its prefix, else in the user's cache."""
    from ..user_dirs import cache_root

    key = f"{zlib.crc32(os.path.realpath(prefix).encode()):08x}"
    return [os.path.join(prefix, LOCK_FILE), os.path.join(cache_root(), "locks", f"{key}.lock")]


def _open(prefix: str) -> tuple[int, str]:
    """A descriptor of the environment's lock file (created if need be), and its path. A lock file that is no
    regular file (a FIFO, a device) is an EnvironmentFailure naming it."""
    last: OSError | None = None
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    for path in _lock_paths(prefix):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, flags, 0o644)
        except OSError as exc:
            last = exc
            continue
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise EnvironmentFailure(f"{path}, the lock of {prefix}, is not a regular file: remove it (torch-install "
                                     "makes it again)")
        return fd, path
    raise EnvironmentFailure(f"cannot create the lock of {prefix} ({last.strerror if last else 'unknown'}): "
                             "torch-install will not install without it")


def _try_lock(fd: int) -> bool:
    if os.name == "nt":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(fd: int) -> str:
    """Who holds the lock, from what its holders wrote: "torch-install (pid 4242)", "pip (pid 4250), which
    torch-install (pid 4242, since stopped) started", or "another torch-install"."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 4096).decode("ascii", "replace")
    except OSError:
        text = ""
    holders = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 1 and parts[0].isdigit():  # an earlier version's file: the pid alone
            parts = ["torch-install", parts[0], ""]
        if len(parts) >= 2 and parts[1].isdigit():
            holders[parts[0]] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    own = holders.get("torch-install")
    if own and _running(*own):
        return f"torch-install (pid {own[0]})"
    child = holders.get("installer")
    if child and _running(*child):
        stopped = f", which torch-install (pid {own[0]}, since stopped) started," if own else ""
        return f"the installer (pid {child[0]}){stopped}"
    return "another torch-install"


@contextmanager
def environment_lock(prefix: str, timeout: float = DEFAULT_TIMEOUT,
                     say: Callable[[str], None] | None = None) -> Iterator[Lock]:
    """Hold the environment's lock for the block. Another run (or its installer) holding it is waited for up to
    ``timeout`` seconds, with one line to ``say``; then an EnvironmentFailure names it."""
    fd, path = _open(prefix)
    try:
        if not _try_lock(fd):
            holder = _holder(fd)
            if timeout <= 0:
                raise EnvironmentFailure(f"{holder} is installing into {prefix}; torch-install runs one installer "
                                         "per environment at a time (try again when it is done, or wait with "
                                         "--lock-timeout SECONDS)")
            if say is not None:
                say(f"torch-install: {holder} is installing into {prefix}: waiting for it (at most {timeout:g} s)")
            deadline = time.monotonic() + timeout
            while not _try_lock(fd):
                if time.monotonic() >= deadline:
                    raise EnvironmentFailure(f"{holder} was still installing into {prefix} after {timeout:g} s; try "
                                             "again when it is done, or wait longer with --lock-timeout SECONDS")
                time.sleep(POLL)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        lock = Lock(fd, path)
        lock.holder("torch-install", os.getpid())
        yield lock
    finally:
        os.close(fd)  # the lock is released when no installer holds it any more either
