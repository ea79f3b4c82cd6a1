"""Which build a wheel of the default index is, from the packages its METADATA pins: ``nvidia-cuda-runtime-cu12==
12.8.90`` is cu128, ``cuda-toolkit[…]==13.0.2`` is cu130, no NVIDIA pin is cpu.

The METADATA comes from the index's PEP 658 file (``<wheel URL>.metadata``) where it has one, else from the wheel
itself through HTTP range requests: the end of the zip (its central directory), then the one member. Every request
is bounded, and so is the total read (``MAX_TOTAL``); nothing is downloaded whole, nothing is unpacked to disk.
"""

from __future__ import annotations

import io
import re
import zipfile

from ..resolver.variants import variant_of_cuda_pin
from .client import Fetcher, Page
from .pages import IndexUnavailable

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

MAX_TOTAL = 16 << 20  # bytes read from one wheel, central directory included
MAX_METADATA = 1 << 20


def build_of(requires_dist: list[str], wheel_name: str = "") -> str:
    """The variant a wheel with these Requires-Dist lines is: ``cuXY`` from its CUDA pins, else ``cpu``. A pin's
    marker is evaluated for the wheel's own platform and Python (from ``wheel_name``): the default index's Windows
    and aarch64 wheels carry the Linux x86_64 CUDA pins under ``platform_system == "Linux"`` markers."""
    environment = _wheel_environment(wheel_name) if wheel_name else None
    for line in requires_dist:
        requirement, _, marker = line.strip().partition(";")
        found = variant_of_cuda_pin(requirement)
        if found and (environment is None or not marker.strip() or _holds(marker, environment)):
            return found
    return "cpu"


def _holds(marker: str, environment: dict[str, str]) -> bool:
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(Marker(marker.strip()).evaluate(environment))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True  # a marker this cannot decide: the pin counts, as before markers were read


def _wheel_environment(wheel_name: str) -> dict[str, str] | None:
    """The marker environment a wheel installs into: its platform tag's OS and machine, its Python tag's version
    (None when the name is not a wheel's)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    from ..machine import Machine
    from ..markers import environment

    try:
        tags = parse_wheel_filename(wheel_name.rsplit("/", 1)[-1].split("#", 1)[0])[3]
    except InvalidWheelFilename:
        return None
    tag = min(tags, key=str)
    platform, interpreter = tag.platform, tag.interpreter
    os_name = ("windows" if platform.startswith("win") else "macos" if platform.startswith("macosx")
               else "linux" if "linux" in platform else None)
    arch = next((a for a in ("x86_64", "aarch64", "arm64", "amd64") if platform.endswith(a)), None)
    python = f"{interpreter[2]}.{interpreter[3:]}" if interpreter.startswith("cp") and len(interpreter) > 3 else None
    return environment(Machine(os=os_name, arch="x86_64" if arch == "amd64" else arch, python=python))


def requires_dist(metadata: str) -> list[str]:
    lines = metadata.splitlines()
    return [line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("requires-dist:")]


class _RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file through range requests, at most ``MAX_TOTAL`` bytes in all."""

    def __init__(self, fetcher: Fetcher, url: str) -> None:
        super().__init__()
        self.fetcher, self.url, self.pos, self.read_total = fetcher, url, 0, 0
        tail = self._get("-65536")
        found = re.match(r"bytes ([0-9]+)-([0-9]+)/([0-9]+)", tail.content_range or "")
        if tail.status != 206 or not found:
            raise IndexUnavailable(f"{url}: the server does not answer range requests")
        self.size = int(found[3])
        self.cache = (int(found[1]), tail.body)

    def _get(self, byte_range: str) -> Page:
        page = self.fetcher.get(self.url, byte_range=byte_range)
        self.read_total += len(page.body)
        if self.read_total > MAX_TOTAL:
            raise IndexUnavailable(f"{self.url}: reading its METADATA would take over {MAX_TOTAL >> 20} MiB")
        return page

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.size - self.pos)
        if want <= 0:
            return 0
        start, data = self.cache
        if not (start <= self.pos and self.pos + want <= start + len(data)):
            page = self._get(f"{self.pos}-{self.pos + max(want, 65536) - 1}")
            start, data = self.cache = (self.pos, page.body)
        chunk = data[self.pos - start:self.pos - start + want]
        buffer[:len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


def wheel_metadata(fetcher: Fetcher, wheel_url: str) -> str:
    """The METADATA of the wheel at ``wheel_url`` (its PEP 658 file, else the member read through range requests);
    IndexUnavailable when it cannot be read."""
    try:
        page = fetcher.get(wheel_url + ".metadata")
        if len(page.body) <= MAX_METADATA:
            return page.body.decode("utf-8", errors="replace")
    except IndexUnavailable as exc:
        if exc.status not in (403, 404):
            raise
    try:
        with zipfile.ZipFile(_RangeFile(fetcher, wheel_url)) as wheel:
            names = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(names) != 1 or wheel.getinfo(names[0]).file_size > MAX_METADATA:
                raise IndexUnavailable(f"{wheel_url}: no single .dist-info/METADATA of a sensible size")
            return wheel.read(names[0]).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise IndexUnavailable(f"{wheel_url}: not a readable wheel ({exc})") from None


def wheel_build(fetcher: Fetcher, wheel_url: str) -> str:
    """The build (``cu130``, ``cpu``) of the wheel at ``wheel_url``; IndexUnavailable when it cannot be read."""
    return build_of(requires_dist(wheel_metadata(fetcher, wheel_url)), wheel_url)
