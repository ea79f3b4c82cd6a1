"""Windows: display adapters (present devices only), NVIDIA driver version from the display driver's file
version, and the OS build.

Adapters come from PowerShell ``Get-CimInstance Win32_VideoController`` as JSON, or ``pnputil
/enum-devices /class Display`` when that fails. The NVIDIA display driver file version ``A.B.(10+x).yyyy``
is driver ``(x*10000 + yyyy) / 100``: 31.0.15.5222 -> 552.22.
"""

from __future__ import annotations

import json
import re

from .. import vendors
from ..drivers import nvidia_driver_of_file_version
from ..machine import Gpu
from ..probe import Probe
from ..records import Record
from .found import Found
from .names import lookup_gpu_name
from .pci import pci_facts
from .unknown import Unknown

CIM_COMMAND = ["powershell.exe", "-NoProfile", "-NonInteractive", "-Command",
               "Get-CimInstance Win32_VideoController | "
               "Select-Object Name,PNPDeviceID,DriverVersion,Status,ConfigManagerErrorCode | ConvertTo-Json"]
PNPUTIL_COMMAND = ["pnputil", "/enum-devices", "/class", "Display"]
NOT_PRESENT = 45  # CM_PROB_PHANTOM: the device is not connected
_PCI_ID = r"(?i)^PCI\\VEN_([0-9A-F]{4})&DEV_([0-9A-F]{4})"


class Adapter(Record):
    """One present PCI display adapter."""

    name: str
    vendor_id: str  # "10de"
    device_id: str  # "2504"
    driver_version: str | None = None
    working: bool = True  # Status OK / Started, no Device Manager problem code


def parse_cim_adapters(text: str | None) -> list[Adapter] | Unknown:
    """Win32_VideoController rows as ConvertTo-Json prints them (one object, or a list of them)."""
    if not text or not text.strip():
        return Unknown("Win32_VideoController query printed nothing")
    try:
        data = json.loads(text.lstrip("\ufeff"))
    except ValueError:
        return Unknown("Win32_VideoController output is not JSON")
    rows = data if isinstance(data, list) else [data]
    adapters = []
    for row in rows:
        if not isinstance(row, dict):
            return Unknown("Win32_VideoController output is not a list of objects")
        code = row.get("ConfigManagerErrorCode")
        if code == NOT_PRESENT:
            continue
        adapter = _adapter(row.get("Name"), row.get("PNPDeviceID"), row.get("DriverVersion"),
                           row.get("Status") in ("OK", None) and code in (0, None))
        if adapter:
            adapters.append(adapter)
    return adapters


def parse_pnputil(text: str | None) -> list[Adapter] | Unknown:
    """``pnputil /enum-devices /class Display`` blocks (Instance ID, Device Description, Status …)."""
    if not text or "Instance ID" not in text:
        return Unknown("pnputil listed no display device")
    adapters = []
    for block in re.split(r"\r?\n\s*\r?\n", text):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        status = fields.get("Status")
        if status == "Disconnected":
            continue
        adapter = _adapter(fields.get("Device Description"), fields.get("Instance ID"), None,
                           status in ("Started", None))
        if adapter:
            adapters.append(adapter)
    return adapters


def _adapter(name: object, pnp_id: object, driver_version: object, working: bool) -> Adapter | None:
    if not isinstance(pnp_id, str):
        return None
    match = re.match(_PCI_ID, pnp_id)
    if not match:
        return None  # software adapters: Microsoft Basic Display, remote display, virtual displays
    return Adapter(name if isinstance(name, str) else "", match.group(1).lower(), match.group(2).lower(),
                   driver_version if isinstance(driver_version, str) else None, working)


def nvidia_driver_from_file_version(file_version: str | None) -> str | Unknown:
    """NVIDIA display driver file version -> driver version: "31.0.15.5222" -> "552.22"."""
    driver = nvidia_driver_of_file_version(file_version or "")
    if driver is None:
        return Unknown(f"driver file version {str(file_version)[:40]!r} is not an NVIDIA A.B.C.D file version")
    return driver


def detect(probe: Probe, found: Found) -> None:
    if probe.host("system") != "Windows":
        return
    build = probe.host("win_ver")
    if build and re.match(r"^[0-9]+(\.[0-9]+){1,3}$", build):
        found.set("os_version", build, "platform.version()")
    adapters, source = _adapters(probe, found)
    known_vendors = {r.gpu.vendor for r in found.gpus}
    for adapter in adapters:
        row = vendors.of_pci_id(adapter.vendor_id)
        if row is None:
            continue
        vendor = row.name
        if vendor == "nvidia" and adapter.driver_version:
            driver = nvidia_driver_from_file_version(adapter.driver_version)
            if isinstance(driver, Unknown):
                found.note(f"{adapter.name}: {driver.reason}")
            else:
                found.set("nvidia_driver", driver, f"{source} DriverVersion {adapter.driver_version}")
                from .nvidia import cuda_from_driver  # the NVIDIA detector ran before the driver was known

                cuda_from_driver(found)
        if vendor in known_vendors:
            continue  # a vendor detector (e.g. nvidia-smi) already listed these GPUs
        _add(found, adapter, vendor, source)


def _adapters(probe: Probe, found: Found) -> tuple[list[Adapter], str]:
    result = probe.run(CIM_COMMAND, timeout=10)
    parsed = parse_cim_adapters(result.stdout) if result.ok else Unknown(
        f"Win32_VideoController query: {result.error or f'exit code {result.returncode}'}")
    if not isinstance(parsed, Unknown):
        return parsed, "Win32_VideoController"
    found.note(parsed.reason)
    result = probe.run(PNPUTIL_COMMAND)
    listed = parse_pnputil(result.stdout) if result.ok else Unknown(
        f"pnputil: {result.error or f'exit code {result.returncode}'}")
    if isinstance(listed, Unknown):
        found.note(listed.reason)
        return [], ""
    return listed, "pnputil"


def _add(found: Found, adapter: Adapter, vendor: str, source: str) -> None:
    named = lookup_gpu_name(adapter.name) if adapter.name else None
    gpu = Gpu(vendor=vendor, name=adapter.name or None, pci_id=f"{adapter.vendor_id}:{adapter.device_id}",
              visible=adapter.working)
    record = found.add_gpu(gpu, source)
    if not adapter.working:
        found.note(f"{adapter.name or gpu.pci_id}: Windows reports a device problem; it is not usable")
    row = vendors.vendor(vendor)
    facts = pci_facts(row, adapter.device_id) if row is not None else None
    if facts is not None:  # what the adapter reports itself (its name) stays
        values, table = facts
        found.update_gpu(record, table, **values)
    if named is not None and named.vendor == vendor:
        found.update_gpu(record, f"gpu-names.json ({named.name})", compute_capability=named.compute_capability,
                         gfx=named.gfx, family=named.family, integrated=named.integrated)
