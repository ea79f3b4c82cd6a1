"""Installed distributions, read from their metadata directories without importing anything: the one reader of
dist-info ``METADATA``, ``WHEEL``, ``INSTALLER``, ``RECORD`` and ``direct_url.json`` (PEP 610: the URL a package
installed from a URL came from; an install from an index or a find-links page has none), and of egg-info
``PKG-INFO``, shared by the doctor, the install guard and install.

Every file of an inspected environment is read as untrusted: capped in size, regular files only (a FIFO or a
device is never waited on), and what cannot be read becomes one of the distribution's ``problems``, never an
exception.
"""

from __future__ import annotations

import os
import re

from ..records import Record
from ..versions import small_int

MAX_METADATA = 1024 * 1024  # METADATA, WHEEL, version.py: real ones are far smaller; a bigger one is not read
MAX_RECORD = 16 * 1024 * 1024
MAX_RECORD_LINE = 128 * 1024  # the csv module's field limit; no path of a real RECORD comes close
MAX_INSTALLER = 256
MAX_EGG_LINK = 4096
MAX_DIRECT_URL = 64 * 1024  # one URL and its hashes
# "torch-2.8.0+cu128.dist-info", "torch-2.8.0-py3.11.egg-info"
_DIST_DIR = r"^(?P<name>[^-]+)-(?P<version>[^-]+?)(?:-py[0-9][^-]*)?\.(?P<kind>dist-info|egg-info)$"


class Dist(Record):
    """One installed distribution's metadata directory (or ``.egg-link`` file)."""

    name: str  # normalized project name
    version: str  # METADATA Version (falls back to the directory name)
    path: str  # the .dist-info / .egg-info directory, or the .egg-link file
    location: str  # the sys.path entry holding it
    kind: str = "dist-info"  # dist-info | egg-info | egg-link
    installer: str | None = None
    requires: tuple[str, ...] = ()  # Requires-Dist lines, as written
    requires_python: str | None = None
    wheel_tags: tuple[str, ...] = ()
    wheel_build: str | None = None
    direct_url: str | None = None  # direct_url.json's "url": where a package installed from a URL came from
    problems: tuple[str, ...] = ()  # what could not be read
    tops: tuple[str, ...] = ()  # with ``footprint``: the top-level entries its RECORD lists (torch, its dist-info)
    outside: tuple[str, ...] = ()  # with ``footprint``: RECORD paths outside the location ("../../../bin/torchrun")

    @property
    def local_label(self) -> str | None:
        return self.version.partition("+")[2] or None

    @property
    def public_version(self) -> str:
        return self.version.partition("+")[0]

    @property
    def directory_name(self) -> str:
        """``torch-2.8.0.dist-info``."""
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]

    def record_size(self) -> int | None:
        """Bytes of the files RECORD lists (sizes as RECORD states them), or None without a RECORD."""
        if self.kind != "dist-info":
            return None
        text, _ = read_file(os.path.join(self.path, "RECORD"), MAX_RECORD)
        if text is None:
            return None
        return sum(small_int(line.rsplit(",", 1)[-1].strip()) or 0 for line in text.splitlines())


def read_file(path: str, limit: int = MAX_METADATA) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, why)`` with why one of "missing", "not a regular file" (a FIFO or device
    is never waited on), "larger than N bytes" or "unreadable (reason)": a file of an inspected environment
    is never trusted to be small, regular or readable."""
    from ..probe import read_regular

    try:
        data = read_regular(path, limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror.lower()})" if exc.strerror else "not a regular file"
    except ValueError:  # a NUL in the path
        return None, "missing"
    if len(data) > limit:
        return None, f"larger than {limit} bytes, not read"
    return data.decode("utf-8", "replace"), None


def record_paths(dist_info: str) -> list[str] | None:
    """The paths a ``.dist-info`` directory's RECORD lists (None: no readable RECORD); a line longer than csv's
    field limit is skipped."""
    import csv

    text, _ = read_file(os.path.join(dist_info, "RECORD"), MAX_RECORD)
    if text is None:
        return None
    lines = (line for line in text.splitlines() if len(line) < MAX_RECORD_LINE)
    return [row[0] for row in csv.reader(lines) if row and row[0]]


def parse_headers(text: str) -> dict[str, list[str]]:
    """RFC 822-style headers of METADATA/WHEEL (up to the first blank line); repeated keys keep every value."""
    headers: dict[str, list[str]] = {}
    last: str | None = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t" and last is not None:
            headers[last][-1] += " " + line.strip()
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        last = key.strip().lower()
        headers.setdefault(last, []).append(value.strip())
    return headers


def metadata_directory(entry: str) -> tuple[str, str, str] | None:
    """(project name as written, version, kind) of a ``*.dist-info`` / ``*.egg-info`` directory name, else None."""
    match = re.match(_DIST_DIR, entry)
    return (match["name"], match["version"], match["kind"]) if match else None


def read_dist(directory: str, location: str, name: str, version: str, kind: str, footprint: bool = False) -> Dist:
    """One dist-info/egg-info directory; unreadable parts become ``problems``, never exceptions. ``footprint``:
    also the top-level entries and outside paths its RECORD lists (what the install guard checks)."""
    problems: list[str] = []
    metadata_file = "METADATA" if kind == "dist-info" else "PKG-INFO"
    text, why = read_file(os.path.join(directory, metadata_file))
    requires: tuple[str, ...] = ()
    requires_python = None
    if text is None:
        problems.append(f"{metadata_file} {why}")
    else:
        headers = parse_headers(text)
        if headers.get("version"):
            version = headers["version"][0]
        else:
            problems.append(f"{metadata_file} has no Version")
        requires = tuple(headers.get("requires-dist", ()))
        requires_python = next(iter(headers.get("requires-python") or ()), None)
    installer = None
    tags: tuple[str, ...] = ()
    build = None
    direct_url = None
    tops: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()
    if kind == "dist-info":
        installer_text, why = read_file(os.path.join(directory, "INSTALLER"), MAX_INSTALLER)
        installer = (installer_text or "").strip() or None
        if why and why != "missing":  # INSTALLER is optional
            problems.append(f"INSTALLER {why}")
        wheel, why = read_file(os.path.join(directory, "WHEEL"))
        if wheel is not None:
            wheel_headers = parse_headers(wheel)
            tags = tuple(wheel_headers.get("tag", ()))
            build = next(iter(wheel_headers.get("build") or ()), None)
        elif why != "missing":
            problems.append(f"WHEEL {why}")
        direct_url = _direct_url(directory)
        problems += _record_problems(os.path.join(directory, "RECORD"))
        if footprint:
            tops, outside = _footprint(directory)
    return Dist(name=name, version=version, path=directory, location=location, kind=kind, installer=installer,
                requires=requires, requires_python=requires_python, wheel_tags=tags, wheel_build=build,
                direct_url=direct_url, problems=tuple(problems), tops=tops, outside=outside)


def _direct_url(directory: str) -> str | None:
    """The ``url`` of a dist-info's ``direct_url.json`` (PEP 610), or None (none, unreadable, not that format)."""
    import json

    text, _ = read_file(os.path.join(directory, "direct_url.json"), MAX_DIRECT_URL)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    url = data.get("url") if isinstance(data, dict) else None
    return url if isinstance(url, str) and url else None


def _record_problems(record: str) -> list[str]:
    """Why a RECORD cannot be read, looked at without reading it (read, capped, only when its paths or sizes are
    needed)."""
    import stat

    if not os.path.lexists(record):
        return ["RECORD missing"]
    try:
        info = os.stat(record)
    except OSError as exc:
        return [f"RECORD unreadable ({(exc.strerror or str(exc)).lower()})"]
    if not stat.S_ISREG(info.st_mode):
        return ["RECORD not a regular file"]
    if info.st_size > MAX_RECORD:
        return [f"RECORD larger than {MAX_RECORD} bytes, not read"]
    return []


def _footprint(directory: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(top-level entries, paths outside the location) its RECORD lists; the metadata directory itself is always
    one of the former (it is all there is without a readable RECORD)."""
    entry = os.path.basename(directory)
    paths = record_paths(directory)
    if paths is None:
        return (entry,), ()
    tops = {p.replace("\\", "/").split("/", 1)[0] for p in paths if not p.startswith((".", "/"))}
    return tuple(sorted(tops | {entry})), tuple(p for p in paths if p.startswith("../"))


def egg_link(path: str, location: str, name: str) -> Dist:
    """An ``.egg-link`` file (a development install): where it points."""
    text, why = read_file(path, MAX_EGG_LINK)
    target = (text or "").splitlines()
    problem = f"egg-link {why}" if why else "egg-link is empty"
    return Dist(name=name, version="0+develop", path=path, location=target[0].strip() if target else location,
                kind="egg-link", problems=() if target else (problem,))
