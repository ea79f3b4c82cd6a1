"""``torch-install detect``: what this machine (or a captured one) is, and where each fact came from."""

from __future__ import annotations

import argparse
import sys

from ..display import one_line
from ..errors import InputError
from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Gpu, Machine


FORMATS = ("summary", "json", "variant-properties", "nfd")


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
    if fmt == "json":
        common.write(machine.to_json())
    elif fmt == "variant-properties":
        common.write(render_variant_properties(machine, _cpu_flags(args)))
    elif fmt == "nfd":
        common.write(render_nfd(machine))
    else:
        common.write(render_summary(machine, verbose=args.verbose))
    return 0


def _cpu_flags(args: argparse.Namespace) -> frozenset[str] | None:
    """The CPU feature flags of /proc/cpuinfo (this machine or the --sysroot tree); None for a --target file."""
    from ..wheelnext import cpu_flags_from_cpuinfo

    if args.target:
        return None
    return cpu_flags_from_cpuinfo(targets.probe_of(args).read_text("/proc/cpuinfo", 1 << 20))


def render_variant_properties(machine: Machine, cpu_flags: frozenset[str] | None) -> str:
    """WheelNext properties the providers would report, one per line, with the notes as ``#`` comments."""
    from ..wheelnext import supported_properties

    props = supported_properties(machine, cpu_flags or None)
    lines = [f"# {note}" for note in props.notes] + props.lines()
    return "\n".join(lines) if lines else "# no variant properties: no GPU and no CPU feature flags"


def render_nfd(machine: Machine) -> str:
    """Node Feature Discovery labels: the machine's facts and the build resolved for it."""
    from ..fleet import nfd_lines
    from ..resolver import resolve
    from ..resolver.matrix import load_matrix
    from ..resolver.plan import Request

    return nfd_lines(machine, resolve(machine, Request(), load_matrix()))


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


# ---- the readable summary ------------------------------------------------------------------------------------
def render_summary(machine: Machine, verbose: bool = False) -> str:
    """A few lines: platform, driver, one line per GPU group, notes; with ``verbose`` each fact's source."""
    sources = machine.sources
    lines: list[str] = []

    def add(text: str, *fields: str) -> None:
        lines.append(text)
        if verbose:
            seen: list[str] = []
            for name in fields:
                source = sources.get(name)
                if source and source not in seen:
                    seen.append(source)
                    lines.append(f"    {name}: {source}")

    add(" · ".join(_platform_parts(machine)), "os", "arch", "os_version", "python", "glibc", "musl")
    environment = _environment_parts(machine)
    if environment:
        add(" · ".join(environment), "wsl", "container", "jetson", "rosetta")
    if machine.nvidia_driver or machine.cuda_driver_api:
        driver = f"NVIDIA driver {machine.nvidia_driver or 'unknown'}"
        cuda = f" (CUDA ≤ {machine.cuda_driver_api})" if machine.cuda_driver_api else " (CUDA version unknown)"
        add(driver + cuda, "nvidia_driver", "cuda_driver_api")
    if machine.rocm:
        add(f"ROCm {machine.rocm}", "rocm")
    if machine.amdgpu_driver:
        from ..drivers import rocm_for_amdgpu_driver

        kernel = rocm_for_amdgpu_driver(machine.amdgpu_driver)
        series = f" (ROCm {kernel.rocm}, {kernel.confidence})" if kernel else " (ROCm release not in the driver table)"
        add(f"amdgpu kernel driver {machine.amdgpu_driver}{series}", "amdgpu_driver")
    rows = _gpu_rows(machine)
    if not rows:
        lines.append("GPU none found (CPU only)")
    widths = [max(len(row[0][i]) for row in rows) for i in range(3)] if rows else []
    for cells, index in rows:
        text = "  ".join(cell.ljust(width) for cell, width in zip(cells[:3], widths, strict=True))
        add(f"{text}  {cells[3]}".rstrip(), *(f"gpus[{index}].{f}" for f in (
            "vendor", "name", "pci_id", "compute_capability", "gfx", "family", "integrated", "visible")))
    for note in machine.notes:
        lines.append(f"note: {note}")
    if machine.assumed:
        lines.append(f"assumed from this machine: {', '.join(machine.assumed)}")
    return "\n".join(one_line(line) for line in lines)  # control characters from a capture or profile escaped


def _platform_parts(machine: Machine) -> list[str]:
    parts = [f"{machine.os or 'unknown OS'} {machine.arch or 'unknown arch'}"]
    if machine.os_version:
        parts.append(machine.os_version)
    python = f"Python {machine.python}" if machine.python else "Python unknown"
    if machine.python_implementation and machine.python_implementation != "cpython":
        python += f" ({machine.python_implementation})"
    parts.append(python)
    if machine.glibc:
        parts.append(f"glibc {machine.glibc}")
    elif machine.musl:
        parts.append(f"musl {machine.musl}")
    return parts


def _environment_parts(machine: Machine) -> list[str]:
    parts = []
    if machine.wsl:
        parts.append("WSL")
    if machine.container:
        parts.append(f"container ({machine.container})")
    if machine.jetson:
        parts.append(f"Jetson L4T {machine.jetson}")
    if machine.rosetta:
        parts.append("x86_64 Python under Rosetta")
    return parts


def _gpu_rows(machine: Machine) -> list[tuple[list[str], int]]:
    """(cells, index in machine.gpus): 'GPU 0-7', name, pci id, arch and flags."""
    rows = []
    first = 0
    for index, gpu in enumerate(machine.gpus):
        label = f"GPU {first}" if gpu.count == 1 else f"GPU {first}-{first + gpu.count - 1}"
        first += gpu.count
        rows.append(([label, gpu.name or f"{gpu.vendor} GPU", gpu.pci_id or "", _gpu_detail(gpu)], index))
    return rows


def _gpu_detail(gpu: Gpu) -> str:
    parts = []
    if gpu.compute_capability:
        parts.append(f"sm_{gpu.compute_capability.replace('.', '')}")
    if gpu.gfx:
        parts.append(gpu.gfx)
    if gpu.family:
        parts.append(gpu.family)
    if gpu.integrated:
        parts.append("integrated")
    if gpu.driver and gpu.driver != "nvidia" and gpu.vendor == "nvidia":
        parts.append(f"driver {gpu.driver}")
    if not gpu.visible:
        parts.append("hidden (*_VISIBLE_DEVICES)")
    return "  ".join(parts)
