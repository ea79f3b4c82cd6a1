"""Completing a machine profile: the one step between "a machine as given" and "the machine the resolver sees".

A profile can name a GPU by PCI id only (``10de:1b80``), by name only, as people type it (``RTX 4090``), or in
full. ``complete_machine`` fills each GPU's missing architecture facts from the shipped tables, in order:

1. the vendor's PCI id table (its registry row's ``pci_table``, ``detectors/data/*-pci.json``): name, compute
   capability, gfx target, Intel family, integrated;
2. the GPU name tables (``detectors/data/gpu-names.json``, ``jetson.json``), for a GPU whose architecture is
   still unknown: compute capability, gfx, family, integrated;
3. the Jetson module table for an NVIDIA GPU of a compute capability only Jetson modules have (8.7 is an Orin):
   its Jetson family and "integrated", which make the resolver treat the machine as a Jetson.

An NVIDIA driver given only by the CUDA version it reports (``cuda_driver_api``, nvidia-smi's "CUDA Version")
is taken as at least the driver of that CUDA's GA release (``drivers.toolkit_ga_driver``), with that source.

Facts already given are kept; each filled fact records where it came from in ``sources``
(``gpus[0].compute_capability``). Every front end (plan, install, doctor, fleet, container mode, variants)
completes its machines with this function before resolving; detection itself reads the same tables.
"""

from __future__ import annotations

from . import vendors
from .machine import DRIVER_FROM_CUDA_VERSION, Gpu, Machine

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def _from_pci(gpu: Gpu) -> tuple[dict[str, Any], str] | None:
    """Fields the vendor's PCI id table gives for ``gpu`` and their source, or None (``detectors.pci.pci_facts``)."""
    row = vendors.vendor(gpu.vendor)
    if row is None or not gpu.pci_id or ":" not in gpu.pci_id:
        return None
    vendor_id, device = gpu.pci_id.split(":", 1)
    if vendor_id not in row.pci_vendor_ids:
        return None
    if all(getattr(gpu, f) is not None for f in row.pci_fields or ("name", row.arch_field, "integrated")):
        return None  # nothing the table would add (the tables are large)
    from .detectors.pci import pci_facts

    return pci_facts(row, device)


def _from_name(gpu: Gpu) -> tuple[dict[str, Any], str] | None:
    """Architecture fields the GPU name table gives for ``gpu``'s name, and their source, or None."""
    if not gpu.name or gpu.arch:  # a GPU whose architecture is known is not looked up by its name
        return None
    from .detectors.names import complete_gpu

    completed = complete_gpu(gpu)
    changed = {f: v for f, v in completed._asdict().items() if getattr(gpu, f) != v}
    return (changed, f"GPU name table: {gpu.name!r}") if changed else None


def _from_jetson(gpu: Gpu) -> tuple[dict[str, Any], str] | None:
    """The Jetson family of an NVIDIA GPU whose compute capability only a Jetson module has, or None."""
    if gpu.vendor != "nvidia" or gpu.family is not None or gpu.compute_capability is None:
        return None
    from .detectors.jetson import jetson_of_capability

    module = jetson_of_capability(gpu.compute_capability)
    if module is None:
        return None
    return ({"family": module["family"], "integrated": True},
            f"Jetson module table: sm {gpu.compute_capability} is the {module['name']}")


def complete_gpu(gpu: Gpu) -> tuple[Gpu, dict[str, str]]:
    """``gpu`` with its missing facts filled from the tables, and {field: source} for each fact filled."""
    filled: dict[str, str] = {}
    for lookup in (_from_pci, _from_name, _from_jetson):
        found = lookup(gpu)
        if found is None:
            continue
        values, source = found
        updates = {f: v for f, v in values.items() if v is not None and getattr(gpu, f) is None}
        if updates:
            gpu = gpu._replace(**updates)
            filled.update(dict.fromkeys(updates, source))
    return gpu, filled


def _driver_from_cuda_version(machine: Machine) -> Machine:
    """A machine whose NVIDIA driver is known only by the CUDA version it reports, with that CUDA's GA driver."""
    if machine.nvidia_driver or not machine.cuda_driver_api:
        return machine
    from .drivers import toolkit_ga_driver
    from .versions import release_numbers

    numbers = release_numbers(machine.cuda_driver_api)
    found = toolkit_ga_driver(numbers[0], numbers[1] if len(numbers) > 1 else 0,
                              machine.os or "linux") if numbers else None
    if found is None:
        return machine
    driver, confidence = found
    source = (f"{DRIVER_FROM_CUDA_VERSION} {machine.cuda_driver_api} (cuda_driver_api): at least the driver of its "
              f"GA release ({confidence})")
    return machine._replace(nvidia_driver=driver, sources={**machine.sources, "nvidia_driver": source})


def complete_machine(machine: Machine) -> Machine:
    """The machine with every GPU's architecture facts completed from the tables, and a driver known only by its
    CUDA version made a driver version (see the module docstring)."""
    machine = _driver_from_cuda_version(machine)
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
