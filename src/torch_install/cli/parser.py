"""The argparse parts of the command: the parser class (a usage error is one line and exit 2), the help layout
sized to the terminal, and the -q/-v every sub-command takes. Imported when a command line is parsed, after
``console`` has turned the garbage collector off."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import EXIT_USAGE

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _terminal_columns() -> int:
    """What ``shutil.get_terminal_size().columns`` answers, without importing shutil (and its compression
    modules) on every start: $COLUMNS, else the terminal of stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help layout, sized to the terminal the way argparse itself sizes it."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _terminal_columns() - 2 if width is None else width)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(EXIT_USAGE)


def add_verbosity(parser: argparse.ArgumentParser) -> None:
    """-q and -v on every command: -q leaves only errors on stderr; -v says more where there is more to say."""
    known = {s for action in parser._actions for s in action.option_strings}
    if "-q" not in known:
        parser.add_argument("-q", "--quiet", action="store_true",
                            help="print no warnings or notes on stderr, only errors")
    if "-v" not in known:
        parser.add_argument("-v", "--verbose", action="store_true", help="say more (plan: every rejected build)")
