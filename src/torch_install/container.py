"""Container mode: resolve for the image's target machine, never for the build host's hardware.

During ``docker build`` no GPU is reachable, yet the build host's sysfs (and its GPUs) can leak in. So in
container mode the target comes from ``--target``/hardware flags, else from base-image hints: nvidia/cuda
images (``CUDA_VERSION``, ``NVIDIA_REQUIRE_CUDA``, ``NV_CUDA_*``: the target driver supports at least that
CUDA), ROCm images (``ROCM_VERSION``, ``/opt/rocm/.info/version``) and Intel oneAPI images. Hints are intent,
never proof of a GPU. Platform fields (OS, arch, Python, glibc) are the image's own and are detected.

Container mode is on with ``plan --for-container``, and on by itself when container markers are present and
no GPU device node is reachable (``--no-for-container`` turns it off).
"""

import re
from typing import Any, NamedTuple

from .cuda_drivers import driver_for_toolkit
from .errors import InputError
from .machine import Gpu, Machine
from .versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    import argparse

    from .probe import Probe
    from .resolver.plan import Plan, Request

GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
CUDA_ENV = ("CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE")
ROCM_FILES = ("/opt/rocm/.info/version",)
ONEAPI_ENV = ("ONEAPI_ROOT", "CMPLR_ROOT")
ONEAPI_DIRS = ("/opt/intel/oneapi",)
TARGET_FLAGS = ("--target FILE", "--gpu NAME", "--nvidia-driver VERSION", "--rocm VERSION", "--variant ID")
HINT_NAMES = "CUDA_VERSION, NVIDIA_REQUIRE_CUDA, NV_CUDA_*, ROCM_VERSION, /opt/rocm/.info/version, ONEAPI_ROOT"


class ImageHint(NamedTuple):
    """What a base image says it is built for: ``kind`` cuda | rocm | xpu, a version, and where it was read."""

    kind: str
    version: str | None
    source: str  # "$CUDA_VERSION=12.4.1", "/opt/rocm/.info/version: 7.1.1-38"


def _cuda_from(name: str, value: str) -> str | None:
    """The CUDA version a base-image variable states."""
    patterns = {
        "CUDA_VERSION": r"^\s*(\d+\.\d+(?:\.\d+)?)",
        "NVIDIA_REQUIRE_CUDA": r"\bcuda>=(\d+\.\d+)",
        "NV_CUDA_CUDART_VERSION": r"^\s*(\d+\.\d+)",
        "NV_CUDA_COMPAT_PACKAGE": r"cuda-compat-(\d+)-(\d+)",
    }
    match = re.search(patterns[name], value)
    if not match:
        return None
    return ".".join(match.groups()) if name == "NV_CUDA_COMPAT_PACKAGE" else match.group(1)


def image_hints(probe: "Probe") -> list[ImageHint]:
    """Base-image hints found in the environment and the image's files (at most one per kind)."""
    hints: list[ImageHint] = []
    for name in CUDA_ENV:
        value = probe.env(name)
        if value and (cuda := _cuda_from(name, value)):
            hints.append(ImageHint("cuda", cuda, f"${name}={value}"))
            break
    rocm_env = probe.env("ROCM_VERSION")
    rocm_match = re.match(r"^\s*(\d+\.\d+(?:\.\d+)?)", rocm_env or "")
    if rocm_match:
        hints.append(ImageHint("rocm", rocm_match.group(1), f"$ROCM_VERSION={rocm_env}"))
    else:
        rocm_path = probe.env("ROCM_PATH")
        files = ((f"{rocm_path.rstrip('/')}/.info/version",) if rocm_path else ()) + ROCM_FILES
        for path in files:
            text = (probe.read_text(path, limit=256) or "").strip()
            if match := re.match(r"^(\d+\.\d+(?:\.\d+)?)", text):
                hints.append(ImageHint("rocm", match.group(1), f"{path}: {text.splitlines()[0]}"))
                break
    for name in ONEAPI_ENV:
        if value := probe.env(name):
            hints.append(ImageHint("xpu", None, f"${name}={value} (Intel oneAPI image)"))
            break
    else:
        for path in ONEAPI_DIRS:
            if probe.exists(path):
                hints.append(ImageHint("xpu", None, f"{path} exists (Intel oneAPI image)"))
                break
    return hints


def gpu_device(probe: "Probe") -> str | None:
    """The first GPU device node present (NVIDIA, AMD KFD, WSL dxg, a DRM render node), else None."""
    for path in GPU_DEVICE_NODES:
        if probe.exists(path):
            return path
    render = [n for n in probe.listdir("/dev/dri") if n.startswith("renderD")]
    return f"/dev/dri/{render[0]}" if render else None


def container_marker(probe: "Probe", machine: Machine | None = None) -> str | None:
    """Why this looks like a container: the detected runtime, a marker file, or the ``container`` variable."""
    if machine is not None and machine.container:
        return f"container {machine.container}"
    for path in CONTAINER_MARKERS:
        if probe.exists(path):
            return path
    value = probe.env("container")
    return f"$container={value}" if value else None


def target_from_hints(hints: list[ImageHint], platform: Machine) -> Machine:
    """A target profile from base-image hints: platform fields from the image, hardware from the hints.

    An nvidia/cuda image for CUDA X.Y.Z means "the target driver supports at least CUDA X.Y": the driver is
    that toolkit's minimum Linux driver; the GPU model stays unknown.
    """
    gpus: list[Gpu] = []
    sources = dict(platform.sources)
    values: dict[str, Any] = {}
    notes = list(platform.notes)
    for hint in hints:
        intent = f"base-image hint {hint.source}: what the image is built for, not a detected GPU"
        if hint.kind == "cuda" and hint.version:
            found = driver_for_toolkit(hint.version)
            major, minor = numeric_key(hint.version)[:2]
            values["cuda_driver_api"] = f"{major}.{minor}"
            sources["cuda_driver_api"] = intent
            if found:
                driver, toolkit, confidence = found
                values["nvidia_driver"] = driver
                label = "" if confidence == "source-file" else f"{confidence}; "
                sources["nvidia_driver"] = f"minimum Linux driver of CUDA {toolkit} ({label}{intent})"
            else:
                notes.append(f"CUDA {hint.version}: no driver known for this toolkit; the target driver is unknown")
            gpus.append(Gpu(vendor="nvidia"))
            sources[f"gpus[{len(gpus) - 1}].vendor"] = intent
        elif hint.kind == "rocm":
            values["rocm"] = hint.version
            sources["rocm"] = intent
            gpus.append(Gpu(vendor="amd"))
            sources[f"gpus[{len(gpus) - 1}].vendor"] = intent
        elif hint.kind == "xpu":
            gpus.append(Gpu(vendor="intel"))
            sources[f"gpus[{len(gpus) - 1}].vendor"] = intent
    notes.append("container mode: the target comes from base-image hints (" +
                 "; ".join(h.source for h in hints) + "); GPU model unknown")
    return platform._replace(**values, gpus=tuple(gpus), sources=sources, notes=tuple(notes))


def _describes_target(args: "argparse.Namespace") -> bool:
    from .cli.common import describes_target  # --target, a hardware flag, --os or --arch

    return describes_target(args)


def _gives_hardware(args: "argparse.Namespace") -> bool:
    """Whether the flags state the target's hardware (a profile or a hardware flag), not just its platform."""
    return bool(getattr(args, "target", None)) or any(getattr(args, name, None)
                                                      for name in ("gpu", "nvidia_driver", "rocm"))


def no_target_error(why: str) -> InputError:
    return InputError(
        f"container mode ({why}): no target machine and no base-image hint ({HINT_NAMES}); the build host's "
        f"hardware is not used.\nGive the target with {', '.join(TARGET_FLAGS)} (e.g. --variant cpu for a "
        "CPU-only image), or build FROM an nvidia/cuda, rocm or oneAPI base image")


def container_machines(args: "argparse.Namespace", request: "Request") -> list[Machine] | None:
    """The machine(s) to resolve for in container mode, or None when container mode is off.

    Explicit (``--for-container``) with neither target nor hint: an InputError (exit 2). Automatic (markers,
    no GPU device): the same, unless detection saw no GPU hardware either; then this machine (CPU) is
    resolved, with a note saying how to target a GPU image.
    """
    from .cli import common
    from .probe import Probe

    explicit = getattr(args, "for_container", None)
    if explicit is False:
        return None
    sysroot = getattr(args, "sysroot", None)
    probe = Probe(root=sysroot) if sysroot else Probe()
    if explicit:
        why = "--for-container"
    else:
        marker = container_marker(probe)
        if not marker or gpu_device(probe):
            return None
        why = f"{marker}, no GPU device node"
    if _describes_target(args):
        described = [m._replace(container=m.container or "image") for m in common.machines_from_args(args)]
        hints = [] if _gives_hardware(args) else image_hints(probe)
        if not hints:
            return described
        # --os/--arch/--python describe the image's platform; its hardware still comes from the base-image hints
        return [target_from_hints(hints, m)._replace(container=m.container) for m in described]
    platform = common.platform_here(args)
    if getattr(args, "python", None):
        platform = platform._replace(python=args.python)
    hints = image_hints(probe)
    if hints:
        return [target_from_hints(hints, platform)._replace(container=platform.container or "image")]
    if request.variant:
        note = f"container mode ({why}): no hardware target; the build is the forced --variant {request.variant}"
        return [platform._replace(notes=(*platform.notes, note), container=platform.container or "image")]
    if explicit:
        raise no_target_error(why)
    here = common.machines_from_args(args)[0]  # this machine, --python applied
    if here.gpus or here.nvidia_driver or here.rocm:
        raise no_target_error(why)
    note = (f"container without GPU devices ({why}) and no base-image hint: resolved for this machine as "
            "detected (no GPU); for a GPU image give --for-container with --target/--gpu/--nvidia-driver")
    return [here._replace(notes=(*here.notes, note))]


# --------------------------------------------------------------------------------------------------------------
# Rendering: a Dockerfile RUN step and variant-provider overrides
# --------------------------------------------------------------------------------------------------------------

def target_source_lines(machine: Machine) -> list[str]:
    """Where the target's hardware facts came from (hint sources first), one line each."""
    keys = ("cuda_driver_api", "nvidia_driver", "rocm")
    return [f"{k}: {machine.sources[k]}" for k in keys if k in machine.sources]


def newest_release_lines(plan: "Plan") -> list[str]:
    """Why the newest release considered is not the choice (from the plan's rejections)."""
    if plan.choice is None or not plan.rejected:
        return []

    from .resolver.matrix import version_key

    newest = max((r.torch for r in plan.rejected), key=version_key)
    if version_key(newest) <= version_key(plan.choice.torch):
        return []
    return [f"torch {r.torch} {r.variant}: {r.reason}" for r in plan.rejected if r.torch == newest]


def render_dockerfile(plan: "Plan") -> str:
    """A commented ``RUN`` step: pinned versions with local labels, the index URL, ``--no-cache-dir``."""
    import shlex

    from .resolver.render import install_args, machine_line, one_line

    if plan.choice is None:  # every comment is one line: a line break would start a Dockerfile instruction
        return "# torch-install: no build fits the target\n" + "".join(f"# {one_line(w.message)}\n"
                                                                        for w in plan.warnings)
    choice = plan.choice
    lines = [f"# torch-install: torch {choice.torch} ({choice.variant}) resolved for: {machine_line(plan)}"]
    lines += [f"#   {line}" for line in target_source_lines(plan.machine)]
    lines += [f"# Why: {reason}" for reason in plan.reasons]
    newest = newest_release_lines(plan)
    if newest:
        lines.append("# Not the newest release:")
        lines += [f"#   {line}" for line in newest]
    lines += [f"# Warning [{w.code}]: {w.message}" for w in plan.warnings]
    lines += [f"# Note: {n}" for n in (*plan.notes, *plan.machine.notes)]
    args = ["python", "-m", "pip", "install", "--no-cache-dir", *install_args(plan, "pip")]
    return "\n".join([*(one_line(line) for line in lines), f"RUN {shlex.join(args)}"])


def render_variant_env(plan: "Plan") -> str:
    """Provider override variables (``NAME=value``) that make a variant-aware installer pick for the target."""
    import shlex

    from .resolver.render import machine_line, one_line
    from .wheelnext import override_env

    variant = plan.choice.variant if plan.choice else None
    env = override_env(plan.machine, variant)
    lines = [f"# WheelNext variant-provider overrides for: {machine_line(plan)}"]
    if plan.choice:
        lines.append(f"# resolved build: torch {plan.choice.torch} {plan.choice.variant}")
    lines += [f"# {note}" for note in env.notes]
    if not env.variables:
        lines.append("# no provider override applies: a variant-aware installer picks the null (CPU) variant")
    lines = [one_line(line) for line in lines]  # a comment stays a comment
    lines += [f"{name}={shlex.quote(value)}" for name, value in env.variables.items()]
    return "\n".join(lines)
