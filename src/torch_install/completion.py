"""Completing a machine profile: the one step between "a machine as given" and "the machine the resolver sees".

A profile can name a GPU by PCI id only (``10de:1b80``), by name only, as people type it (``RTX 4090``), or in
full. ``complete_machine`` fills each GPU's missing architecture facts from the shipped tables, in order:

1. the PCI id tables (``detectors/data/{nvidia,amd,intel}-pci.json``): name, compute capability, gfx target,
   Intel family, integrated;
2. the GPU name table (``detectors/data/gpu-names.json``), for a GPU whose architecture is still unknown:
   compute capability, gfx, family, integrated.

Facts already given are kept; each filled fact records where it came from in ``sources``
(``gpus[0].compute_capability``). Every front end (plan, install, doctor, fleet, container mode, variants)
completes its machines with this function before resolving; detection itself reads the same tables.
"""

from __future__ import annotations

from typing import Any

from .machine import Gpu, Machine

# What each vendor's PCI id table gives; a GPU that has all of it is not looked up (the tables are large).
_PCI_FIELDS = {"nvidia": ("name", "compute_capability"), "amd": ("name", "gfx", "integrated"),
               "intel": ("name", "family", "integrated")}


def _from_pci(gpu: Gpu) -> tuple[dict[str, Any], str] | None:
    """Fields the vendor's PCI id table gives for ``gpu`` and their source, or None."""
    if not gpu.pci_id or ":" not in gpu.pci_id:
        return None
    if all(getattr(gpu, f) is not None for f in _PCI_FIELDS.get(gpu.vendor, ())):
        return None
    vendor_id, device = gpu.pci_id.split(":", 1)
    if gpu.vendor == "nvidia" and vendor_id == "10de":
        from .detectors.nvidia import pci_lookup

        hit = pci_lookup(device)
        if hit is None:
            return None
        chip, product, cc = hit
        return ({"name": f"NVIDIA {product}" if product else f"NVIDIA {chip}", "compute_capability": cc},
                f"PCI id table: {gpu.pci_id} is {chip}" + (f" (sm_{cc.replace('.', '')})" if cc else ""))
    if gpu.vendor == "amd" and vendor_id == "1002":
        from .detectors.amd import display_name, table_entry

        entry = table_entry(device)
        if entry is None:
            return None
        return ({"name": display_name(entry), "gfx": entry.get("gfx"), "integrated": entry["integrated"]},
                f"PCI id table: {gpu.pci_id}")
    if gpu.vendor == "intel" and vendor_id == "8086":
        from .detectors.intel import family_of

        row = family_of(device)
        if not isinstance(row, dict):  # Unknown: not in the table
            return None
        return ({"name": row.get("name"), "family": row["family"], "integrated": row["integrated"]},
                f"PCI id table: {gpu.pci_id}")
    return None


def _from_name(gpu: Gpu) -> tuple[dict[str, Any], str] | None:
    """Architecture fields the GPU name table gives for ``gpu``'s name, and their source, or None."""
    if not gpu.name or gpu.arch:  # a GPU whose architecture is known is not looked up by its name
        return None
    from .detectors.names import complete_gpu

    completed = complete_gpu(gpu)
    changed = {f: v for f, v in completed._asdict().items() if getattr(gpu, f) != v}
    return (changed, f"GPU name table: {gpu.name!r}") if changed else None


def complete_gpu(gpu: Gpu) -> tuple[Gpu, dict[str, str]]:
    """``gpu`` with its missing facts filled from the tables, and {field: source} for each fact filled."""
    filled: dict[str, str] = {}
    for lookup in (_from_pci, _from_name):
        found = lookup(gpu)
        if found is None:
            continue
        values, source = found
        updates = {f: v for f, v in values.items() if v is not None and getattr(gpu, f) is None}
        if updates:
            gpu = gpu._replace(**updates)
            filled.update(dict.fromkeys(updates, source))
    return gpu, filled


def complete_machine(machine: Machine) -> Machine:
    """The machine with every GPU's architecture facts completed from the tables (see the module docstring)."""
    if not machine.gpus:
        return machine
    gpus: list[Gpu] = []
    sources = dict(machine.sources)
    for index, gpu in enumerate(machine.gpus):
        completed, filled = complete_gpu(gpu)
        gpus.append(completed)
        for field, source in filled.items():
            sources.setdefault(f"gpus[{index}].{field}", source)
    if gpus == list(machine.gpus):
        return machine
    return machine._replace(gpus=tuple(gpus), sources=sources)
