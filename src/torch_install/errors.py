"""Errors that reach the user as one line and a documented exit code (see docs/exit-codes.md)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_WARNINGS = 1  # completed with warnings; doctor: problems found
EXIT_USAGE = 2  # usage or input error
EXIT_ENVIRONMENT = 3  # network, installer or other environment failure
EXIT_NO_BUILD = 4  # no build of the request fits the machine
EXIT_OUTPUT = 74  # the output could not be written (a full disk, a closed stdout): sysexits.h's EX_IOERR
EXIT_INTERRUPTED = 130  # install: interrupted (128 + SIGINT, as shells report it); torch checked and put back


class TorchInstallError(Exception):
    """A failure the user can act on. ``str(err)`` is the one line printed; ``exit_code`` is returned."""

    exit_code = EXIT_USAGE


class InputError(TorchInstallError):
    """A bad flag, file or field (exit 2)."""

    exit_code = EXIT_USAGE


class NoBuild(TorchInstallError):
    """No build of the request fits the machine (exit 4): nothing to install."""

    exit_code = EXIT_NO_BUILD


class EnvironmentFailure(TorchInstallError):
    """The network, an index or the installer failed (exit 3)."""

    exit_code = EXIT_ENVIRONMENT
