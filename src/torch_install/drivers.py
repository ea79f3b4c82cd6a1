"""Vendor driver tables, read both ways: NVIDIA's CUDA toolkit → minimum driver (``data/cuda-toolkit-drivers.json``)
and AMD's amdgpu DKMS kernel driver → ROCm release (``data/amdgpu-dkms-rocm.json``).

* ``cuda_for_driver(driver, os_name)``: the newest CUDA (major.minor) a driver supports, i.e. the newest
  toolkit whose minimum driver it meets (detectors, WheelNext properties, fleet labels).
* ``driver_for_toolkit(cuda)``: the minimum Linux driver of a CUDA toolkit release, for a CUDA base image's
  ``X.Y.Z`` (container mode).
* ``toolkit_ga_driver(major, minor, os_name)``: the driver a toolkit's GA release ships with, at or above which
  every feature of that CUDA runs natively (the resolver's "native" preference).
* ``rocm_for_amdgpu_driver(driver)``: the ROCm series an amdgpu DKMS driver belongs to.
* ``nvidia_driver_of_file_version(text)``: the NVIDIA driver behind a Windows driver file version.

Each row carries a confidence (source-file, secondary, inferred) that every answer passes on.
"""

from __future__ import annotations

import re

from .package_data import load_json
from .records import Record
from .versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

CUDA_TABLE = "data/cuda-toolkit-drivers.json"
AMDGPU_TABLE = "data/amdgpu-dkms-rocm.json"
DRIVER_VERSION = r"^[0-9]{1,4}(?:\.[0-9]{1,6}){0,3}$"  # "550.54.15", and "580" in a hand-written profile
AMDGPU_DRIVER_VERSION = r"^[0-9]{1,3}(?:\.[0-9]{1,6}){1,3}$"  # "6.10.5"


def nvidia_driver_of_file_version(file_version: str) -> str | None:
    """The NVIDIA driver version behind a Windows driver file version (Device Manager, ``Win32_VideoController``):
    "31.0.15.5222" -> "552.22" (the last five digits of the third and fourth fields); None when it is not one."""
    parts = file_version.strip().split(".")
    if len(parts) != 4 or not all(p.isdigit() and p.isascii() for p in parts) or len(parts[3]) > 4:
        return None
    third = int(parts[2])
    if third < 10:
        return None
    value = (third - 10) * 10000 + int(parts[3])
    return f"{value // 100}.{value % 100:02d}"


def toolkit_rows() -> list[dict[str, Any]]:
    """The CUDA table's rows: ``cuda``, ``label``, ``linux``, ``windows``, optional ``branch``, ``confidence``,
    ``sources``, optional ``note``."""
    rows: list[dict[str, Any]] = load_json(CUDA_TABLE)["toolkits"]
    return rows


def _minimum(row: dict[str, Any], column: str) -> tuple[str | None, str]:
    """A row's minimum driver for a column, and how it compares ("needs ≥", or "branch" for a branch-only row)."""
    if row.get(column):
        return row[column], "needs ≥"
    return (row["branch"], "branch") if row.get("branch") else (None, "")


def cuda_for_driver(driver: str, os_name: str | None = "linux") -> tuple[str, str] | None:
    """Newest CUDA toolkit (major.minor) whose minimum driver ``driver`` meets, with the table row's label and
    confidence as the reason; None when the driver is older than every toolkit in the table or malformed.

    ``os_name`` picks the Linux or Windows column (WSL drivers are Windows drivers). Rows without a
    driver version for that OS but with a driver branch (CUDA 13.x) compare the branch number.
    """
    if not isinstance(driver, str) or not re.match(DRIVER_VERSION, driver.strip()):
        return None
    have = numeric_key(driver.strip())
    column = "windows" if os_name == "windows" else "linux"
    best: tuple[tuple[int, ...], dict[str, Any], str] | None = None
    for row in toolkit_rows():
        minimum, how = _minimum(row, column)
        if minimum is None or have < numeric_key(minimum):
            continue
        cuda = numeric_key(row["cuda"])
        if best is None or cuda > best[0]:
            best = (cuda, row, f"{row['label']} {how} {minimum}")
    if best is None:
        return None
    row = best[1]
    return ".".join(map(str, best[0][:2])), f"{best[2]} ({column} driver table, {row['confidence']})"


def driver_for_toolkit(cuda: str) -> tuple[str, str, str] | None:
    """(minimum Linux driver, toolkit release, confidence) for a CUDA toolkit version: the exact release
    (12.4.1), else the newest listed release of that minor at or below it, else the minor's GA; None when no
    release of the minor has a Linux driver version in the table (13.4 gives a driver branch only)."""
    want = numeric_key(cuda)
    rows = [r for r in toolkit_rows() if r["linux"] and numeric_key(r["cuda"])[:2] == want[:2]]
    if not rows:
        return None
    rows.sort(key=lambda r: numeric_key(r["cuda"]))
    below = [r for r in rows if numeric_key(r["cuda"]) <= want + (0,) * (3 - len(want))]
    row = below[-1] if below else rows[0]
    return row["linux"], row["cuda"], row["confidence"]


def toolkit_ga_driver(major: int, minor: int, os_name: str) -> tuple[str, str] | None:
    """(driver, confidence) of CUDA ``major.minor``'s GA release on an OS ("linux"/"windows"): its driver version,
    or its driver branch where the release notes give only a branch; None for a toolkit the table lacks."""
    column = "windows" if os_name == "windows" else "linux"
    rows = [r for r in toolkit_rows() if numeric_key(r["cuda"])[:2] == (major, minor)]
    # the release the notes call GA (11.0's is 11.0.2, after an 11.0.1 RC), else the minor's .0 release
    ga = next((r for r in rows if " GA" in r["label"]), None) or next(
        (r for r in rows if numeric_key(r["cuda"]) == (major, minor, 0)), None)
    if ga is None:
        return None
    minimum, _ = _minimum(ga, column)
    return (minimum, ga["confidence"]) if minimum else None


class KernelRocm(Record):
    """The ROCm series an amdgpu DKMS driver belongs to."""

    rocm: str  # "6.3"
    confidence: str  # the table row's: "secondary"
    note: str | None = None


def rocm_for_amdgpu_driver(driver: str | None) -> KernelRocm | None:
    """ROCm series of an amdgpu DKMS driver version ("6.10.5" → 6.3); None when malformed or not in the table.

    AMD's kernel/user-space rule (tested within ±2 ROCm releases) is about the kernel driver, whose version
    ``/sys/module/amdgpu/version`` shows only for AMD's DKMS driver. The table is keyed by the driver's
    major.minor; every row is ``secondary`` (package versions quoted publicly)."""
    if not isinstance(driver, str) or not re.match(AMDGPU_DRIVER_VERSION, driver.strip()):
        return None
    key = ".".join(driver.strip().split(".")[:2])
    for row in load_json(AMDGPU_TABLE)["drivers"]:
        if row["driver"] == key:
            return KernelRocm(row["rocm"], row["confidence"], row.get("note"))
    return None
