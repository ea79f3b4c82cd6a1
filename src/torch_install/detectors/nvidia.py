"""NVIDIA detector: driver version, GPU models, compute capability, newest CUDA the driver supports.

Cheapest source first, and a command only when the files cannot answer:

1. driver: ``/sys/module/nvidia/version``, then ``/proc/driver/nvidia/version`` (proprietary and open-module
   wordings); GPU models: ``/proc/driver/nvidia/gpus/<bus id>/information``; compute capability: the shipped
   PCI device id → chip → compute capability table (``data/nvidia-pci.json``).
2. NVML through ctypes (live host only, never for a captured tree; its answer is kept in ``_host.json``).
3. ``nvidia-smi --query-gpu`` with a timeout (also ``/usr/lib/wsl/lib/nvidia-smi`` on WSL and the usual
   Windows locations), only when a driver version or a compute capability is still missing, and only
   where an NVIDIA GPU was seen on PCI, on WSL, or on Windows.

The newest CUDA the driver supports comes from NVML when it answered, else from the driver version and
the toolkit → minimum-driver table (``drivers``, ``data/cuda-toolkit-drivers.json``).
"""

from __future__ import annotations

import re

from ..drivers import cuda_for_driver, toolkit_rows
from ..machine import Gpu
from ..package_data import load_json
from ..probe import Probe
from ..versions import numeric_key
from .found import Found, GpuRecord
from .jetson import jetson_module

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .. import vendors

MODULE_VERSION = "/sys/module/nvidia/version"
PROC_VERSION = "/proc/driver/nvidia/version"
PROC_GPUS = "/proc/driver/nvidia/gpus"
SMI_FIELDS = ("index", "name", "pci.bus_id", "pci.device_id", "driver_version", "uuid", "compute_cap")
WSL_SMI = "/usr/lib/wsl/lib/nvidia-smi"

_DRIVER = r"^[0-9]{2,4}\.[0-9]{1,3}(?:\.[0-9]{1,3})?$"
_PROC_VERSION = r"^NVRM version:.*?Kernel Module(?: for \S+)?\s{2,}([0-9]{2,4}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)\s"
_SMI_DRIVER = r"(?:Driver|KMD) Version:\s*([0-9]{2,4}\.[0-9]{1,3}(?:\.[0-9]{1,3})?)"
_SMI_CUDA = r"CUDA (?:UMD )?Version:\s*([0-9]{1,2}\.[0-9]{1,2})"
_CC = r"^[0-9]{1,2}\.[0-9]$"
_CHIP_CODE = r"G[A-Z]{1,2}[0-9]{2,3}\w*"  # GA102, GK104GLM: pci.ids names some devices by their chip
_MISSING = ("", "N/A", "[N/A]", "ERR!", "[ERR!]", "[Unknown Error]", "Unknown Error")


# ---- data tables ------------------------------------------------------------------------------------------
def _pci_table() -> dict[str, Any]:
    table: dict[str, Any] = load_json("detectors/data/nvidia-pci.json")
    return table


def pci_lookup(device_id: str) -> tuple[str, str | None, str | None] | None:
    """PCI device id ('2330') → (chip, product name or None, compute capability or None); None if unknown."""
    table = _pci_table()
    entry = table["devices"].get(device_id.lower())
    if entry is None:
        return None
    chip = entry[0]
    return chip, (entry[1] if len(entry) > 1 else None), table["chips"].get(chip)


def pci_names(row: vendors.Vendor) -> list[tuple[str, dict[str, object]]]:
    """The GPU names the PCI id table gives, with their compute capability (the registry's ``pci_names`` hook):
    the product names of the devices of a known chip, but a chip's code name ("GP104M") is no product's."""
    table = _pci_table()
    return [(product, {row.arch_field: table["chips"][chip]})
            for chip, product in (entry for entry in table["devices"].values() if len(entry) == 2)
            if table["chips"].get(chip) and not re.fullmatch(_CHIP_CODE, product)]


# ---- parsers: text in, value or None out, never an exception ------------------------------------------------
def parse_driver_version(text: str | None) -> str | None:
    """``/sys/module/nvidia/version`` content ('550.54.15\\n') → '550.54.15'."""
    value = (text or "").strip()
    return value if re.match(_DRIVER, value) else None


def parse_proc_version(text: str | None) -> str | None:
    """``/proc/driver/nvidia/version`` → driver version, for the proprietary ('NVIDIA UNIX x86_64 Kernel
    Module  550.54.15  …') and open ('NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  …') wordings."""
    for line in (text or "").splitlines()[:3]:
        match = re.match(_PROC_VERSION, line)
        if match:
            return match.group(1)
    return None


def parse_gpu_information(text: str | None) -> dict[str, str]:
    """``/proc/driver/nvidia/gpus/<bus>/information`` 'Key:  value' lines → {key: value} (empty if none)."""
    info: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and value.strip() and len(key) < 40:
            info[key.strip()] = value.strip()
    return info


def _smi_value(value: str) -> str | None:
    value = value.strip()
    return None if value in _MISSING else value


def parse_smi_query(stdout: str | None, fields: tuple[str, ...] = SMI_FIELDS
                    ) -> tuple[list[dict[str, str | None]], list[str]]:
    """``nvidia-smi --query-gpu=<fields> --format=csv,noheader`` → (one dict per GPU, problems).

    Lines with the wrong number of fields are reported, not guessed at; 'N/A' and 'ERR!' become None.
    """
    rows: list[dict[str, str | None]] = []
    problems: list[str] = []
    for line in (stdout or "").splitlines():
        if not line.strip():
            continue
        parts = line.split(",")
        if len(parts) != len(fields):
            problems.append(f"unexpected line {line.strip()[:80]!r}")
            continue
        row = {name: _smi_value(part) for name, part in zip(fields, parts, strict=True)}
        if any(part.strip() in ("ERR!", "[ERR!]") for part in parts):
            problems.append(f"GPU {row.get('index') or '?'} reports ERR! (the GPU may have fallen off the bus)")
        rows.append(row)
    return rows, problems


def parse_smi_header(stdout: str | None) -> tuple[str | None, str | None]:
    """Plain ``nvidia-smi`` banner → (driver version, CUDA version); knows 'Driver Version'/'CUDA Version'
    and the newer 'KMD Version'/'CUDA UMD Version' labels."""
    text = stdout or ""
    driver, cuda = re.search(_SMI_DRIVER, text), re.search(_SMI_CUDA, text)
    return (driver.group(1) if driver else None), (cuda.group(1) if cuda else None)


def smi_failure(stdout: str, stderr: str) -> str | None:
    """A known nvidia-smi failure message in its output, as one line, or None."""
    text = f"{stdout}\n{stderr}"
    for needle in ("Driver/library version mismatch", "No devices were found", "couldn't communicate with the NVIDIA "
                   "driver", "Failed to initialize NVML", "is not a valid field to query"):
        if needle in text:
            line = next(x for x in text.splitlines() if needle in x)
            return line.strip()[:160]
    return None


def parse_pci_device_id(value: str | None) -> str | None:
    """nvidia-smi ``pci.device_id`` ('0x233010DE') → '2330'."""
    match = re.fullmatch(r"0x([0-9a-fA-F]{4})10[dD][eE]", (value or "").strip())
    return match.group(1).lower() if match else None


# ---- detection ---------------------------------------------------------------------------------------------
def detect(probe: Probe, found: Found) -> None:
    records = [r for r in found.gpus if r.gpu.vendor == "nvidia"]
    _driver_from_files(probe, found)
    _gpus_from_procfs(probe, found, records)
    records = [r for r in found.gpus if r.gpu.vendor == "nvidia"]
    for record in records:
        _name_and_cc_from_table(found, record)
    if not records and found.values.get("jetson"):
        _jetson_gpu(probe, found)
    records = [r for r in found.gpus if r.gpu.vendor == "nvidia"]
    if records and found.values.get("container") and not probe.exists(PROC_GPUS):
        found.note("container: the NVIDIA GPUs and driver seen through /sys are the host's; /proc/driver/nvidia is "
                   "absent, so no GPU is passed into this container (docker run --gpus …)")
    if _needs_runtime(found, records) and not _from_nvml(probe, found):
        _from_smi(probe, found)
    cuda_from_driver(found)


def _driver_from_files(probe: Probe, found: Found) -> None:
    text = probe.read_text(MODULE_VERSION, 256)
    driver = parse_driver_version(text)
    if driver:
        found.set("nvidia_driver", driver, MODULE_VERSION)
        return
    if text is not None:
        found.note(f"{MODULE_VERSION}: not a driver version ({text.strip()[:40]!r})")
    proc = probe.read_text(PROC_VERSION, 4096)
    driver = parse_proc_version(proc)
    if driver:
        found.set("nvidia_driver", driver, PROC_VERSION)
    elif proc is not None:
        found.note(f"{PROC_VERSION}: driver version not found in it")


def _gpus_from_procfs(probe: Probe, found: Found, records: list[GpuRecord]) -> None:
    for bus_id in probe.listdir(PROC_GPUS):
        path = f"{PROC_GPUS}/{bus_id}/information"
        info = parse_gpu_information(probe.read_text(path, 16 * 1024))
        model = info.get("Model")
        if not model:
            continue
        record = found.find_gpu(bus_id, vendor="nvidia")
        if record is None:
            record = found.add_gpu(Gpu(vendor="nvidia", name=model), path, slot=bus_id)
        else:
            found.update_gpu(record, path, name=model)
        record.uuid = record.uuid or info.get("GPU UUID")


def pci_facts(device_id: str) -> tuple[dict[str, Any], str] | None:
    """Name and compute capability of an NVIDIA device id ("2684") from the PCI id table, and that source; None
    when the table does not know it (the registry's ``pci_facts`` hook)."""
    hit = pci_lookup(device_id)
    if hit is None:
        return None
    chip, product, cc = hit
    return ({"name": f"NVIDIA {product}" if product else f"NVIDIA {chip}", "compute_capability": cc},
            f"PCI id table: 10de:{device_id.lower()} is {chip}" + (f" (sm_{cc.replace('.', '')})" if cc else ""))


def _name_and_cc_from_table(found: Found, record: GpuRecord) -> None:
    pci_id = record.gpu.pci_id or ""
    if not pci_id.startswith("10de:"):
        return
    facts = pci_facts(pci_id[5:])
    if facts is None:
        if record.gpu.compute_capability is None:
            found.note(f"NVIDIA device {pci_id} is not in the shipped PCI table: compute capability unknown")
        return
    values, source = facts
    found.update_gpu(record, source, **values)


def _jetson_gpu(probe: Probe, found: Found) -> None:
    model = (probe.read_text("/proc/device-tree/model", 256) or "").replace("\x00", "").strip()
    module = jetson_module(model)
    if module:
        found.add_gpu(Gpu(vendor="nvidia", name=module["name"], compute_capability=module["compute_capability"],
                          family=module["family"], integrated=True), f"/proc/device-tree/model {model[:60]!r}")
        return
    found.note(f"Jetson board {model[:60]!r} not recognised: GPU compute capability unknown")


def _needs_runtime(found: Found, records: list[GpuRecord]) -> bool:
    """A library or command is asked only when files left a gap, and only where an NVIDIA GPU can be."""
    missing = "nvidia_driver" not in found.values or any(r.gpu.compute_capability is None for r in records)
    if not missing:
        return False
    return bool(records) or bool(found.values.get("wsl")) or found.values.get("os") == "windows"


def cuda_from_driver(found: Found) -> None:
    """The newest CUDA the detected driver supports, from the driver table (unless NVML or a hint said it)."""
    driver = found.values.get("nvidia_driver")
    if not driver or "cuda_driver_api" in found.values:
        return
    if found.values.get("jetson"):
        found.note(f"Jetson: driver {driver} follows the L4T release, not the desktop driver table; "
                   "the CUDA version it supports is left unknown")
        return
    os_name = "windows" if found.values.get("wsl") or found.values.get("os") == "windows" else "linux"
    result = cuda_for_driver(driver, os_name)
    if result is None:
        found.note(f"NVIDIA driver {driver} is older than every CUDA toolkit this tool knows")
        return
    found.set("cuda_driver_api", result[0], f"driver {driver}: {result[1]}")


# ---- NVML (ctypes) -----------------------------------------------------------------------------------------
def _from_nvml(probe: Probe, found: Found) -> bool:
    """Apply NVML's answer (queried on the live host, replayed from _host.json in a capture); True if complete."""
    if probe.is_host and probe.env("TORCH_INSTALL_NO_NVML"):
        return False
    answer = probe.library("nvml", lambda: query_nvml(found.values.get("os"), bool(found.values.get("wsl"))))
    if not isinstance(answer, dict):
        return False
    if answer.get("error"):
        found.note(f"NVML: {answer['error']}")
        return False
    driver = answer.get("driver")
    if isinstance(driver, str) and re.match(_DRIVER, driver):
        found.set("nvidia_driver", driver, "NVML nvmlSystemGetDriverVersion")
    cuda = answer.get("cuda")
    if isinstance(cuda, int) and 1000 <= cuda <= 99990:
        found.set("cuda_driver_api", f"{cuda // 1000}.{cuda % 1000 // 10}", "NVML nvmlSystemGetCudaDriverVersion")
    for device in answer.get("gpus") or []:
        if isinstance(device, dict):
            _apply_runtime_gpu(found, "NVML", device.get("name"), device.get("bus_id"), device.get("cc"), None)
    return "nvidia_driver" in found.values and all(
        r.gpu.compute_capability for r in found.gpus if r.gpu.vendor == "nvidia")


def query_nvml(os_name: str | None, wsl: bool) -> dict[str, Any]:
    """Ask NVML (libnvidia-ml / nvml.dll) for driver, CUDA version and each GPU's name, bus id and compute
    capability. Returns {'error': …} when the library is absent or fails; never raises."""
    import ctypes

    names = ["nvml.dll"] if os_name == "windows" else ["libnvidia-ml.so.1"]
    if wsl:
        names.insert(0, "/usr/lib/wsl/lib/libnvidia-ml.so.1")
    lib = None
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None:
        return {"error": "library not found"}
    try:
        status = lib.nvmlInit_v2()
        if status != 0:
            reason = {18: "Driver/library version mismatch", 9: "driver not loaded", 12: "library not found"}
            return {"error": f"nvmlInit failed ({reason.get(status, f'error {status}')})"}
        try:
            out: dict[str, Any] = {"gpus": []}
            buffer = ctypes.create_string_buffer(96)
            if lib.nvmlSystemGetDriverVersion(buffer, 96) == 0:
                out["driver"] = buffer.value.decode("ascii", "replace")
            version = ctypes.c_int()
            if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(version)) == 0:
                out["cuda"] = version.value
            count = ctypes.c_uint()
            if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0:
                for index in range(min(count.value, 64)):
                    out["gpus"].append(_nvml_device(lib, index))
            return out
        finally:
            lib.nvmlShutdown()
    except (AttributeError, OSError) as exc:
        return {"error": f"call failed ({exc})"}


def _nvml_device(lib: Any, index: int) -> dict[str, Any]:
    import ctypes

    class PciInfo(ctypes.Structure):  # nvmlPciInfo_t: busIdLegacy[16], domain, bus, device, pciDeviceId, …
        _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                    ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                    ("busId", ctypes.c_char * 32)]

    handle = ctypes.c_void_p()
    if lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != 0:
        return {}
    device: dict[str, Any] = {}
    name = ctypes.create_string_buffer(96)
    if lib.nvmlDeviceGetName(handle, name, 96) == 0:
        device["name"] = name.value.decode("utf-8", "replace")
    major, minor = ctypes.c_int(), ctypes.c_int()
    if lib.nvmlDeviceGetCudaComputeCapability(handle, ctypes.byref(major), ctypes.byref(minor)) == 0:
        device["cc"] = f"{major.value}.{minor.value}"
    pci = PciInfo()
    if lib.nvmlDeviceGetPciInfo_v3(handle, ctypes.byref(pci)) == 0:
        device["bus_id"] = pci.busId.decode("ascii", "replace")
    return device


# ---- nvidia-smi --------------------------------------------------------------------------------------------
def _smi_candidates(probe: Probe, found: Found) -> list[str]:
    candidates = ["nvidia-smi"]
    if found.values.get("wsl"):
        candidates.append(WSL_SMI)
    if found.values.get("os") == "windows":
        for var, rest in (("SystemRoot", "System32\\nvidia-smi.exe"),
                          ("ProgramFiles", "NVIDIA Corporation\\NVSMI\\nvidia-smi.exe")):
            base = probe.env(var)
            if base:
                candidates.append(f"{base.rstrip(chr(92))}\\{rest}")
    return candidates


def _from_smi(probe: Probe, found: Found) -> None:
    for program in _smi_candidates(probe, found):
        fields: tuple[str, ...] = SMI_FIELDS
        result = probe.run([program, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"])
        if result.error == "not found":
            continue
        failure = result.error or smi_failure(result.stdout, result.stderr)
        if failure and "is not a valid field" in failure:  # drivers older than the compute_cap field
            fields = SMI_FIELDS[:-1]
            result = probe.run([program, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"])
            failure = result.error or smi_failure(result.stdout, result.stderr)
        if failure or not result.ok:
            hint = " (driver upgraded without a reboot?)" if failure and "mismatch" in failure else ""
            found.note(f"nvidia-smi: {failure or f'exit status {result.returncode}'}{hint}")
            return
        rows, problems = parse_smi_query(result.stdout, fields)
        for problem in problems:
            found.note(f"nvidia-smi: {problem}")
        for row in rows:
            driver = row.get("driver_version")
            if driver and re.match(_DRIVER, driver):
                found.set("nvidia_driver", driver, "nvidia-smi --query-gpu=driver_version")
            record = _apply_runtime_gpu(found, "nvidia-smi", row.get("name"), row.get("pci.bus_id"),
                                        row.get("compute_cap"), parse_pci_device_id(row.get("pci.device_id")))
            record.uuid = record.uuid or row.get("uuid")
        if rows and _table_may_fall_short(found):
            _cuda_from_smi_banner(probe, found, program)
        return
    found.note("nvidia-smi: not found")


def _table_may_fall_short(found: Found) -> bool:
    """Whether the driver table may under-report this driver's CUDA version: a Windows driver (on Windows or
    WSL: the table's Windows column is sparse), or a driver the table cannot place below its newest toolkit."""
    driver = found.values.get("nvidia_driver")
    if found.values.get("wsl") or found.values.get("os") == "windows" or not driver:
        return True
    result = cuda_for_driver(driver, "linux")
    newest = max((row["cuda"] for row in toolkit_rows()), key=numeric_key)
    return result is None or numeric_key(result[0]) >= numeric_key(newest)[:2]


def _cuda_from_smi_banner(probe: Probe, found: Found, program: str) -> None:
    """The driver's own CUDA version from the plain ``nvidia-smi`` banner ('CUDA Version' / 'CUDA UMD Version'):
    more exact than the driver table (WSL 566.36 reports 12.7, a version no toolkit row has). Only asked on
    this path, where nvidia-smi already had to run."""
    result = probe.run([program])
    driver, cuda = parse_smi_header(result.stdout if result.ok else None)
    if cuda and (driver is None or driver == found.values.get("nvidia_driver")):
        found.set("cuda_driver_api", cuda, f"{program} banner (CUDA version reported by driver {driver or '?'})")


def _apply_runtime_gpu(found: Found, source: str, name: Any, bus_id: Any, cc: Any,
                       device_id: str | None) -> GpuRecord:
    """Merge one GPU reported by NVML or nvidia-smi: its compute capability is the authority."""
    name = name if isinstance(name, str) and name.strip() else None
    cc = cc if isinstance(cc, str) and re.match(_CC, cc) else None
    slot = bus_id if isinstance(bus_id, str) and bus_id.strip() else None
    record = found.find_gpu(slot, vendor="nvidia")
    if record is None:
        pci_id = f"10de:{device_id}" if device_id else None
        record = found.add_gpu(Gpu(vendor="nvidia", name=name, pci_id=pci_id), source, slot=slot)
        _name_and_cc_from_table(found, record)
    else:
        found.update_gpu(record, source, name=name)
    if cc:
        found.update_gpu(record, f"{source} compute_cap", override=True, compute_capability=cc)
    return record
