"""AMD GPUs: gfx target, name, integrated or discrete, and the ROCm user space.

Order of sources: the KFD topology (``/sys/class/kfd/kfd/topology/nodes/*/properties``; needs only the
amdgpu kernel driver, no ROCm install), then the PCI id table (``data/amd-pci.json``) for GPUs the KFD
does not show, then ``rocm_agent_enumerator`` / ``rocminfo`` only when ROCm is installed and a GPU is
still without a gfx target (or sysfs shows no PCI devices at all). ROCm's version comes from
``$ROCM_PATH/.info/version`` or ``/opt/rocm/.info/version`` (``rocm.py``); the amdgpu kernel driver's (AMD's DKMS build
only) from ``/sys/module/amdgpu/version``.
"""

from __future__ import annotations

import re

from ..machine import Gpu
from ..package_data import load_json
from ..probe import Probe
from ..records import Record
from ..versions import small_int
from .found import Found, GpuRecord
from .rocm import rocm_version_file
from .unknown import Unknown

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

KFD_NODES = "/sys/class/kfd/kfd/topology/nodes"
AMDGPU_MODULE_VERSION = "/sys/module/amdgpu/version"  # AMD's DKMS driver only
AMD_VENDOR_ID = 0x1002
TABLE = "amd-pci.json"  # in detectors/data/
_GFX = r"^gfx[0-9a-f]{3,4}$"


class KfdNode(Record):
    """One GPU node of the KFD topology."""

    node: str
    gfx: str
    device_id: int | None
    slot: str | None  # PCI address "0000:c5:00.0", from domain and location_id


def gfx_name(target_version: int) -> str:
    """KFD's decimal gfx_target_version as an LLVM target: 90402 -> gfx942, 90010 -> gfx90a, 110501 -> gfx1151."""
    major, minor, step = target_version // 10000, (target_version // 100) % 100, target_version % 100
    return f"gfx{major}{minor:x}{step:x}"


def parse_kfd_properties(text: str | None, node: str = "?") -> KfdNode | None | Unknown:
    """A KFD node's ``properties`` file: a KfdNode for a GPU, None for a CPU node, Unknown if unreadable."""
    if not text:
        return Unknown(f"KFD node {node}: properties file is empty or missing")
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        number = small_int(parts[1]) if len(parts) == 2 else None
        if number is not None:
            values[parts[0]] = number
    if "gfx_target_version" not in values:
        return Unknown(f"KFD node {node}: no gfx_target_version line")
    version = values["gfx_target_version"]
    if version == 0 or values.get("simd_count", 1) == 0:
        return None  # a CPU node
    major, minor, step = version // 10000, (version // 100) % 100, version % 100
    if not (6 <= major <= 99 and minor < 16 and step < 16):
        return Unknown(f"KFD node {node}: gfx_target_version {version} is not a known encoding")
    if "vendor_id" in values and values["vendor_id"] != AMD_VENDOR_ID:
        return Unknown(f"KFD node {node}: vendor_id {values['vendor_id']} is not AMD")
    slot = None
    if "location_id" in values:
        loc, domain = values["location_id"], values.get("domain", 0)
        slot = f"{domain:04x}:{loc >> 8:02x}:{(loc & 0xFF) >> 3:02x}.{loc & 0x7}"
    device_id = values.get("device_id")
    return KfdNode(node, gfx_name(version), device_id if device_id and device_id <= 0xFFFF else None, slot)


def parse_agent_enumerator(text: str | None) -> list[str] | Unknown:
    """``rocm_agent_enumerator`` output: one gfx name per agent; gfx000 (the CPU) is skipped."""
    names = [line.strip() for line in (text or "").splitlines()]
    targets = [n for n in names if re.match(_GFX, n) and n != "gfx000"]
    if not targets:
        return Unknown("rocm_agent_enumerator listed no GPU agent")
    return targets


def parse_rocminfo(text: str | None) -> list[tuple[str, str | None]] | Unknown:
    """``rocminfo`` output -> [(gfx, marketing name)] for each agent whose Device Type is GPU."""
    agents: list[dict[str, str]] = []
    for line in (text or "").splitlines():
        stripped = line.strip()
        if re.match(r"^Agent [0-9]+$", stripped):
            agents.append({})
        elif agents and ":" in stripped:
            key, _, value = stripped.partition(":")
            agents[-1].setdefault(key.strip(), value.strip())
    gpus = [(a["Name"], a.get("Marketing Name") or None) for a in agents
            if a.get("Device Type") == "GPU" and re.match(_GFX, a.get("Name", ""))]
    return gpus if gpus else Unknown("rocminfo listed no GPU agent")


def _table() -> dict:
    return load_json(f"detectors/data/{TABLE}")


def table_entry(device_id: str | None) -> dict | None:
    """The PCI id table's row for an AMD device id ("744c"), or None."""
    return _table()["devices"].get(device_id or "")


def display_name(entry: dict) -> str:
    """'Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]' -> 'AMD Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M'."""
    match = re.search(r"\[(.+)\]", entry["name"])
    return "AMD " + (match.group(1) if match else entry["name"])


def detect(probe: Probe, found: Found) -> None:
    rocm = _rocm_version(probe, found)
    kfd_seen = _from_kfd(probe, found)
    for record in found.gpus:
        if record.gpu.vendor == "amd" and record.gpu.gfx is None:
            _from_table(record, found)
    unresolved = [r for r in found.gpus if r.gpu.vendor == "amd" and r.gpu.gfx is None]
    no_sysfs = not kfd_seen and not probe.listdir("/sys/bus/pci/devices")
    if rocm is not None and (unresolved or no_sysfs):
        _from_rocm_tools(probe, found, unresolved)
    if any(r.gpu.vendor == "amd" for r in found.gpus):
        _kernel_driver(probe, found)
    override = probe.env("HSA_OVERRIDE_GFX_VERSION")
    if override and any(r.gpu.vendor == "amd" for r in found.gpus):
        found.note(f"HSA_OVERRIDE_GFX_VERSION={override} is set: ROCm will run the GPU as another gfx target")


def _rocm_version(probe: Probe, found: Found) -> str | None:
    problems: list[str] = []
    release = rocm_version_file(probe, problems)
    for line in problems:
        found.note(line)
    if release is None:
        return None
    found.set("rocm", release.version, release.path)
    return release.version


def parse_amdgpu_module_version(text: str | None) -> str | Unknown:
    """``/sys/module/amdgpu/version`` of AMD's DKMS driver ("6.10.5\\n") -> "6.10.5"."""
    from ..drivers import AMDGPU_DRIVER_VERSION  # the driver table's own pattern; read only when the file exists

    first = (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
    if not re.match(AMDGPU_DRIVER_VERSION, first):
        return Unknown(f"{AMDGPU_MODULE_VERSION} holds {first[:40]!r}, not a driver version")
    return first


def _kernel_driver(probe: Probe, found: Found) -> None:
    """AMD's DKMS amdgpu driver has a module version; the distribution's in-tree driver has none (unknown)."""
    text = probe.read_text(AMDGPU_MODULE_VERSION, 256)
    if text is None:
        return
    version = parse_amdgpu_module_version(text)
    if isinstance(version, Unknown):
        found.note(version.reason)
        return
    found.set("amdgpu_driver", version, AMDGPU_MODULE_VERSION)


def _from_kfd(probe: Probe, found: Found) -> bool:
    """Name every GPU node of the KFD topology; True when the topology was readable."""
    nodes = [n for n in probe.listdir(KFD_NODES) if small_int(n, 6) is not None]
    for node in sorted(nodes, key=int):
        path = f"{KFD_NODES}/{node}/properties"
        parsed = parse_kfd_properties(probe.read_text(path, 65536), node)
        if parsed is None:
            continue
        if isinstance(parsed, Unknown):
            found.note(parsed.reason)
            continue
        device = f"{parsed.device_id:04x}" if parsed.device_id is not None else None
        entry = table_entry(device)
        record = found.find_gpu(parsed.slot, vendor="amd") if parsed.slot else None
        if record is None:
            record = found.add_gpu(Gpu(vendor="amd", pci_id=f"1002:{device}" if device else None), path,
                                   slot=parsed.slot)
        found.update_gpu(record, path, gfx=parsed.gfx)
        integrated = entry["integrated"] if entry else (parsed.gfx in _table()["integrated_gfx"]) or None
        source = f"{TABLE} ({device})" if entry else f"{path} (gfx target)"
        found.update_gpu(record, source, name=display_name(entry) if entry else None, integrated=integrated)
    return bool(nodes)


def pci_facts(device_id: str) -> tuple[dict[str, Any], str] | None:
    """Name, gfx target and integrated-or-not of an AMD device id ("744c") from the PCI id table, and that source;
    None when the table does not know it (the registry's ``pci_facts`` hook)."""
    entry = table_entry(device_id.lower())
    if entry is None:
        return None
    return ({"name": display_name(entry), "gfx": entry.get("gfx"), "integrated": entry["integrated"]},
            f"{TABLE} ({device_id.lower()})")


def _from_table(record: GpuRecord, found: Found) -> None:
    device = record.gpu.pci_id.split(":")[1] if record.gpu.pci_id else None
    facts = pci_facts(device) if device else None
    if facts is None:
        found.note(f"AMD GPU {record.gpu.pci_id or '(no PCI id)'}: not in the PCI id table and no KFD topology; "
                   "its gfx target is unknown")
        return
    values, source = facts
    found.update_gpu(record, source, **values)


def _from_rocm_tools(probe: Probe, found: Found, unresolved: list[GpuRecord]) -> None:
    result = probe.run(["rocm_agent_enumerator"])
    targets: list[tuple[str, str | None]] | Unknown
    source = "rocm_agent_enumerator"
    if result.ok:
        listed = parse_agent_enumerator(result.stdout)
        targets = listed if isinstance(listed, Unknown) else [(t, None) for t in listed]
    else:
        targets = Unknown(f"rocm_agent_enumerator: {result.error or f'exit code {result.returncode}'}")
    if isinstance(targets, Unknown):
        found.note(targets.reason)
        result = probe.run(["rocminfo"])
        source = "rocminfo"
        targets = parse_rocminfo(result.stdout) if result.ok else Unknown(
            f"rocminfo: {result.error or f'exit code {result.returncode}'}")
        if isinstance(targets, Unknown):
            found.note(targets.reason)
            return
    if unresolved:  # agents and PCI devices are both in bus order; a count mismatch leaves the rest unknown
        if len(unresolved) != len(targets):
            found.note(f"{source} lists {len(targets)} GPU agents for {len(unresolved)} AMD PCI devices")
        for record, (gfx, name) in zip(unresolved, targets, strict=False):
            found.update_gpu(record, source, gfx=gfx, name=name)
        return
    for gfx, name in targets:
        found.add_gpu(Gpu(vendor="amd", gfx=gfx, name=name,
                          integrated=(gfx in _table()["integrated_gfx"]) or None), source)
