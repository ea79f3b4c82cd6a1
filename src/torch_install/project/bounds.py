"""What reading a project may cost: the size of one file, the files and bytes of all of them, how deep includes
nest, and the time it all takes. One ``ReadBudget`` is spent by every file one command reads (``-r``/``-c`` files
and what they include, the pyproject), so no input, however it nests, costs more than these."""

from __future__ import annotations

import time

from ..errors import InputError

MAX_FILE = 4 * 1024 * 1024  # one file; a compiled lock of a large project is well under 1 MiB
MAX_TOTAL = 16 * 1024 * 1024  # every file one command reads
MAX_FILES = 1000  # distinct files one command reads (a file included twice is read once)
MAX_DEPTH = 32  # nested -r/-c files, and {include-group} chains
READ_SECONDS = 30.0  # reading them all; the parsers are linear, so only a machine far too busy comes near it


class ReadBudget:
    """What the files still to be read may take; each ``take`` or ``check`` that goes over is an InputError
    naming where."""

    __slots__ = ("seconds", "deadline", "bytes_left", "files_left")

    def __init__(self, seconds: float = READ_SECONDS) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.bytes_left = MAX_TOTAL
        self.files_left = MAX_FILES

    def take(self, where: str, size: int) -> None:
        """One more file of ``size`` bytes."""
        self.files_left -= 1
        self.bytes_left -= size
        if self.files_left < 0:
            raise InputError(f"{where}: more files included than the {MAX_FILES} one command reads")
        if self.bytes_left < 0:
            raise InputError(f"{where}: the files included come to more than the {MAX_TOTAL >> 20} MiB one command "
                             "reads")
        self.check(where)

    def check(self, where: str) -> None:
        """Still inside the time to read the input."""
        if time.monotonic() > self.deadline:
            raise InputError(f"{where}: reading the project's files took over {self.seconds:g} s")


def read_bounded(path: str, where: str, kind: str, budget: ReadBudget) -> bytes:
    """The bytes of one project file at ``path`` (a regular file, at most ``MAX_FILE``), spent from ``budget``;
    an InputError naming ``where`` when it cannot be read or is too large to be ``kind`` ("a setup.cfg")."""
    from ..probe import read_regular

    try:
        data = read_regular(path, MAX_FILE + 1)
    except OSError as exc:
        raise InputError(f"{where}: cannot read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE:
        raise InputError(f"{where}: over {MAX_FILE >> 20} MiB, not {kind}")
    budget.take(where, len(data))
    return data
