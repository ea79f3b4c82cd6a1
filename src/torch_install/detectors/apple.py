"""macOS: Apple silicon GPU (MPS), the real macOS version, and Rosetta translation.

The version comes from ``/System/Library/CoreServices/SystemVersion.plist``: a Python built against an
old SDK reports macOS 11+ as "10.16". Rosetta: ``sysctl -n sysctl.proc_translated`` is 1 for an x86_64
process translated on Apple silicon (absent on Intel Macs). MPS needs Apple silicon, an arm64 Python and
macOS 12.3 or newer.
"""

from __future__ import annotations

import plistlib
import re

from ..machine import Gpu
from ..probe import Probe
from ..versions import numeric_key
from .found import Found
from .unknown import Unknown

SYSTEM_VERSION = "/System/Library/CoreServices/SystemVersion.plist"
MPS_MIN_MACOS = (12, 3)
_CHIP = r"^Apple (M[0-9]+)(?: (Pro|Max|Ultra))?$"


def parse_system_version(data: bytes | None) -> str | Unknown:
    """SystemVersion.plist (XML or binary) -> ProductVersion, e.g. "14.5"."""
    if not data:
        return Unknown(f"{SYSTEM_VERSION} is missing or empty")
    try:
        plist = plistlib.loads(data)
    except Exception as exc:  # plistlib raises several types (InvalidFileException, ExpatError, ValueError …)
        return Unknown(f"{SYSTEM_VERSION} is not a property list ({exc.__class__.__name__})")
    version = plist.get("ProductVersion") if isinstance(plist, dict) else None
    if not isinstance(version, str) or not re.match(r"^[0-9]+(\.[0-9]+){0,2}$", version):
        return Unknown(f"{SYSTEM_VERSION} has no ProductVersion")
    return version


def parse_translated(text: str | None) -> bool | Unknown:
    """``sysctl -n sysctl.proc_translated`` -> True (Rosetta) / False (native)."""
    value = (text or "").strip()
    if value in ("0", "1"):
        return value == "1"
    return Unknown(f"sysctl.proc_translated printed {value[:20]!r}")


def parse_chip(text: str | None) -> tuple[str, str] | Unknown:
    """``machdep.cpu.brand_string`` ("Apple M2 Pro") -> (name, family "m2")."""
    brand = (text or "").strip()
    match = re.match(_CHIP, brand)
    if not match:
        return Unknown(f"CPU brand {brand[:40]!r} is not an Apple silicon chip")
    return brand, match.group(1).lower()


def detect(probe: Probe, found: Found) -> None:
    if probe.host("system") != "Darwin":
        return
    version = _macos_version(probe, found)
    machine = (probe.host("machine") or "").lower()
    translated: bool | Unknown = False
    if machine == "x86_64":
        result = probe.run(["sysctl", "-n", "sysctl.proc_translated"])
        # absent on Intel Macs: sysctl exits non-zero ("unknown oid"), which means "not translated"
        translated = parse_translated(result.stdout) if result.ok else False
        if isinstance(translated, Unknown):
            found.note(translated.reason)
            translated = False
        found.set("rosetta", translated, "sysctl sysctl.proc_translated")
    elif machine == "arm64":
        found.set("rosetta", False, "platform.machine() arm64")
    apple_silicon = machine == "arm64" or translated is True
    if not apple_silicon:
        found.note("Intel Mac: no MPS; the last macOS x86_64 torch release is 2.2.2")
        return
    chip = parse_chip(probe.run(["sysctl", "-n", "machdep.cpu.brand_string"]).stdout)
    name, family = (None, None) if isinstance(chip, Unknown) else chip
    found.add_gpu(Gpu(vendor="apple", name=name, family=family, integrated=True),
                  "sysctl machdep.cpu.brand_string" if name else "platform.machine()")
    if translated is True:
        found.note("Python runs under Rosetta (x86_64 on Apple silicon): no MPS, and torch stops at 2.2.2; "
                   "use an arm64 Python")
    if version and numeric_key(version) < MPS_MIN_MACOS:
        found.note(f"macOS {version} is older than 12.3: MPS is unavailable")


def _macos_version(probe: Probe, found: Found) -> str | None:
    version = parse_system_version(probe.read_bytes(SYSTEM_VERSION, 65536))
    if not isinstance(version, Unknown):
        found.set("os_version", version, SYSTEM_VERSION, override=True)
        return version
    reported = probe.host("mac_ver") or ""
    if reported.startswith("10.16"):
        found.note(f"macOS reports 10.16 (old-SDK compatibility) and {version.reason}: the real version is unknown")
        return None
    if re.match(r"^[0-9]+(\.[0-9]+){0,2}$", reported):
        found.set("os_version", reported, "platform.mac_ver()")
        return reported
    found.note(version.reason)
    return None
