"""Simple-index pages as data: the files a PEP 691 JSON or PEP 503 HTML project page lists, and the wheels
among them (file names parsed with packaging). Every failure to read a page is an :class:`IndexUnavailable`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from ..errors import EnvironmentFailure

JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_CONTENT_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class IndexUnavailable(EnvironmentFailure):
    """An index page could not be fetched or read (exit 3). ``str()`` is one line naming the URL;
    ``status`` is the HTTP status when the server answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class IndexFile:
    """One file listed on a simple page. ``sha256`` and ``requires_python`` are None when not given."""

    filename: str
    url: str
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False


def _file_from_link(page_url: str, href: str, requires_python: str | None, yanked: bool,
                    hashes: Mapping[str, Any] | None = None) -> IndexFile | None:
    try:
        url = urljoin(page_url, href.strip())
        parts = urlsplit(url)
    except ValueError:  # "http://[::1": not a URL at all
        return None
    if parts.scheme not in ("http", "https"):
        return None  # javascript:, data:, file: … are not files of an index
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    if not filename or "/" in filename or "\\" in filename or "\x00" in filename or len(filename) > 255:
        return None
    sha256 = None
    if hashes is not None:
        value = hashes.get("sha256")
        sha256 = value.lower() if isinstance(value, str) else None
    elif parts.fragment.startswith("sha256="):
        sha256 = parts.fragment[len("sha256="):].lower()
    if sha256 is not None and not _SHA256.match(sha256):
        sha256 = None
    if requires_python is not None:
        requires_python = requires_python.strip() or None
    return IndexFile(filename, url.split("#", 1)[0], sha256, requires_python, yanked)


def _anchor_parser() -> Any:
    """An HTMLParser collecting the attributes of ``<a>`` tags that link a wheel (all this product reads; a page
    of millions of other anchors costs no memory); scripts, styles and broken markup are ignored."""
    from html.parser import HTMLParser

    class AnchorParser(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.anchors: list[dict[str, str | None]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                found = dict(attrs)
                href = (found.get("href") or "").split("#", 1)[0].split("?", 1)[0].strip()
                if href.lower().endswith(".whl"):
                    self.anchors.append(found)

    return AnchorParser()


def parse_simple_html(text: str, page_url: str) -> list[IndexFile]:
    """PEP 503 page: anchors, ``#sha256=`` fragments, ``data-requires-python``, ``data-yanked``."""
    parser = _anchor_parser()
    try:
        parser.feed(text)
        parser.close()
    except (AssertionError, ValueError) as exc:  # HTMLParser's own complaints on broken markup
        raise IndexUnavailable(f"{page_url}: unreadable HTML ({exc})") from None
    files = []
    for attrs in parser.anchors:
        href = attrs.get("href")
        if not href:
            continue
        item = _file_from_link(page_url, href, attrs.get("data-requires-python"), "data-yanked" in attrs)
        if item:
            files.append(item)
    return files


def parse_simple_json(text: str, page_url: str) -> list[IndexFile]:
    """PEP 691 page: ``files[]`` of {filename, url, hashes, requires-python, yanked}."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise IndexUnavailable(f"{page_url}: not valid JSON ({exc})") from None
    except RecursionError:
        raise IndexUnavailable(f"{page_url}: JSON nested too deeply for a project page") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise IndexUnavailable(f"{page_url}: not a PEP 691 project page (no 'files' list)")
    files = []
    for entry in data["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            continue
        hashes = entry.get("hashes") if isinstance(entry.get("hashes"), dict) else {}
        requires_python = entry.get("requires-python")
        item = _file_from_link(page_url, entry["url"], requires_python if isinstance(requires_python, str) else None,
                               bool(entry.get("yanked")), hashes)
        name = entry.get("filename")
        if item and isinstance(name, str) and name != item.filename and "/" not in name:
            item = IndexFile(name, item.url, item.sha256, item.requires_python, item.yanked)
        if item:
            files.append(item)
    return files


def parse_page(body: bytes, content_type: str, page_url: str) -> list[IndexFile]:
    """Parse a simple page by its Content-Type (JSON for PEP 691, HTML otherwise)."""
    text = body.decode("utf-8", errors="replace")
    if content_type.split(";", 1)[0].strip().lower() == JSON_CONTENT_TYPE:
        return parse_simple_json(text, page_url)
    return parse_simple_html(text, page_url)


@dataclass(frozen=True)
class Wheel:
    """A wheel file of the index, its filename parsed. ``label`` is the local version label ('' if none)."""

    project: str
    version: str  # public version, "2.16.0"
    label: str  # "cu134", "rocm7.14", "xpu", "cpu", ""
    tags: frozenset[str]  # "cp312-cp312-manylinux_2_28_x86_64", …
    file: IndexFile

    @property
    def full_version(self) -> str:
        return f"{self.version}+{self.label}" if self.label else self.version


def parse_wheels(files: Iterable[IndexFile], project: str) -> list[Wheel]:
    """The files that are wheels of ``project`` (valid wheel filenames, not yanked); everything else is skipped."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wanted = canonicalize_name(project)
    wheels = []
    for item in files:
        if item.yanked or not item.filename.endswith(".whl"):
            continue
        try:
            name, version, _build, tags = parse_wheel_filename(item.filename)
        except (InvalidWheelFilename, ValueError):
            continue
        if name != wanted:
            continue
        wheels.append(Wheel(name, version.public, version.local or "", frozenset(str(t) for t in tags), item))
    return wheels
