"""The detectors' package data: JSON tables under ``detectors/data``, read once per process."""

from __future__ import annotations

import json
import os
from functools import cache

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any

DATA = os.path.join(os.path.dirname(__file__), "data")


@cache
def load_table(name: str) -> dict[str, Any]:
    """A table by file name (``"amd-pci.json"``); the shipped files are trusted package data."""
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return json.loads(handle.read())
