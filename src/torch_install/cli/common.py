"""Options and helpers shared by several sub-commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

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


def add_index_options(parser: argparse.ArgumentParser) -> None:
    """Where the release/variant data comes from: embedded (default) or a live index."""
    parser.add_argument("--index-base", metavar="URL",
                        help="PyTorch wheel index base (mirrors); default https://download.pytorch.org/whl "
                             "or $TORCH_INSTALL_INDEX_BASE")
    parser.add_argument("--online", action="store_true",
                        help="learn releases and variants from the live index (cached)")
    parser.add_argument("--offline", action="store_true", help="never touch the network")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="allow a plain-http index base that is not loopback")


def matrix_for(args: argparse.Namespace, machine: Machine) -> Any:  # a resolver.matrix.Matrix
    """The compatibility matrix to resolve with: embedded, extended from the live index with --online."""
    from ..resolver.matrix import load_matrix

    return load_matrix()
