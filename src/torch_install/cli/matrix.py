"""`torch-install matrix [--online]`: which torch releases and variants exist for a machine's platform and Python
(its formats: ``render/matrix.py``)."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK, InputError
from ..render.matrix import ASSUMED_MARK, FORMATS, Listing, render, rows
from ..resolver.request import CHANNELS
from . import common, targets


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "matrix", help="list the torch releases and variants for this (or a target) machine's platform and Python",
        description="List torch releases (newest first) with the wheel variants that exist for the machine's "
                    "platform and Python: from the embedded matrix, or learnt from the live index with --online. "
                    f"Variants marked {ASSUMED_MARK} were found on the index; their rules are assumed.")
    parser.add_argument("--limit", type=int, default=12, metavar="N", help="newest N releases (default 12; 0: all)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    parser.add_argument("--channel", choices=CHANNELS, default="stable",
                        help="index channel read with --online (default stable)")
    common.add_index_options(parser)
    targets.add_target_options(parser)
    targets.add_sysroot_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.limit < 0:
        raise InputError(f"--limit {args.limit}: must be 0 or more")
    machine = targets.machine(args) if targets.describes_target(args) or args.python else \
        targets.platform_here(args)
    if not machine.platform:
        raise InputError("the machine's OS or architecture is unknown; give --os and --arch")
    matrix = common.matrix_for(args, machine)
    table = rows(matrix, machine)
    table = table[: args.limit] if args.limit else table
    online = matrix.provenance is not None
    source = f"index {matrix.index_base}" if online else "embedded matrix"
    common.write(render(Listing(machine, table, source), args.format))
    return EXIT_OK
