"""`torch-install plan`."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("plan", help="(not yet available)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import InputError

    raise InputError("'plan' is not available yet")
