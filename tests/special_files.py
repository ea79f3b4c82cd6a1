"""Files that are not regular files, made for the tests of what refuses them: a FIFO, a socket, a directory, a
character device (a device node needs root; elsewhere the test is skipped)."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

KINDS = ["FIFO", "socket", "directory", "character device"]  # as the refusal names each


def make_special(path: Path, kind: str) -> None:
    """``path`` made a ``kind`` of KINDS (a socket stays bound while the process lives)."""
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        _SOCKETS.append(server)
    elif kind == "directory":
        path.mkdir()
    elif os.geteuid() == 0:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    else:
        pytest.skip("a device node needs root")


_SOCKETS: list[socket.socket] = []
