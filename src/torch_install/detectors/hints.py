"""User hints and overrides, applied after every detector: environment variables win over detection.

Our own variables come first; variables users already set for other tools are honoured too, and every
fact they set names the variable as its source. See docs/machine-profile.md for the full list.

- nvidia_driver (and the CUDA it supports): TORCH_INSTALL_NVIDIA_DRIVER, UV_CUDA_DRIVER_VERSION ("550.54.15")
- cuda_driver_api: TORCH_INSTALL_CUDA, CONDA_OVERRIDE_CUDA, NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION ("12.4")
- NVIDIA compute capability: TORCH_INSTALL_CUDA_ARCH, NV_VARIANT_PROVIDER_FORCE_SM_ARCH, CONDA_OVERRIDE_CUDA_ARCH
  ("8.9", "sm_89", "89")
- rocm: TORCH_INSTALL_ROCM ("6.4.1")
- AMD gfx target: TORCH_INSTALL_GFX, UV_AMD_GPU_ARCHITECTURE ("gfx1100")

A compute capability or gfx hint applies to every GPU of that vendor; with none detected (a GPU-less
``docker build``) it adds one. ``CUDA_VISIBLE_DEVICES`` (NVIDIA) and ``HIP_VISIBLE_DEVICES`` /
``ROCR_VISIBLE_DEVICES`` (AMD) mark GPUs hidden (``visible: false``): a list of indexes or GPU UUIDs
(prefixes allowed) keeps those; '' or '-1' hides all. An unusable hint is reported in ``notes`` and ignored.
"""

from __future__ import annotations

import re

from ..machine import Gpu
from ..probe import Probe
from ..versions import small_int
from . import Found, GpuRecord

DRIVER_VARS = ("TORCH_INSTALL_NVIDIA_DRIVER", "UV_CUDA_DRIVER_VERSION")

CUDA_VARS = ("TORCH_INSTALL_CUDA", "CONDA_OVERRIDE_CUDA", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")
CUDA_ARCH_VARS = ("TORCH_INSTALL_CUDA_ARCH", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "CONDA_OVERRIDE_CUDA_ARCH")
ROCM_VARS = ("TORCH_INSTALL_ROCM",)
GFX_VARS = ("TORCH_INSTALL_GFX", "UV_AMD_GPU_ARCHITECTURE")
VISIBILITY_VARS = {"nvidia": ("CUDA_VISIBLE_DEVICES",), "amd": ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")}
HARDWARE_VARS = (*DRIVER_VARS, *CUDA_VARS, *CUDA_ARCH_VARS, *ROCM_VARS, *GFX_VARS)

_CUDA = r"^([0-9]{1,2})\.([0-9]{1,2})(?:\.[0-9]+)?$"
_ROCM = r"^[0-9]{1,2}\.[0-9]{1,2}(?:\.[0-9]{1,3})?$"
_GFX = r"^gfx[0-9a-f]{3,4}$"


def parse_compute_capability(text: str | None) -> str | None:
    """'8.9', 'sm_89', '89', '12.0', 'sm_120' → '8.9' / '12.0'; None otherwise."""
    value = (text or "").strip().lower().removeprefix("sm_").removeprefix("sm")
    if re.fullmatch(r"[0-9]{1,2}\.[0-9]", value):
        return str(float(value)) if not value.startswith("0") else None
    if re.fullmatch(r"[0-9]{2,3}", value):
        return f"{int(value[:-1])}.{value[-1]}"
    return None


def parse_cuda(text: str | None) -> str | None:
    """'12.4' / '12.4.1' → '12.4'; None otherwise."""
    match = re.match(_CUDA, (text or "").strip())
    return f"{int(match.group(1))}.{int(match.group(2))}" if match else None


def visible_set(value: str, count: int, uuids: list[str | None]) -> tuple[set[int], str | None]:
    """Which of ``count`` GPUs (in bus order, with their UUIDs) a *_VISIBLE_DEVICES value keeps, and a
    problem line if part of it was not understood. Like CUDA, parsing stops at the first invalid entry."""
    keep: set[int] = set()
    for raw in value.split(","):
        item = raw.strip()
        index = small_int(item, 6)
        if index is not None:
            if index >= count:
                return keep, f"index {index} does not exist (there are {count}); later entries ignored"
            keep.add(index)
        elif item.upper().startswith("MIG-"):
            return keep, f"MIG instance {item[:12]}… cannot be mapped to a GPU; it and later entries are ignored"
        elif item.upper().startswith("GPU-") and len(item) > 4:
            matches = [i for i, uuid in enumerate(uuids) if uuid and uuid.lower().startswith(item.lower())]
            if len(matches) != 1:
                return keep, f"{item[:16]}… matches {len(matches)} GPUs; it and later entries are ignored"
            keep.add(matches[0])
        else:
            return keep, f"{item[:20]!r} is not a GPU index or UUID; it and later entries are ignored"
    return keep, None


def detect(probe: Probe, found: Found) -> None:
    _apply_driver_hints(probe, found)
    _apply_arch_hints(probe, found, "nvidia", CUDA_ARCH_VARS, parse_compute_capability, "compute_capability")
    _apply_arch_hints(probe, found, "amd", GFX_VARS, _parse_gfx, "gfx")
    for name in ROCM_VARS:
        value = _first_set(probe, (name,))
        if value is not None:
            if re.match(_ROCM, value[1].strip()):
                found.set("rocm", value[1].strip(), f"hint ${name}", override=True)
            else:
                found.note(f"${name}={value[1][:30]!r} ignored: not a ROCm version like 6.4.1")
    for vendor, names in VISIBILITY_VARS.items():
        _apply_visibility(probe, found, vendor, names)


def _first_set(probe: Probe, names: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of ``names`` that is set (an empty value counts only where empty has a meaning)."""
    for name in names:
        value = probe.env(name)
        if value is not None and value.strip():
            return name, value
    return None


def _parse_gfx(text: str) -> str | None:
    value = text.strip().lower()
    return value if re.match(_GFX, value) else None


def _apply_driver_hints(probe: Probe, found: Found) -> None:
    driver_hint = _first_set(probe, DRIVER_VARS)
    if driver_hint:
        from .nvidia import cuda_from_driver, parse_driver_version  # only with a driver hint

        name, value = driver_hint
        if parse_driver_version(value):
            found.set("nvidia_driver", value.strip(), f"hint ${name}", override=True)
            found.values.pop("cuda_driver_api", None)  # derived from the detected driver: recompute
            found.sources.pop("cuda_driver_api", None)
            cuda_from_driver(found)
        else:
            found.note(f"${name}={value[:30]!r} ignored: not an NVIDIA driver version like 550.54.15")
    cuda_hint = _first_set(probe, CUDA_VARS)
    if cuda_hint:
        name, value = cuda_hint
        cuda = parse_cuda(value)
        if cuda:
            found.set("cuda_driver_api", cuda, f"hint ${name}", override=True)
        else:
            found.note(f"${name}={value[:30]!r} ignored: not a CUDA version like 12.4")


def _apply_arch_hints(probe: Probe, found: Found, vendor: str, names: tuple[str, ...], parse, field: str) -> None:
    hint = _first_set(probe, names)
    if hint is None:
        return
    name, value = hint
    parsed = parse(value)
    if parsed is None:
        found.note(f"${name}={value[:30]!r} ignored: not a valid {field.replace('_', ' ')}")
        return
    records: list[GpuRecord] = [r for r in found.gpus if r.gpu.vendor == vendor]
    if not records:
        found.add_gpu(Gpu(vendor=vendor, **{field: parsed}), f"hint ${name}")
        return
    for record in records:
        found.update_gpu(record, f"hint ${name}", override=True, **{field: parsed})


def _apply_visibility(probe: Probe, found: Found, vendor: str, names: tuple[str, ...]) -> None:
    records = [r for r in found.gpus if r.gpu.vendor == vendor]
    for name in names:
        value = probe.env(name)
        if value is None or not records:
            continue
        if value.strip() in ("", "-1"):
            keep: set[int] = set()
            problem = None
        else:
            uuids = [r.uuid for r in records]
            keep, problem = visible_set(value, len(records), uuids)
        if problem:
            found.note(f"${name}: {problem}")
        for index, record in enumerate(records):
            if index not in keep and record.gpu.visible:
                found.update_gpu(record, f"${name}={value[:40]}", override=True, visible=False)
