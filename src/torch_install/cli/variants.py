"""`torch-install variants FILE|URL`: which wheel-variant label a variant-aware installer should pick, and why (its
formats: ``render/variants.py``)."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK, EXIT_WARNINGS, EnvironmentFailure, InputError
from ..render.variants import FORMATS, Ranked, render
from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from ..wheelnext import VariantsFile

MAX_BYTES = 2 * 1024 * 1024


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "variants", help="read a *-variants.json and choose the wheel-variant label for this (or a target) machine",
        description="Read wheel-variant metadata ({name}-{version}-variants.json or a wheel's variant.json) in any "
                    "dialect (v0.0.2/0.0.3, PEP 825 v0.1.1, v0.2.0), order its labels as a variant-aware installer "
                    "must (PEP 825) for the machine, and explain the order. Runs no provider plugin.")
    parser.add_argument("source", metavar="FILE|URL", help="a local file, or an https URL (http only for loopback)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    parser.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    parser.add_argument("--enable-optional", metavar="NAMESPACE", action="append", default=[],
                        help="turn on an optional provider namespace")
    targets.add_target_options(parser)
    targets.add_sysroot_option(parser)
    parser.set_defaults(func=run)


def fetch(url: str, max_bytes: int | None = None) -> str:
    """GET a variants JSON through the index transport (``index/client.py``): https (plain http only for loopback,
    on every redirect hop), a size cap, and each attempt bounded in total by ``TORCH_INSTALL_INDEX_TIMEOUT``."""
    from ..index.client import Fetcher, fetch_settings
    from ..index.pages import IndexUnavailable
    from ..index.urls import redact_url, transport_allowed

    shown = redact_url(url)  # never print a user:password@ given in the URL
    if not transport_allowed(url):
        raise InputError(f"{shown}: only https URLs are fetched (plain http only for loopback)")
    fetcher = Fetcher(max_bytes=MAX_BYTES if max_bytes is None else max_bytes, **fetch_settings())
    try:
        page = fetcher.get(url, accept="application/json")
    except IndexUnavailable as exc:
        raise EnvironmentFailure(str(exc).replace(url, shown)) from None
    return page.body.decode("utf-8", errors="replace")


def load_source(source: str) -> VariantsFile:
    from ..wheelnext import read_variants_text

    if "://" in source:
        from ..index.urls import redact_url

        return read_variants_text(fetch(source), redact_url(source))
    from ..probe import read_regular

    try:  # a FIFO or device is refused without blocking; an endless file stops at the cap
        data = read_regular(source, MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise InputError(f"{source}: larger than {MAX_BYTES // 1024} KiB, not read")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: cannot read ({exc.__class__.__name__})") from None
    return read_variants_text(text, source)


def _cpu_flags(args: argparse.Namespace, machine: Machine) -> frozenset[str]:
    """This machine's CPU flags, only when resolving for this machine (a profile carries none)."""
    if machine.assumed or getattr(args, "target", None):
        return frozenset()
    from ..probe import Probe
    from ..wheelnext import cpu_flags_from_cpuinfo

    probe = Probe(root=args.sysroot) if getattr(args, "sysroot", None) else Probe()
    return cpu_flags_from_cpuinfo(probe.read_text("/proc/cpuinfo", limit=256 * 1024))


def run(args: argparse.Namespace) -> int:
    from ..wheelnext import rank_variants, supported_properties

    vfile = load_source(args.source)
    machine = targets.machine(args)
    target = supported_properties(machine, _cpu_flags(args, machine))
    ranking = rank_variants(vfile, target, machine, args.enable_optional)
    common.write(render(Ranked(vfile, ranking, machine, target.notes), args.format))
    return EXIT_OK if ranking.choice is not None else EXIT_WARNINGS
