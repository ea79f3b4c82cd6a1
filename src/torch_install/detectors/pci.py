"""PCI scan: every display, 3D and processing-accelerator device of a registered GPU vendor (``vendors.py``),
with its bound kernel driver.

Reads ``/sys/bus/pci/devices/*/{vendor,device,class}`` and the ``driver`` symlink. Works with no GPU
driver installed, so it tells "no GPU" from "a GPU without a driver". Chipsets, NICs and NVMe drives
are not GPUs and are skipped by class.

``table_facts`` reads a vendor's PCI id table in the common shape (``{"devices": {id: {"name", <arch field>,
"integrated"}}}``), what a vendor without a ``pci_facts`` hook of its own gets.
"""

from __future__ import annotations

from .. import vendors
from ..machine import Gpu
from ..package_data import load_json
from ..probe import Probe
from .found import Found

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

PCI_DEVICES = "/sys/bus/pci/devices"
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
        row = vendors.of_pci_id(vendor_id)
        if row is None:
            continue
        class_code = _hex_id(probe.read_text(f"{base}/class", 64), 6)
        if class_code is None or not class_code.startswith(GPU_CLASS_PREFIXES):
            continue
        device_id = _hex_id(probe.read_text(f"{base}/device", 64), 4)
        link = probe.readlink(f"{base}/driver")
        driver = link.rstrip("/").rsplit("/", 1)[-1] if link else None
        gpu = Gpu(vendor=row.name, pci_id=f"{vendor_id}:{device_id}" if device_id else None, driver=driver)
        found.add_gpu(gpu, f"{base} (PCI class {class_code})", slot=slot)


class PciFacts(vendors.Protocol):
    """A vendor's reader of its PCI id table (its row's ``pci_facts``): what the table says of a device id
    ({Gpu field: value}) and that source, or None when it does not know the device."""

    def __call__(self, device_id: str) -> tuple[dict[str, Any], str] | None: ...


PCI_FACTS: vendors.Hook[PciFacts] = vendors.Hook("pci_facts", PciFacts, "torch_install.detectors")


def pci_facts(row: vendors.Vendor, device_id: str) -> tuple[dict[str, Any], str] | None:
    """What the vendor's PCI id table says of a device id, and that source: its ``pci_facts`` hook, else its
    ``pci_table`` in the common shape; None when neither knows the device."""
    if row.pci_facts:
        return PCI_FACTS.load(row)(device_id)
    if not row.pci_table:
        return None
    entry = pci_table(row)["devices"].get(device_id.lower())
    if not isinstance(entry, dict):
        return None
    fields = ("name", row.arch_field, "integrated")
    return {f: entry.get(f) for f in fields}, f"{row.pci_table.rsplit('/', 1)[-1]} ({device_id.lower()})"


def pci_table(row: vendors.Vendor) -> dict[str, Any]:
    """The vendor's PCI id table (``pci_table``: a file of detectors/data/, or a path)."""
    assert row.pci_table is not None
    table: dict[str, Any] = load_json(row.pci_table if row.pci_table.startswith("/")
                                      else f"detectors/data/{row.pci_table}")
    return table


def enrich(found: Found, vendor: str) -> None:
    """Name and architecture of the vendor's GPUs from its PCI id table (a vendor without a detector of its own)."""
    row = vendors.vendor(vendor)
    if row is None:
        return
    for record in found.gpus:
        if record.gpu.vendor == vendor and record.gpu.pci_id:
            facts = pci_facts(row, record.gpu.pci_id.split(":", 1)[1])
            if facts is None:
                found.note(f"{row.brand} GPU {record.gpu.pci_id}: not in the PCI id table; its "
                           f"{row.arch_word} is unknown")
                continue
            values, source = facts
            found.update_gpu(record, source, **values)
