"""The Jetson module table (``data/jetson.json``): a module by the name its device tree gives, or by the compute
capability that only its integrated GPU has."""

from __future__ import annotations

import re

from ..package_data import load_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def _jetson_modules() -> list[dict[str, Any]]:
    modules: list[dict[str, Any]] = load_json("detectors/data/jetson.json")["modules"]
    return modules


def jetson_module(text: str | None) -> dict[str, Any] | None:
    """The Jetson module (``data/jetson.json`` row: word, name, compute capability, family) a board model names
    ("NVIDIA Jetson AGX Orin Developer Kit"), or None."""
    lowered = (text or "").lower()
    return next((m for m in _jetson_modules() if re.search(rf"\b{m['word'].lower()}\b", lowered)), None)


def jetson_of_capability(compute_capability: str | None) -> dict[str, Any] | None:
    """The Jetson module whose integrated GPU has this compute capability (only Jetsons have those), or None."""
    return next((m for m in _jetson_modules() if m["compute_capability"] == compute_capability), None)
