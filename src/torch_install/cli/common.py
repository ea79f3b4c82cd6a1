"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..machine import Machine


def add_sysroot_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sysroot", metavar="DIR",
                        help="detect on a captured tree (from 'detect --capture') instead of this machine")


def detect_here(args: argparse.Namespace) -> Machine:
    """Detect this machine, or the captured tree named by --sysroot."""
    from pathlib import Path

    from ..detectors import detect
    from ..probe import Probe

    sysroot = getattr(args, "sysroot", None)
    if sysroot:
        if not Path(sysroot).is_dir():
            raise InputError(f"--sysroot {sysroot}: not a directory")
        return detect(Probe(root=sysroot))
    return detect(Probe())


def write(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
