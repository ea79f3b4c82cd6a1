"""The formats of ``torch-install detect``: a machine shown as a summary, its profile JSON, WheelNext properties or
Node Feature Discovery labels. ``FORMATS`` names them (the CLI's choices); ``render(detected, name)`` writes one."""

from __future__ import annotations

from ..display import one_line
from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..machine import Gpu, Machine


class Detected(Record):
    """What ``detect`` shows: the machine, and what some formats need beside it."""

    machine: Machine
    verbose: bool = False  # the summary: each fact's source
    cpu_flags: frozenset[str] | None = None  # variant-properties: the CPU feature flags (None: not read)


def render_profile(detected: Detected) -> str:
    """The machine profile as JSON (docs/machine-profile.md), with its sources."""
    return detected.machine.to_json()


def render_variant_properties(detected: Detected) -> str:
    """WheelNext properties the providers would report, one per line, with the notes as ``#`` comments."""
    from ..wheelnext import supported_properties

    props = supported_properties(detected.machine, detected.cpu_flags or None)
    lines = [f"# {note}" for note in props.notes] + props.lines()
    return "\n".join(lines) if lines else "# no variant properties: no GPU and no CPU feature flags"


def render_nfd(detected: Detected) -> str:
    """Node Feature Discovery labels: the machine's facts and the build resolved for it (the embedded matrix)."""
    from ..resolver import resolve
    from ..resolver.matrix import load_matrix
    from ..resolver.plan import Request
    from .nfd import nfd_lines

    return nfd_lines(detected.machine, resolve(detected.machine, Request(), load_matrix()))


def render_summary(detected: Detected) -> str:
    """A few lines: platform, driver, one line per GPU group, notes; verbose, each fact's source."""
    return summary_lines(detected.machine, detected.verbose)


def summary_lines(machine: Machine, verbose: bool = False) -> str:
    """The summary's lines: platform, driver, one line per GPU group, notes; with ``verbose`` each fact's source."""
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


# format name -> its renderer
_RENDERERS: dict[str, Callable[[Detected], str]] = {
    "summary": render_summary, "json": render_profile, "variant-properties": render_variant_properties,
    "nfd": render_nfd,
}
FORMATS = tuple(_RENDERERS)


def render(detected: Detected, name: str) -> str:
    """``detected`` in format ``name`` (one of FORMATS; a KeyError names any other)."""
    return _RENDERERS[name](detected)
