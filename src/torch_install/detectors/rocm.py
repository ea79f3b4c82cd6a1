"""The ROCm user space's version file (``$ROCM_PATH/.info/version``, else ``/opt/rocm/.info/version``), read in one
place: by AMD's detector, and by container mode for a base image's ROCm (a module of its own, so that container mode
does not load the detector)."""

from __future__ import annotations

import re

from ..probe import Probe
from ..records import Record
from .unknown import Unknown

_VERSION = r"^([0-9]+(?:\.[0-9]+){0,3})(?:[-+~].*)?$"


def parse_rocm_version(text: str | None) -> str | Unknown:
    """``.info/version`` ("6.4.1-120") -> "6.4.1"."""
    if not text or not text.strip():
        return Unknown("ROCm version file is empty")
    match = re.match(_VERSION, text.strip().splitlines()[0].strip())
    return match.group(1) if match else Unknown(f"ROCm version file holds {text.strip()[:40]!r}, not a version")


class RocmRelease(Record):
    """The ROCm release a user space's version file states."""

    version: str  # "6.4.1"
    path: str  # the file: "/opt/rocm/.info/version"
    line: str  # its first line, as written: "6.4.1-120"


def rocm_version_file(probe: Probe, problems: list[str] | None = None) -> RocmRelease | None:
    """The one reader of ROCm's ``.info/version``: ``$ROCM_PATH``'s, else ``/opt/rocm``'s, the first that holds a
    version (``parse_rocm_version``); each that holds none adds a line to ``problems``. Detection and container
    mode's base-image hints both read it."""
    candidates = []
    rocm_path = probe.env("ROCM_PATH")
    if rocm_path:
        candidates.append(rocm_path.rstrip("/") + "/.info/version")
    candidates.append("/opt/rocm/.info/version")
    for path in candidates:
        text = probe.read_text(path, 4096)
        if text is None:
            continue
        version = parse_rocm_version(text)
        if isinstance(version, Unknown):
            if problems is not None:
                problems.append(f"{path}: {version.reason}")
            continue
        return RocmRelease(version, path, text.strip().splitlines()[0])
    return None
