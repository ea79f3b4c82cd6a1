"""NVIDIA's CUDA toolkit → minimum driver table (``data/cuda-toolkit-drivers.json``), read both ways.

* ``cuda_for_driver(driver, os_name)``: the newest CUDA (major.minor) a driver supports, i.e. the newest
  toolkit whose minimum driver it meets (detectors, WheelNext properties, fleet labels).
* ``driver_for_toolkit(cuda)``: the minimum Linux driver of a CUDA toolkit release, for a CUDA base image's
  ``X.Y.Z`` (container mode).

Each row carries a confidence (source-file, secondary, inferred) that both answers pass on.
"""

from __future__ import annotations

import re

from .package_data import load_json
from .versions import numeric_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any

TABLE = "data/cuda-toolkit-drivers.json"
DRIVER_VERSION = r"^\d{1,4}(?:\.\d{1,6}){0,3}$"  # "550.54.15", and "580" in a hand-written profile


def toolkit_rows() -> list[dict[str, Any]]:
    """The table's rows: ``cuda``, ``label``, ``linux``, ``windows``, optional ``branch``, ``confidence``,
    ``sources``, optional ``note``."""
    return load_json(TABLE)["toolkits"]


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
        minimum, how = row.get(column), "needs ≥"
        if minimum is None and row.get("branch"):
            minimum, how = row["branch"], "branch"
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
