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
``docker build``) it adds one. Each vendor's device-selection variables (its row's ``visibility`` in
``vendors.py``: ``CUDA_VISIBLE_DEVICES`` for NVIDIA; ``ROCR_VISIBLE_DEVICES``, ``GPU_DEVICE_ORDINAL`` and
``HIP_VISIBLE_DEVICES`` or ``CUDA_VISIBLE_DEVICES`` for AMD; ``ZE_AFFINITY_MASK`` for Intel) mark GPUs hidden
(``visible: false``), by the rule the doctor applies too (``vendors.hidden_devices``). An unusable hint is reported
in ``notes`` and ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .. import vendors
from ..machine import Gpu
from ..probe import Probe
from .found import Found, GpuRecord

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

DRIVER_VARS = ("TORCH_INSTALL_NVIDIA_DRIVER", "UV_CUDA_DRIVER_VERSION")

CUDA_VARS = ("TORCH_INSTALL_CUDA", "CONDA_OVERRIDE_CUDA", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION")
CUDA_ARCH_VARS = ("TORCH_INSTALL_CUDA_ARCH", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "CONDA_OVERRIDE_CUDA_ARCH")
ROCM_VARS = ("TORCH_INSTALL_ROCM",)
GFX_VARS = ("TORCH_INSTALL_GFX", "UV_AMD_GPU_ARCHITECTURE")
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
    for row in vendors.VENDORS:
        _apply_visibility(probe, found, row)


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


def _apply_arch_hints(probe: Probe, found: Found, vendor: str, names: tuple[str, ...],
                      parse: Callable[[str], str | None], field: str) -> None:
    hint = _first_set(probe, names)
    if hint is None:
        return
    name, value = hint
    parsed = parse(value)
    if parsed is None:
        found.note(f"${name}={value[:30]!r} ignored: not a valid {field.replace('_', ' ')}")
        return
    records: list[GpuRecord] = [r for r in found.gpus if r.gpu.vendor == vendor]
    stated: dict[str, Any] = {field: parsed}  # a str field of Gpu: compute_capability or gfx
    if not records:
        found.add_gpu(Gpu(vendor=vendor)._replace(**stated), f"hint ${name}")
        return
    for record in records:
        found.update_gpu(record, f"hint ${name}", override=True, **stated)


def _apply_visibility(probe: Probe, found: Found, row: vendors.Vendor) -> None:
    records = [r for r in found.gpus if r.gpu.vendor == row.name]
    if not records:
        return
    outcome = vendors.hidden_devices(probe.env, row, len(records), [r.uuid for r in records])
    for problem in outcome.problems:
        found.note(problem)
    for index, why in outcome.hidden.items():
        if records[index].gpu.visible:
            found.update_gpu(records[index], why, override=True, visible=False)
