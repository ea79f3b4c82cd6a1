"""One status line on stderr for work that takes a while: fetching a large index page, reading other packages'
metadata, importing torch in a child. Shown only on a terminal, only after about a second, rewritten in place and
cleared when the work ends; never with ``-q``, never beside ``--json`` output, never in colour. The CLI decides
(``enable``); everything else only calls ``status``."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

DELAY = 1.0  # seconds of work before a status line is worth showing
_enabled = False
_lock = threading.Lock()


def enable(on: bool) -> None:
    """Status lines on (the CLI: stderr is a terminal, no -q, no JSON output) or off."""
    global _enabled
    _enabled = on


class Status:
    """A line that says what is being done; ``show`` rewrites it (once ``DELAY`` has passed)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.width = 0

    def show(self, text: str) -> None:
        if not _enabled or time.monotonic() - self.started < DELAY:
            return
        from .display import excerpt, one_line

        line = excerpt(one_line(text), 200)  # redacted before it is cut
        with _lock:
            sys.stderr.write("\r" + line + " " * max(0, self.width - len(line)) + "\r")
            sys.stderr.flush()
            self.width = max(self.width, len(line))

    def clear(self) -> None:
        if self.width:
            with _lock:
                sys.stderr.write("\r" + " " * self.width + "\r")
                sys.stderr.flush()
            self.width = 0


@contextmanager
def status() -> Iterator[Status]:
    """A status line for the work in the ``with`` block, cleared when it ends."""
    line = Status()
    try:
        yield line
    finally:
        line.clear()
