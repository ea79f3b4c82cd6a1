"""What one detection run has found so far (``Found``: machine fields and GPU records, each fact with its source),
and the ``Machine`` it makes (``build_machine``). Every detector adds to a ``Found``."""

from __future__ import annotations

from ..machine import Gpu, Machine

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class GpuRecord:
    """A GPU while detection is in progress: one physical device, with where each field came from."""

    __slots__ = ("gpu", "sources", "slot", "uuid")

    def __init__(self, gpu: Gpu, sources: dict[str, str] | None = None, slot: str | None = None,
                 uuid: str | None = None) -> None:
        self.gpu = gpu
        self.sources: dict[str, str] = {} if sources is None else sources  # Gpu field -> source
        self.slot = slot  # PCI address "0000:01:00.0", when known
        self.uuid = uuid  # "GPU-…" (NVIDIA), for *_VISIBLE_DEVICES given as UUIDs; not part of the profile

    def __repr__(self) -> str:
        return f"GpuRecord({self.gpu!r}, {self.sources!r}, slot={self.slot!r}, uuid={self.uuid!r})"


class Found:
    """Facts gathered so far by one detection run."""

    __slots__ = ("values", "sources", "gpus", "notes", "_by_slot")

    def __init__(self, values: dict[str, Any] | None = None, sources: dict[str, str] | None = None,
                 gpus: list[GpuRecord] | None = None, notes: list[str] | None = None) -> None:
        self.values: dict[str, Any] = {} if values is None else values  # Machine field -> value
        self.sources: dict[str, str] = {} if sources is None else sources  # Machine field -> source
        self.gpus: list[GpuRecord] = [] if gpus is None else gpus
        self.notes: list[str] = [] if notes is None else notes
        self._by_slot: dict[tuple[int, str], list[GpuRecord]] = {}  # slot key -> its records: one lookup
        for record in self.gpus:
            if record.slot:
                self._by_slot.setdefault(_slot_key(record.slot), []).append(record)

    def set(self, name: str, value: Any, source: str, override: bool = False) -> None:
        """Record a Machine field; the first source wins unless ``override`` (user hints)."""
        if value is None or (name in self.values and not override):
            return
        self.values[name] = value
        self.sources[name] = source

    def add_gpu(self, gpu: Gpu, source: str, slot: str | None = None) -> GpuRecord:
        """Add a device; every field it sets is attributed to ``source``."""
        record = GpuRecord(gpu, {f: source for f, v in gpu._asdict().items()
                                 if v is not None and f not in ("count", "visible")}, slot)
        self.gpus.append(record)
        if slot:
            self._by_slot.setdefault(_slot_key(slot), []).append(record)
        return record

    def find_gpu(self, slot: str | None = None, vendor: str | None = None) -> GpuRecord | None:
        """The GPU at a PCI address, else None."""
        if slot is None:
            return None
        for record in self._by_slot.get(_slot_key(slot), ()):
            if vendor is None or record.gpu.vendor == vendor:
                return record
        return None

    def update_gpu(self, record: GpuRecord, source: str, override: bool = False, **changes: Any) -> None:
        """Fill (or with ``override`` replace) GPU fields, attributing them to ``source``."""
        updates = {k: v for k, v in changes.items()
                   if v is not None and (override or getattr(record.gpu, k) is None)}
        if updates:
            record.gpu = record.gpu._replace(**updates)
            record.sources.update({k: source for k in updates})

    def note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)


def _slot_key(slot: str) -> tuple[int, str]:
    """A PCI address with its domain as a number: '0000:01:00.0', nvidia-smi's '00000000:01:00.0' and a bare
    '01:00.0' (domain 0) name one device; '0001:00:00.0' and '0002:00:00.0' (a Hyper-V VM gives every device a
    domain of its own) are two."""
    parts = slot.lower().split(":")
    try:
        domain = int(parts[-3], 16) if len(parts) >= 3 else 0
    except ValueError:
        domain = -1
    return domain, ":".join(parts[-2:])


def build_machine(found: Found) -> Machine:
    """Group identical adjacent GPUs (same model, visibility) into one entry with a count."""
    gpus: list[Gpu] = []
    sources = dict(found.sources)
    for record in found.gpus:
        if gpus and gpus[-1]._replace(count=1) == record.gpu:
            gpus[-1] = gpus[-1]._replace(count=gpus[-1].count + 1)
            continue
        gpus.append(record.gpu)
        sources.update({f"gpus[{len(gpus) - 1}].{k}": v for k, v in record.sources.items()})
    return Machine(**found.values, gpus=tuple(gpus), sources=sources, notes=tuple(found.notes))
