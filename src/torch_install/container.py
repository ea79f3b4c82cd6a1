"""Container mode's target: base-image hints in, a target Machine out; never the build host's hardware.

During ``docker build`` no GPU is reachable, yet the build host's sysfs (and its GPUs) can leak in. So in
container mode the target comes from ``--target``/hardware flags, else from base-image hints: nvidia/cuda
images (``CUDA_VERSION``, ``NVIDIA_REQUIRE_CUDA``, ``NV_CUDA_*``: the target driver supports at least that
CUDA), ROCm images (``ROCM_VERSION``, ``/opt/rocm/.info/version``) and Intel oneAPI images. Hints are intent,
never proof of a GPU. Platform fields (OS, arch, Python, glibc) are the image's own and are detected.

Container mode is on with ``plan --for-container``, and on by itself when container markers are present and
no GPU device node is reachable (``--no-for-container`` turns it off). ``container_targets`` is its one entry:
the CLI parses the flags (``cli/targets.py``) and hands it their values, this module decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from . import vendors
from .drivers import driver_for_toolkit
from .errors import InputError
from .machine import Gpu, Machine
from .probe import Probe
from .records import Record
from .versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")
CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv")
CUDA_ENV = ("CUDA_VERSION", "NVIDIA_REQUIRE_CUDA", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE")
ONEAPI_ENV = ("ONEAPI_ROOT", "CMPLR_ROOT")
ONEAPI_DIRS = ("/opt/intel/oneapi",)
HINT_NAMES = "CUDA_VERSION, NVIDIA_REQUIRE_CUDA, NV_CUDA_*, ROCM_VERSION, /opt/rocm/.info/version, ONEAPI_ROOT"
TARGET_FLAGS = ("--target FILE", "--gpu NAME", "--nvidia-driver VERSION", "--rocm VERSION", "--variant ID")


class ImageHint(Record):
    """What a base image says it is built for: ``kind`` cuda | rocm | xpu, a version, and where it was read."""

    kind: str
    version: str | None
    source: str  # "$CUDA_VERSION=12.4.1", "/opt/rocm/.info/version: 7.1.1-38"


def _cuda_from(name: str, value: str) -> str | None:
    """The CUDA version a base-image variable states."""
    patterns = {
        "CUDA_VERSION": r"^\s*([0-9]+\.[0-9]+(?:\.[0-9]+)?)",
        "NVIDIA_REQUIRE_CUDA": r"\bcuda>=([0-9]+\.[0-9]+)",
        "NV_CUDA_CUDART_VERSION": r"^\s*([0-9]+\.[0-9]+)",
        "NV_CUDA_COMPAT_PACKAGE": r"cuda-compat-([0-9]+)-([0-9]+)",
    }
    match = re.search(patterns[name], value)
    if not match:
        return None
    return ".".join(match.groups()) if name == "NV_CUDA_COMPAT_PACKAGE" else match.group(1)


def image_hints(probe: Probe) -> list[ImageHint]:
    """Base-image hints found in the environment and the image's files (at most one per kind)."""
    hints: list[ImageHint] = []
    for name in CUDA_ENV:
        value = probe.env(name)
        if value and (cuda := _cuda_from(name, value)):
            hints.append(ImageHint("cuda", cuda, f"${name}={value}"))
            break
    rocm_env = probe.env("ROCM_VERSION")
    rocm_match = re.match(r"^\s*([0-9]+\.[0-9]+(?:\.[0-9]+)?)", rocm_env) if rocm_env else None
    if rocm_match:
        hints.append(ImageHint("rocm", rocm_match.group(1), f"$ROCM_VERSION={rocm_env}"))
    else:
        from .detectors.rocm import rocm_version_file

        release = rocm_version_file(probe)
        if release is not None:
            hints.append(ImageHint("rocm", release.version, f"{release.path}: {release.line}"))
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


def gpu_device(probe: Probe) -> str | None:
    """The first GPU device node present (NVIDIA, AMD KFD, WSL dxg, a DRM render node), else None."""
    for path in GPU_DEVICE_NODES:
        if probe.exists(path):
            return path
    render = [n for n in probe.listdir("/dev/dri") if n.startswith("renderD")]
    return f"/dev/dri/{render[0]}" if render else None


def container_marker(probe: Probe, machine: Machine | None = None) -> str | None:
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
        row = vendors.of_kind(hint.kind)
        if row is None:
            continue
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
        elif hint.kind == "rocm":
            values["rocm"] = hint.version
            sources["rocm"] = intent
        gpus.append(Gpu(vendor=row.name))  # a GPU of the vendor whose builds the image is for, model unknown
        sources[f"gpus[{len(gpus) - 1}].vendor"] = intent
    notes.append("container mode: the target comes from base-image hints (" +
                 "; ".join(h.source for h in hints) + "); GPU model unknown")
    return platform._replace(**values, gpus=tuple(gpus), gpus_known=True, sources=sources, notes=tuple(notes))


HARDWARE_FIELDS = ("nvidia_driver", "cuda_driver_api", "rocm")


def override_target(probe: Probe) -> Machine | None:
    """The hardware the user's override variables state (``UV_CUDA_DRIVER_VERSION``, ``CONDA_OVERRIDE_CUDA``,
    ``TORCH_INSTALL_*``, … as ``detectors/hints.py`` reads them), with a GPU of the vendor they imply; None when
    none is set. On a GPU-less build host these describe the target as much as a base image does."""
    from .detectors import hints
    from .detectors.found import Found, build_machine

    if not any((probe.env(name) or "").strip() for name in hints.HARDWARE_VARS):
        return None
    found = Found()
    hints.detect(probe, found)
    stated = build_machine(found)
    gpus = list(stated.gpus)
    for row in vendors.with_builds():  # a driver stack stated without its GPU: a GPU of that vendor, model unknown
        if any(getattr(stated, f) for f in row.driver_fields) and all(g.vendor != row.name for g in gpus):
            gpus.append(Gpu(vendor=row.name))
    if not gpus:
        return None
    return stated._replace(gpus=tuple(gpus), gpus_known=True)


def with_hardware(base: Machine, stated: Machine) -> Machine:
    """``base`` (its platform) with the hardware ``stated`` gives replacing its own: overrides over image hints."""
    values: dict[str, Any] = {n: getattr(stated, n) for n in HARDWARE_FIELDS if getattr(stated, n) is not None}
    if "cuda_driver_api" in values and "nvidia_driver" not in values:
        values["nvidia_driver"] = None  # the stated CUDA decides the driver (completion), not the image's toolkit
    sources = {**base.sources, **{n: stated.sources[n] for n in values if n in stated.sources}}
    if values.get("nvidia_driver") is None:
        sources.pop("nvidia_driver", None)
    if stated.gpus:
        values.update(gpus=stated.gpus, gpus_known=True)
        sources = {k: v for k, v in sources.items() if not k.startswith("gpus[")}
        sources.update({k: v for k, v in stated.sources.items() if k.startswith("gpus[")})
    notes = (*base.notes, *(n for n in stated.notes if n not in base.notes))
    return base._replace(**values, sources=sources, notes=notes)


def _vendors(machine: Machine) -> set[str]:
    """The vendors a machine names: of its GPUs, and of the driver stacks it states."""
    found = {g.vendor for g in machine.gpus}
    found.update(row.name for row in vendors.with_builds() if any(getattr(machine, f) for f in row.driver_fields))
    return found


def fill_hardware(stated: Machine, given: Machine) -> Machine:
    """``stated`` with the hardware facts it leaves open taken from ``given`` (image hints or overrides): the
    driver, CUDA and ROCm versions of the vendor it names, and the GPUs when it names none. What ``stated`` says
    is kept; a ``stated`` vendor that ``given`` does not describe (--rocm in a CUDA image) takes nothing."""
    named = _vendors(stated)
    if named and not named & _vendors(given):
        return stated
    fields = [f for v in (named or _vendors(given)) if (row := vendors.vendor(v)) for f in row.driver_fields]
    values: dict[str, Any] = {}
    sources = dict(stated.sources)
    for name in fields:
        if getattr(stated, name) is None and getattr(given, name) is not None:
            values[name] = getattr(given, name)
            if name in given.sources:
                sources[name] = given.sources[name]
    if not stated.gpus and given.gpus:
        values.update(gpus=given.gpus, gpus_known=True)
        sources.update({k: v for k, v in given.sources.items() if k.startswith("gpus[")})
    notes = (*stated.notes, *(n for n in given.notes if n not in stated.notes))
    return stated._replace(**values, sources=sources, notes=notes)


def no_target_error(why: str) -> InputError:
    return InputError(
        f"container mode ({why}): no target machine and no base-image hint ({HINT_NAMES}); the build host's "
        f"hardware is not used.\nGive the target with {', '.join(TARGET_FLAGS)} (e.g. --variant cpu for a "
        "CPU-only image), or build FROM an nvidia/cuda, rocm or oneAPI base image")


def container_targets(probe: Probe, explicit: bool | None, described: Sequence[Machine] | None,
                      python: str | None = None, python_full: str | None = None,
                      variant: str | None = None) -> list[Machine] | None:
    """The machine(s) container mode resolves for, or None when it is off.

    ``probe``: the build host (or its capture); ``explicit``: ``--for-container`` (True), ``--no-for-container``
    (False) or neither (None: on by itself when a container marker is present and no GPU device node);
    ``described``: the machines the flags and profiles describe, their platform filled (None: they describe
    none); ``python``/``python_full``: the Python the flags give; ``variant``: the forced ``--variant``.

    First that applies: the described machines, their open hardware filled from the user's override variables,
    then the base image's hints; a target from those alone on this machine's platform; the forced variant on
    it. Explicit with none of them: an InputError (exit 2). Automatic: the same, unless detection sees no GPU
    hardware either; then this machine (CPU), with a note saying how to target a GPU image.
    """
    if explicit is False:
        return None
    if explicit:
        why = "--for-container"
    else:
        marker = container_marker(probe)
        if not marker or gpu_device(probe):
            return None
        why = f"{marker}, no GPU device node"
    hints = image_hints(probe)
    override = override_target(probe)  # the user's override variables: they outrank the base image's hints

    def hinted(platform: Machine) -> Machine:
        target = target_from_hints(hints, platform) if hints else platform
        return with_hardware(target, override) if override else target

    if described is not None:
        marked = [m._replace(container=m.container or "image") for m in described]
        if not hints and not override:
            return marked
        # what flags and profiles state wins; the hardware they leave open comes from overrides, then the image
        return [fill_hardware(m, hinted(m._replace(gpus=(), gpus_known=False)))._replace(container=m.container)
                for m in marked]
    from .detectors import detect, detect_platform

    platform = detect_platform(probe)
    if python:
        platform = platform._replace(python=python, python_full=python_full)
    if hints or override:
        return [hinted(platform)._replace(container=platform.container or "image")]
    if variant:
        note = f"container mode ({why}): no hardware target; the build is the forced --variant {variant}"
        return [platform._replace(notes=(*platform.notes, note), container=platform.container or "image")]
    if explicit:
        raise no_target_error(why)
    here = detect(probe)
    if python:
        here = here._replace(python=python, python_full=python_full)
    if here.gpus or here.nvidia_driver or here.rocm:
        raise no_target_error(why)
    note = (f"container without GPU devices ({why}) and no base-image hint: resolved for this machine as "
            "detected (no GPU); for a GPU image give --for-container with --target/--gpu/--nvidia-driver")
    return [here._replace(notes=(*here.notes, note))]
