"""AMD's amdgpu kernel driver (DKMS) → the ROCm release it ships with (``data/amdgpu-dkms-rocm.json``).

AMD's ROCm kernel/user-space rule (tested within ±2 ROCm releases) is about the kernel driver, whose
version ``/sys/module/amdgpu/version`` shows only for AMD's DKMS driver ("6.10.5" → ROCm 6.3). The table
is keyed by the driver's major.minor; every row is ``secondary`` (package versions quoted publicly).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .package_data import load_json

TABLE = "data/amdgpu-dkms-rocm.json"
DRIVER_VERSION = r"^\d{1,3}(?:\.\d{1,6}){1,3}$"  # "6.10.5"


class KernelRocm(NamedTuple):
    """The ROCm series an amdgpu DKMS driver belongs to."""

    rocm: str  # "6.3"
    confidence: str  # the table row's: "secondary"
    note: str | None = None


def rocm_for_amdgpu_driver(driver: str | None) -> KernelRocm | None:
    """ROCm series of an amdgpu DKMS driver version ("6.10.5" → 6.3); None when malformed or not in the table."""
    if not isinstance(driver, str) or not re.match(DRIVER_VERSION, driver.strip()):
        return None
    key = ".".join(driver.strip().split(".")[:2])
    for row in load_json(TABLE)["drivers"]:
        if row["driver"] == key:
            return KernelRocm(row["rocm"], row["confidence"], row.get("note"))
    return None
