"""Intel GPUs: family from the PCI device id (``data/intel-pci.json``), integrated or discrete, and whether
an i915/xe kernel driver is bound (XPU needs one).

Family values: alchemist, battlemage, ponte-vecchio, meteor-lake, arrow-lake, lunar-lake, panther-lake,
nova-lake, crescent-island, xe-lp (Tiger Lake to Raptor Lake iGPUs and DG1), gen11, gen9, gen8, gen7.
"""

from __future__ import annotations

from ..package_data import load_json
from ..probe import Probe
from .found import Found, GpuRecord
from .unknown import Unknown

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

TABLE = "intel-pci.json"  # in detectors/data/
GPU_DRIVERS = ("i915", "xe")


def family_of(device_id: str | None) -> dict[str, Any] | Unknown:
    """The table row (family, integrated, name) for an Intel PCI device id such as "56a0"."""
    if not device_id:
        return Unknown("no PCI device id")
    entry = load_json(f"detectors/data/{TABLE}")["devices"].get(device_id.lower())
    return entry if entry else Unknown(f"Intel device 8086:{device_id} is not in the device table")


def pci_facts(device_id: str) -> tuple[dict[str, Any], str] | None:
    """Name, family and integrated-or-not of an Intel device id ("56a0") from the PCI id table, and that source;
    None when the table does not know it (the registry's ``pci_facts`` hook)."""
    entry = family_of(device_id)
    if isinstance(entry, Unknown):
        return None
    return ({"name": entry.get("name"), "family": entry["family"], "integrated": entry["integrated"]},
            f"{TABLE} ({device_id.lower()})")


def detect(probe: Probe, found: Found) -> None:
    for record in found.gpus:
        if record.gpu.vendor == "intel":
            enrich(record, found)


def enrich(record: GpuRecord, found: Found, check_driver: bool = True) -> None:
    """Add family, integrated and name to an Intel GPU record; note a missing i915/xe driver."""
    device = record.gpu.pci_id.split(":")[1] if record.gpu.pci_id else None
    entry = family_of(device)
    if isinstance(entry, Unknown):
        found.note(f"{entry.reason}: its family is unknown")
        return
    found.update_gpu(record, f"{TABLE} ({device})", family=entry["family"], integrated=entry["integrated"],
                     name=entry.get("name"))
    if check_driver and record.gpu.driver not in GPU_DRIVERS:
        bound = f"driver {record.gpu.driver}" if record.gpu.driver else "no driver"
        found.note(f"Intel GPU {record.gpu.pci_id} at {record.slot} has {bound} bound (XPU needs i915 or xe)")
