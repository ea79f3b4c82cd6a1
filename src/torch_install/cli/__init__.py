"""The ``torch-install`` command: parse flags, call the core, render. Nothing else lives here.

Each sub-command has a module in this package with ``register(subparsers)``; a module imports the
core it needs inside its handler, so ``torch-install detect`` never pays for the resolver or the
network client. With no sub-command, ``plan`` runs.
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from ..errors import EXIT_ENVIRONMENT, EXIT_OUTPUT, TorchInstallError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from ..display import OutputStream
    from .parser import Parser

DEBUG_ENV = "TORCH_INSTALL_DEBUG"  # set (not 0): an internal error also prints its traceback


# each sub-command, and the module of this package that registers it
_MODULE_OF = {"detect": "detect", "plan": "plan", "install": "install", "doctor": "doctor", "matrix": "matrix",
              "variants": "variants", "completion": "shell_completion", "unpin": "unpin"}
COMMANDS = tuple(_MODULE_OF)


_PARSERS: dict[str | None, Parser] = {}  # each parser built, by its sub-command (None: the full parser)


def build_parser(command: str | None = None) -> Parser:
    """The full parser; with a sub-command name, only the module registering it is imported and registered
    (a sub-command's parse never depends on its siblings, and each costs start-up time). Built once per process:
    a parse leaves the parser as it was, so a caller running ``main`` again (a fleet, a test) reuses it."""
    key = command if command in _MODULE_OF else None
    if key not in _PARSERS:
        _PARSERS[key] = _new_parser(key)
    return _PARSERS[key]


def _new_parser(command: str | None) -> Parser:
    from importlib import import_module

    from .parser import Parser, add_verbosity

    parser = Parser(prog="torch-install", description=(
        "Install the PyTorch build that runs on this machine (or a target machine), and explain why. "
        "With no command, prints the plan for this machine."))
    parser.add_argument("--version", action="version", version=f"torch-install {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    names = [_MODULE_OF[command]] if command is not None else list(dict.fromkeys(_MODULE_OF.values()))
    for name in names:
        import_module(f"{__name__}.{name}").register(sub)
    for command_parser in sub.choices.values():
        add_verbosity(command_parser)
    return parser


def console() -> int:
    """The ``torch-install`` process (the console script, ``python -m torch_install``): ``main``, with what a
    short-lived process that owns its interpreter does not need taken out of its start-up:

    - the cyclic garbage collector: a command's objects (modules, tables, its plan) live until the process ends,
      so collecting them only costs time (an eighth of a plan's CPU); what it made is frozen before the
      interpreter's last collection at exit. Reference counting still frees every object not in a cycle.
    - argparse's message catalogue search: argparse passes each of its own messages through gettext, which looks
      for a catalogue on disk at every call and imports locale at the first (2 % of a plan). CPython ships no
      catalogue for them, so they read as written, as they do without one.

    It owns the process's descriptors too: a standard one the process was started without (``>&-``) is opened
    on the null device first, so no file the command opens takes its number (and no installer writes into that
    file), and a stream that could not be written is drained into the null device at the end, so the
    interpreter's own last flush has nothing left to fail on.
    """
    import gc

    gc.disable()
    _open_missing_descriptors()
    import argparse

    setattr(argparse, "_", str)  # noqa: B010 (argparse's own name for gettext)
    try:
        return main()
    finally:
        gc.freeze()
        for stream in (sys.stdout, sys.stderr):
            _drain(stream)


def _open_missing_descriptors() -> None:
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def _drain(stream: TextIO | None) -> None:
    """Flush ``stream``; one that cannot be flushed gets the null device under it, and its buffer goes there."""
    if stream is None:
        return
    try:
        stream.flush()
        return
    except (OSError, ValueError):
        pass
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
        stream.flush()
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: every byte it writes goes through ``display.OutputStream`` (secrets redacted, encodable
    on any stream, and never an exception: output that could not be written makes the exit code
    ``EXIT_OUTPUT``)."""
    from ..display import OutputStream

    streams = sys.stdout, sys.stderr
    out, err = OutputStream(sys.stdout, "stdout"), OutputStream(sys.stderr, "stderr")
    sys.stdout, sys.stderr = out, err
    stop: SystemExit | None = None
    code = 0
    try:
        try:
            code = _main(argv)
        except SystemExit as exiting:  # argparse: --help, --version, a usage error
            if not isinstance(exiting.code, (int, type(None))):
                raise
            stop, code = exiting, exiting.code or 0
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = streams
    code = _output_verdict(code, out, err)
    if stop is not None:
        raise SystemExit(code) from None
    return code


def _output_verdict(code: int, out: OutputStream, err: OutputStream) -> int:
    """The exit code once the output is known: a command that succeeded (0, or 1 for its warnings) but whose
    output could not all be written exits ``EXIT_OUTPUT``, saying so on stderr if stderr still works; a reader
    that stopped reading (``| head``) changes nothing, and a command's own error code stays as it is."""
    lost = [stream for stream in (out, err) if stream.lost]
    if not lost or code not in (0, 1):
        return code
    why = "; ".join(f"{stream.name}: {stream.failure}" for stream in lost)
    err.write(f"torch-install: error: the output could not be written ({why})\n")
    err.flush()
    return EXIT_OUTPUT


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list == ["--version"]:  # answered before any sub-command is registered
        sys.stdout.write(f"torch-install {__version__}\n")
        return 0
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "plan")
    installer_options: list[str] = []
    if "--" in args_list and args_list[0] in ("plan", "install"):  # installer options follow "--"
        cut = args_list.index("--")
        args_list, installer_options = args_list[:cut], args_list[cut + 1:]
    parser = build_parser(args_list[0])
    args = parser.parse_args(args_list)
    args.installer_options = installer_options
    from . import common

    common.QUIET = bool(getattr(args, "quiet", False))
    json_out = getattr(args, "format", None) == "json" or bool(getattr(args, "json", False))
    if getattr(sys.stderr, "isatty", lambda: False)() and not common.QUIET and not json_out:
        from .. import progress

        progress.enable(True)
    try:
        return int(args.func(args) or 0)
    except TorchInstallError as exc:
        for line in str(exc).splitlines() or [exc.__class__.__name__]:
            sys.stderr.write(f"torch-install: error: {line}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("torch-install: interrupted\n")
        return 130
    except Exception as exc:  # a bug, not the user's input: one line, the traceback only on request
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        message = " ".join(str(exc).split()) or "(no message)"
        sys.stderr.write(f"torch-install: internal error: {type(exc).__name__}: {message} "
                         f"(set {DEBUG_ENV}=1 for the traceback)\n")
        return EXIT_ENVIRONMENT
