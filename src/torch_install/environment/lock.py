"""One installer per environment at a time: ``install`` and ``doctor --fix`` hold an exclusive lock on the
environment for their whole transaction (the snapshot, every installer step, the restore, the pin), so two runs
never interleave their installs into one site-packages.

The lock is an OS file lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows) on ``.torch-install.lock`` in the
environment's prefix, or, where the prefix cannot be written (a system Python), on a file of the user's cache
named after the prefix. The OS drops it when the holder exits, however it exits, so a killed run leaves no stale
lock. A second run waits for it, saying so once, up to ``--lock-timeout`` seconds (0: refuse at once).
"""

from __future__ import annotations

import os
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import EnvironmentFailure

LOCK_FILE = ".torch-install.lock"
DEFAULT_TIMEOUT = 600.0  # seconds a second run waits: a CUDA build of torch can take minutes to download
POLL = 0.2


def _lock_paths(prefix: str) -> list[str]:
    """Where the lock of an environment may be: in its prefix, else in the user's cache."""
    from ..user_dirs import cache_root

    key = f"{zlib.crc32(os.path.realpath(prefix).encode()):08x}"
    return [os.path.join(prefix, LOCK_FILE), os.path.join(cache_root(), "locks", f"{key}.lock")]


def _open(prefix: str) -> tuple[int, str]:
    """A descriptor of the environment's lock file (created if need be), and its path."""
    last: OSError | None = None
    for path in _lock_paths(prefix):
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644), path
        except OSError as exc:
            last = exc
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
    """The holder's pid as it wrote it ("pid 4242"), or "another torch-install"."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        pid = os.read(fd, 32).decode("ascii", "replace").strip()
    except OSError:
        pid = ""
    return f"torch-install (pid {pid})" if pid.isdigit() else "another torch-install"


@contextmanager
def environment_lock(prefix: str, timeout: float = DEFAULT_TIMEOUT,
                     say: Callable[[str], None] | None = None) -> Iterator[str]:
    """Hold the environment's lock for the block (its path is yielded). Another run holding it is waited for up to
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
        os.write(fd, f"{os.getpid()}\n".encode())
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock
