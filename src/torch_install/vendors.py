"""The GPU vendors, each declared once. Detection, completion, the resolver, the doctor, container mode and
WheelNext read a vendor's row here and keep no vendor table of their own; no floor dispatches on a vendor's name.

A row holds the vendor's facts (PCI vendor ids, the variant kind of its builds and the syntax of their ids, the
device-selection variables its runtimes read and how, the profile fields of its driver stack, its
``torch/version.py`` field, WheelNext namespace, words for messages) and its code hooks. A hook names code of the
floor that calls it, ``"module:name"`` inside that floor's package (``check="rules:check_cuda"``: the resolver's
``rules.check_cuda``), and each kind of hook is a ``Hook`` declared where it is called, with the Protocol its
code fulfils: the import of a vendor's code points from its caller across or down, never up from this table, and
happens only when used, so importing this table costs nothing (docs/architecture.md, "Vendor hooks").

Adding a vendor is one row here plus its data (a PCI id table, the matrix's builds of its variant kind); see
docs/architecture.md, "Adding a vendor". ``VENDORS`` is read at each call, and ``generation`` counts changes made
to it at run time (the caches that depend on it key on that number).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .records import Record
from .versions import small_int

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar
    from typing import Protocol as Protocol  # a hook kind's Protocol: typing's to type checkers

    _Code = TypeVar("_Code")

    class _Typed(Generic[_Code]):
        """``Hook``'s type parameter, which only type checkers see."""
else:  # when running, no typing: a hook's Protocol is a plain class, and Hook[...] is Hook
    Protocol = object
    _Code = None

    class _Typed:
        __slots__ = ()

        def __class_getitem__(cls, item):
            return cls


class Selector(Record):
    """Device-selection variables a runtime reads, of which the first one set applies.

    A value lists the devices to keep: indexes (in the runtime's order, PCI bus order here) or UUIDs (a unique
    prefix is enough); reading stops at the first entry that is neither, so an empty value, or one that starts
    with ``-1``, keeps none. ``subdevices``: an entry may name a sub-device (``0.1``, Level Zero's tiles), which
    keeps its device. ``empty_keeps_all``: an empty value selects nothing (Level Zero): every device stays."""

    variables: tuple[str, ...]
    subdevices: bool = False
    empty_keeps_all: bool = False


class Vendor(Record):
    """One GPU vendor: its facts, and its hooks (``"module:name"`` in the package of the floor that calls them, named
    beside each field: ``resolver.rules.CHECK`` reads ``check``)."""

    name: str  # the profile's value: "nvidia"
    brand: str  # in messages: "NVIDIA"
    pci_vendor_ids: tuple[str, ...]  # PCI vendor ids of its GPUs: ("10de",)
    kind: str | None  # variant kind of its builds on the PyTorch index ("cuda"); None: it has none there (Apple)
    variant_id: str | None  # the syntax of those variant ids, a regular expression: r"cu[0-9]{3}"
    build: str  # its builds' name in messages: "CUDA"
    arch_field: str  # the Gpu field its builds' target lists name: compute_capability, gfx or family
    arch_word: str = "architecture"  # that field in messages: "gfx target"
    list_word: str = "architecture list"  # a build's list of them in messages: "gfx list"
    visibility: tuple[Selector, ...] = ()  # device selection, in the order the runtimes apply it
    select: str = ""  # how to keep only some GPUs ("{}": their indexes), for advice
    driver_fields: tuple[str, ...] = ()  # profile fields of its driver stack: nvidia_driver, cuda_driver_api
    integrated: str = "it shares system memory with the CPU"  # why its integrated GPU is a weaker choice
    elsewhere: tuple[tuple[str, str], ...] = ()  # (OS, where its builds are when the PyTorch index has none)
    space_gb: float = 1.0  # rough free space a reinstall of its build needs (download and unpacked), an estimate
    version_field: str | None = None  # the torch/version.py field naming its build: "cuda"
    build_variant: str | None = None  # that field's version as a variant id: "cu{major}{minor}"
    runtime_prefixes: tuple[str, ...] = ()  # distributions its builds bring along: "nvidia-"
    runtime_device: str | None = None  # torch's device for its GPUs: "cuda", "xpu", "mps"
    wheelnext: str | None = None  # WheelNext provider namespace
    detector: str | None = None  # hook (detectors.DETECTOR): a module of detectors/, its detect(probe, found)
    detector_system: str | None = None  # the only OS (platform.system()) its detector has anything to read on
    pci_table: str | None = None  # device id -> facts table (detectors/data/), read by pci_facts (or by the default)
    pci_facts: str | None = None  # hook (detectors.pci.PCI_FACTS): (device id) -> ({Gpu field: value}, source) or
    # None; default: pci_table read in the common shape
    pci_fields: tuple[str, ...] = ()  # the Gpu fields its table gives (a GPU with all of them is not looked up);
    # default: name, its arch_field, integrated
    pci_names: str | None = "names:table_names"  # hook (detectors.names.PCI_NAMES): (row) -> [(product names,
    # {Gpu field: value})], the GPU names its PCI table gives (--gpu NAME); None: its table's names are no GPU's
    check: str = "rules:check_arch_list"  # hook (resolver.rules.CHECK): does one of its variants run on the GPUs
    preference: str = "rules:no_preference"  # hook (resolver.rules.PREFERENCE): the order of its usable variants
    plan_rules: str = "vendor_rules:VendorRules"  # hook (resolver.choose.PLAN_RULES): its own steps and warnings
    doctor_checks: tuple[str, ...] = ()  # hooks (doctor.checks.VENDOR_CHECKS): checks that concern its builds only
    wheelnext_properties: str | None = None  # hook (wheelnext.properties.PROPERTIES): (machine, notes) -> its
    # provider's feature configs


NVIDIA = Vendor(
    name="nvidia", brand="NVIDIA", pci_vendor_ids=("10de",), kind="cuda", variant_id=r"cu[0-9]{3}", build="CUDA",
    arch_field="compute_capability", arch_word="compute capability", list_word="arch list",
    visibility=(Selector(("CUDA_VISIBLE_DEVICES",)),),
    select="CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES={}",
    driver_fields=("nvidia_driver", "cuda_driver_api"),
    space_gb=6.0, version_field="cuda", build_variant="cu{major}{minor}",
    runtime_prefixes=("nvidia-", "cuda-toolkit", "cuda-bindings", "triton"), runtime_device="cuda",
    wheelnext="nvidia",
    detector="nvidia", pci_table="nvidia-pci.json", pci_facts="nvidia:pci_facts", pci_names="nvidia:pci_names",
    pci_fields=("name", "compute_capability"),
    check="rules:check_cuda", preference="rules:cuda_preference", plan_rules="vendor_rules:CudaRules",
    doctor_checks=tuple(f"checks:{name}" for name in (
        "check_cuda_build_driver_too_old", "check_gpu_arch_not_in_build", "check_cuda_wheel_on_cpu_machine",
        "check_driver_library_mismatch", "check_nvidia_libs_shadowed", "check_nvidia_libs_missing",
        "check_nvidia_libs_stale_major", "check_cuda_compat_forward", "check_wsl_gpu_driver_missing")),
    wheelnext_properties="properties:nvidia_namespace",
)
AMD = Vendor(
    name="amd", brand="AMD", pci_vendor_ids=("1002",), kind="rocm", variant_id=r"rocm[0-9]+(?:\.[0-9]+){1,2}",
    build="ROCm", arch_field="gfx", arch_word="gfx target", list_word="gfx list",
    # ROCr first (every ROCm program); then HIP's own, HIP_VISIBLE_DEVICES else CUDA_VISIBLE_DEVICES (ROCm's
    # "GPU isolation" reference), over the devices ROCr left
    visibility=(Selector(("ROCR_VISIBLE_DEVICES",)), Selector(("GPU_DEVICE_ORDINAL",)),
                Selector(("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"))),
    select="HIP_VISIBLE_DEVICES={}",
    driver_fields=("rocm",),
    integrated="it shares system memory with the CPU, and ROCm supports AMD's integrated GPUs at community level only",
    elsewhere=(("windows", "AMD's own Windows PyTorch wheels are on AMD's index"),),
    space_gb=10.0, version_field="hip", build_variant="rocm{major}.{minor}",
    runtime_prefixes=("rocm-", "amd-torch-device-", "pytorch-triton-rocm"), runtime_device="cuda",
    wheelnext="amd",
    detector="amd", pci_table="amd-pci.json", pci_facts="amd:pci_facts",
    preference="rules:rocm_preference", plan_rules="vendor_rules:RocmRules",
    doctor_checks=("checks:check_rocm_gfx_not_in_build",),
    wheelnext_properties="properties:amd_namespace",
)
INTEL = Vendor(
    name="intel", brand="Intel", pci_vendor_ids=("8086",), kind="xpu", variant_id="xpu", build="XPU",
    arch_field="family", arch_word="device family", list_word="device list",
    visibility=(Selector(("ZE_AFFINITY_MASK",), subdevices=True, empty_keeps_all=True),),
    select="ZE_AFFINITY_MASK={}",
    space_gb=4.0, version_field="xpu", build_variant="xpu",
    runtime_prefixes=("intel-", "pytorch-triton-xpu", "triton-xpu"), runtime_device="xpu",
    wheelnext="intel",
    detector="intel", pci_table="intel-pci.json", pci_facts="intel:pci_facts",
    pci_names=None,  # pci.ids names Intel's devices by platform ("Intel UHD Graphics", "… Graphics Controller"),
    # several families alike: its names are gpu-names.json's
    check="rules:check_xpu", plan_rules="vendor_rules:XpuRules",
    doctor_checks=("checks:check_xpu_runtime_missing",),
    wheelnext_properties="properties:intel_namespace",
)
APPLE = Vendor(
    name="apple", brand="Apple", pci_vendor_ids=(), kind=None, variant_id=None, build="MPS", arch_field="family",
    runtime_device="mps", detector="apple", detector_system="Darwin",
)

# In the order a machine with GPUs of several vendors is resolved for.
VENDORS: tuple[Vendor, ...] = (NVIDIA, AMD, INTEL, APPLE)
generation = 0  # bumped by whatever changes VENDORS at run time; caches of answers derived from it key on it


def names() -> tuple[str, ...]:
    return tuple(v.name for v in VENDORS)


def vendor(name: str | None) -> Vendor | None:
    """The row of a vendor name (``Gpu.vendor``), or None."""
    return next((v for v in VENDORS if v.name == name), None)


def of_pci_id(vendor_id: str | None) -> Vendor | None:
    """The vendor of a PCI vendor id ("10de"), or None."""
    return next((v for v in VENDORS if vendor_id in v.pci_vendor_ids), None)


def of_kind(kind: str | None) -> Vendor | None:
    """The vendor whose builds are of variant kind ``kind`` ("rocm"), or None."""
    return next((v for v in VENDORS if v.kind is not None and v.kind == kind), None)


def with_builds() -> tuple[Vendor, ...]:
    """The vendors that have builds of their own on the PyTorch index, in resolution order."""
    return tuple(v for v in VENDORS if v.kind is not None)


def gpu_kinds() -> tuple[str, ...]:
    """The variant kinds of GPU builds: cuda, rocm, xpu …"""
    return tuple(v.kind for v in VENDORS if v.kind is not None)


# -- hooks -----------------------------------------------------------------------------------------------------

HOOKS: list[Hook[Any]] = []  # every kind of hook, as the modules that call them are imported


class Hook(_Typed[_Code]):
    """One kind of vendor hook, declared by the module that calls it: the row field that names each vendor's code
    (``"module:name"`` inside ``package``; or ``"module"``, whose ``attribute`` it is), and ``protocol``, the class
    that states the code's signature (a ``typing.Protocol`` to type checkers, a plain class when running; a test
    compares every hook of every row with it). The caller's import of the code is the edge the import graph
    counts, from the caller's module (``protocol``'s) to the code's."""

    __slots__ = ("field", "protocol", "package", "attribute")

    def __init__(self, field: str, protocol: type, package: str, attribute: str | None = None) -> None:
        self.field = field
        self.protocol = protocol
        self.package = package
        self.attribute = attribute
        HOOKS.append(self)

    def refs(self, row: Vendor) -> tuple[str, ...]:
        """The row's references of this kind: none, one, or several (``doctor_checks``)."""
        value = getattr(row, self.field)
        return tuple(value) if isinstance(value, tuple) else (value,) if value else ()

    def target(self, ref: str) -> tuple[str, str]:
        """(module, name) of the code a reference names."""
        module, _, name = ref.partition(":")
        return f"{self.package}.{module}", name or self.attribute or ""

    def code(self, ref: str) -> _Code:
        """The code one reference names (imported now, cached by the import system)."""
        from importlib import import_module

        module, name = self.target(ref)
        found: _Code = getattr(import_module(module), name)
        return found

    def load(self, row: Vendor) -> _Code:
        """The row's code of this kind (a ValueError when the row names none)."""
        (ref,) = self.refs(row) or (None,)
        if ref is None:
            raise ValueError(f"vendor {row.name!r} has no {self.field} hook")
        return self.code(ref)

    def load_all(self, row: Vendor) -> tuple[_Code, ...]:
        """Each of the row's references of this kind, loaded (``doctor_checks``)."""
        return tuple(self.code(ref) for ref in self.refs(row))


# -- device selection ------------------------------------------------------------------------------------------

def visible_set(value: str, count: int, uuids: list[str | None], subdevices: bool = False
                ) -> tuple[set[int], str | None]:
    """Which of ``count`` devices (in bus order, with their UUIDs) a selection value keeps, and a problem line if
    part of it was not understood. As the runtimes do, reading stops at the first entry that is not a device."""
    keep: set[int] = set()
    for raw in value.split(","):
        item = raw.strip()
        device = item.split(".", 1)[0] if subdevices and re.fullmatch(r"[0-9]+\.[0-9]+", item) else item
        index = small_int(device, 6)
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


class Hidden(Record):
    """What a vendor's device-selection variables do on a machine."""

    hidden: dict[int, str]  # device index -> the "$NAME=value" that hides it
    problems: tuple[str, ...]  # "$NAME: …" lines for values not fully understood


def hidden_devices(get: Callable[[str], str | None], row: Vendor, count: int,
                   uuids: list[str | None] | None = None) -> Hidden:
    """Which of ``count`` devices of ``row`` its selection variables (read with ``get``) hide: each selector, in
    order, over the devices the ones before it kept (so an index counts only those)."""
    uuids = uuids if uuids is not None else [None] * count
    remaining = list(range(count))
    hidden: dict[int, str] = {}
    problems: list[str] = []
    for selector in row.visibility:
        found = next(((n, v) for n in selector.variables if (v := get(n)) is not None), None)
        if found is None or not remaining:
            continue
        name, value = found
        if value.strip() == "" and selector.empty_keeps_all:
            continue
        if value.strip() in ("", "-1"):
            keep: set[int] = set()
        else:
            keep, problem = visible_set(value, len(remaining), [uuids[i] for i in remaining], selector.subdevices)
            if problem:
                problems.append(f"${name}: {problem}")
        for position, device in enumerate(list(remaining)):
            if position not in keep:
                hidden[device] = f"${name}={value[:40]}"
        remaining = [device for position, device in enumerate(remaining) if position in keep]
    return Hidden(hidden, tuple(problems))


def hides_every_device(value: str, selector: Selector) -> bool:
    """Whether a selection value keeps no device whatever the machine: empty (unless that selects nothing), or its
    first entry neither an index nor a UUID (``-1``, ``none``, ``NoDevFiles``)."""
    if value.strip() == "":
        return not selector.empty_keeps_all
    first = value.split(",", 1)[0].strip()
    if selector.subdevices and re.fullmatch(r"[0-9]+\.[0-9]+", first):
        return False
    return small_int(first, 6) is None and not first.upper().startswith(("GPU-", "MIG-"))


def selectors_of(variable: str) -> Iterable[tuple[Vendor, Selector]]:
    """The vendors whose runtimes read ``variable``, with the selector that names it."""
    for row in VENDORS:
        for selector in row.visibility:
            if variable in selector.variables:
                yield row, selector


def selection_variables() -> tuple[str, ...]:
    """Every device-selection variable of every vendor, each once, in the order the rows name them."""
    return tuple(dict.fromkeys(n for row in VENDORS for s in row.visibility for n in s.variables))
