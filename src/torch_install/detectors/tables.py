"""The detectors' package data: JSON tables under ``detectors/data``, read once per process."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data")


@cache
def load_table(name: str) -> dict[str, Any]:
    """A table by file name (``"amd-pci.json"``); the shipped files are trusted package data."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))
