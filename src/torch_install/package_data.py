"""The JSON tables shipped inside the package, read once per process.

Where they live: ``data/`` (tables several front ends share: CUDA toolkit drivers, WheelNext provider
rules), ``detectors/data/`` (PCI id and GPU name tables) and ``resolver/data/`` (the compatibility
matrix, rebuilt by ``scripts/build_matrix.py``). Every caller reads them through ``load_json``.
"""

from __future__ import annotations

import json
import os
from functools import cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

PACKAGE_DIR = os.path.dirname(__file__)


@cache
def load_json(path: str) -> Any:
    """A shipped table by its path inside the package (``"detectors/data/amd-pci.json"``), or by an absolute path
    (a vendor registered at run time may keep its table outside the package).

    The files are trusted package data: not validated, and the same (shared, not to be mutated) object is
    returned on every call."""
    where = path if os.path.isabs(path) else os.path.join(PACKAGE_DIR, *path.split("/"))
    with open(where, encoding="utf-8") as handle:
        return json.loads(handle.read())
