"""`torch-install matrix [--online]`: which torch releases and variants exist for a machine's platform and Python."""

from __future__ import annotations

import argparse
import json

from ..errors import EXIT_OK, InputError
from ..resolver.request import CHANNELS
from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..machine import Machine
    from ..resolver.matrix import Matrix

ASSUMED_MARK = "*"


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "matrix", help="list the torch releases and variants for this (or a target) machine's platform and Python",
        description="List torch releases (newest first) with the wheel variants that exist for the machine's "
                    "platform and Python: from the embedded matrix, or learnt from the live index with --online. "
                    f"Variants marked {ASSUMED_MARK} were found on the index; their rules are assumed.")
    parser.add_argument("--limit", type=int, default=12, metavar="N", help="newest N releases (default 12; 0: all)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    parser.add_argument("--channel", choices=CHANNELS, default="stable",
                        help="index channel read with --online (default stable)")
    common.add_index_options(parser)
    targets.add_target_options(parser)
    targets.add_sysroot_option(parser)
    parser.set_defaults(func=run)


def rows(matrix: Matrix, machine: Machine) -> list[dict[str, Any]]:
    """One row per release with wheels for the machine's platform (and Python, when known), newest first."""
    platform = machine.platform or ""
    provenance = matrix.provenance or {}
    out = []
    for release in matrix.releases:
        variants = release.variants(platform)
        pythons = release.python_tags(platform)
        if not variants or (machine.python and pythons and machine.python not in pythons):
            continue
        out.append({"torch": release.version, "date": release.date, "variants": variants,
                    "assumed": [v for v in variants if f"{release.version}+{v}" in provenance],
                    "python": list(pythons)})
    return out


def render_text(table: list[dict[str, Any]], machine: Machine, source: str) -> str:
    python = f"Python {machine.python}" if machine.python else "any Python"
    lines = [f"torch releases for {machine.platform}, {python} ({source})"]
    if not table:
        return "\n".join([*lines, "  none"])
    width = max(len("torch"), *(len(r["torch"]) for r in table))
    lines.append(f"{'torch':<{width}}  {'released':<10}  variants")
    for row in table:
        names = " ".join(v + (ASSUMED_MARK if v in row["assumed"] else "") for v in row["variants"])
        lines.append(f"{row['torch']:<{width}}  {row['date'] or '-':<10}  {names}")
    if any(r["assumed"] for r in table):
        lines.append(f"{ASSUMED_MARK} found on the index, not in the embedded matrix: rules assumed")
    return "\n".join(lines)


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
    if args.format == "json":
        common.write(json.dumps({"platform": machine.platform, "python": machine.python, "source": source,
                                 "releases": table}, indent=2))
    else:
        common.write(render_text(table, machine, source))
    return EXIT_OK
