"""Detector: host (not yet implemented)."""

from __future__ import annotations

from ..probe import Probe
from . import Found


def detect(probe: Probe, found: Found) -> None:
    return None
