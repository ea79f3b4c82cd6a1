"""Detection: read a machine through a Probe into a Machine profile, every fact with its source.

Each detector module has ``detect(probe, found) -> None`` and adds what it learns to ``found``;
they run in ``detect``'s order, so later ones can refine what earlier ones saw (the PCI scan lists the
GPUs; the vendor detectors name them and add driver, compute capability, gfx target; hints apply
the user's overrides last).

Entry point: ``detect(probe=None) -> Machine`` (``Probe()`` reads this host). ``names`` maps GPU marketing
names to architectures for ``--gpu NAME`` and name-only profiles; the tables are in ``detectors/data/``.
"""

from __future__ import annotations

from .. import vendors
from ..machine import Machine
from ..probe import Probe
from .found import Found, build_machine


class Detector(vendors.Protocol):
    """A vendor's detector (its row's ``detector``: a module of detectors/, its ``detect``), run after the PCI
    scan: it adds what it reads of the host to ``found``."""

    def __call__(self, probe: Probe, found: Found) -> None: ...


DETECTOR: vendors.Hook[Detector] = vendors.Hook("detector", Detector, __name__, attribute="detect")


def detect_platform(probe: Probe) -> Machine:
    """The probe's platform fields only (os, arch, python, glibc), the host detector's: what a machine described by
    a profile or flags may assume."""
    from . import host

    found = Found()
    host.detect(probe, found)
    return build_machine(found)


def detect(probe: Probe | None = None) -> Machine:
    """Detect the machine behind ``probe`` (the real host by default): the host, the PCI scan, each registered
    vendor's detector (``vendors.py``; a vendor without one gets its PCI id table read), Windows' adapters, then
    the user's hints and overrides."""
    from importlib import import_module

    probe = probe or Probe()
    found = Found()
    system = probe.host("system")
    for name in ("host", "pci"):
        import_module(f"{__name__}.{name}").detect(probe, found)
    for row in vendors.VENDORS:
        if row.detector_system and row.detector_system != system:
            continue  # the module would return at once; not importing it keeps `detect` fast
        if row.detector:
            DETECTOR.load(row)(probe, found)
        elif row.pci_table or row.pci_facts:  # no detector of its own: its PCI id table names its GPUs
            import_module(f"{__name__}.pci").enrich(found, row.name)
    if system == "Windows":
        import_module(f"{__name__}.windows").detect(probe, found)
    import_module(f"{__name__}.hints").detect(probe, found)
    return build_machine(found)
