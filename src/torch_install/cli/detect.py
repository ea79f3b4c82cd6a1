"""``torch-install detect``: what this machine (or a captured one) is, and where each fact came from (its formats:
``render/machine.py``)."""

from __future__ import annotations

import argparse
import sys

from ..errors import InputError
from ..render.machine import FORMATS, Detected, render
from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "detect", help="show the machine facts that decide which PyTorch build runs here",
        description="Detect OS, CPU architecture, Python, C library, WSL/container, GPUs, NVIDIA driver and the "
                    "newest CUDA it supports. Reads kernel files; runs nvidia-smi only when they cannot answer.")
    parser.add_argument("--json", action="store_true", help="print the machine profile (with sources) as JSON "
                                                             "(same as --format json)")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="summary (default); json: the machine profile; variant-properties: WheelNext "
                             "'namespace :: feature :: value' lines; nfd: Node Feature Discovery labels "
                             "(resolves this machine's build)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show where each fact came from")
    parser.add_argument("--sysroot", metavar="DIR|FILE.tar.gz", type=targets.sysroot_path,
                        help="detect on a captured tree or a capture archive instead of this machine")
    parser.add_argument("--capture", metavar="FILE.tar.gz",
                        help="also write every file and command output detection read (identifiers redacted), "
                             "so that --sysroot FILE reproduces this machine")
    parser.add_argument("--target", metavar="FILE",
                        help="check and show a machine profile file instead (platform fields it leaves out are "
                             "taken from this machine)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.target and (args.capture or args.sysroot):
        raise InputError("--target shows a profile file; it cannot be combined with --capture or --sysroot")
    if args.target:
        from ..machine import fill_platform, load_machine

        machine = fill_platform(load_machine(args.target), targets.platform_here(args))
    elif args.capture:
        machine = _detect_and_capture(args)
    else:
        machine = targets.detect_here(args)
    fmt = args.format or ("json" if args.json else "summary")
    if args.json and fmt != "json":
        raise InputError(f"--json contradicts --format {fmt}")
    cpu_flags = _cpu_flags(args) if fmt == "variant-properties" else None
    common.write(render(Detected(machine, args.verbose, cpu_flags), fmt))
    return 0


def _cpu_flags(args: argparse.Namespace) -> frozenset[str] | None:
    """The CPU feature flags of /proc/cpuinfo (this machine or the --sysroot tree); None for a --target file."""
    from ..wheelnext import cpu_flags_from_cpuinfo

    if args.target:
        return None
    return cpu_flags_from_cpuinfo(targets.probe_of(args).read_text("/proc/cpuinfo", 1 << 20))


def _detect_and_capture(args: argparse.Namespace) -> Machine:
    from ..capture import write_capture
    from ..detectors import detect

    if not args.capture.endswith((".tar.gz", ".tgz")):
        raise InputError(f"--capture {args.capture}: the file name must end in .tar.gz")
    probe = targets.probe_of(args)
    machine = detect(probe)
    count = write_capture(probe, args.capture)
    sys.stderr.write(f"torch-install: wrote {args.capture} ({count} entries; UUIDs, serial numbers and the host "
                     "name redacted)\n")
    return machine
