"""PCI scan: every display, 3D and processing-accelerator device, with its bound kernel driver.

Reads ``/sys/bus/pci/devices/*/{vendor,device,class}`` and the ``driver`` symlink. Works with no GPU
driver installed, so it tells "no GPU" from "a GPU without a driver". Chipsets, NICs and NVMe drives
are not GPUs and are skipped by class.
"""

from __future__ import annotations

from ..machine import Gpu
from ..probe import Probe
from . import Found

PCI_DEVICES = "/sys/bus/pci/devices"
GPU_VENDORS = {"10de": "nvidia", "1002": "amd", "8086": "intel"}
# PCI base class 0x03 = display controller (VGA 0x0300, 3D 0x0302, other 0x0380);
# 0x12 = processing accelerator (some datacenter parts).
GPU_CLASS_PREFIXES = ("03", "12")


def _hex_id(text: str | None, digits: int) -> str | None:
    """'0x10de\\n' -> '10de'; None for anything that is not a hex id of that width."""
    if text is None:
        return None
    value = text.strip().lower().removeprefix("0x")
    if len(value) != digits or any(c not in "0123456789abcdef" for c in value):
        return None
    return value


def detect(probe: Probe, found: Found) -> None:
    for slot in probe.listdir(PCI_DEVICES):
        base = f"{PCI_DEVICES}/{slot}"
        vendor_id = _hex_id(probe.read_text(f"{base}/vendor", 64), 4)
        vendor = GPU_VENDORS.get(vendor_id or "")
        if vendor is None:
            continue
        class_code = _hex_id(probe.read_text(f"{base}/class", 64), 6)
        if class_code is None or not class_code.startswith(GPU_CLASS_PREFIXES):
            continue
        device_id = _hex_id(probe.read_text(f"{base}/device", 64), 4)
        link = probe.readlink(f"{base}/driver")
        driver = link.rstrip("/").rsplit("/", 1)[-1] if link else None
        gpu = Gpu(vendor=vendor, pci_id=f"{vendor_id}:{device_id}" if device_id else None, driver=driver)
        found.add_gpu(gpu, f"{base} (PCI class {class_code})", slot=slot)
