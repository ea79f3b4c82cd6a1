"""The reference reading of simple-index pages the scanner in ``torch_install.index.pages`` is checked against:
the standard library's ``html.parser`` over the decoded page (PEP 503), ``json.loads`` of the whole page
(PEP 691). Slow and memory-hungry on large pages, and exact: each file it yields is ``(filename, url, sha256,
requires-python, yanked)``, the URL resolved with ``urljoin``. Only files named ``*.whl`` are compared (the
scanner keeps no others)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

Row = tuple[str, str, "str | None", "str | None", bool]


def _row(page_url: str, href: str, requires_python: str | None, yanked: bool,
         hashes: dict[str, Any] | None = None) -> Row | None:
    try:
        url = urljoin(page_url, href.strip())
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https"):
        return None
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    if not filename or "/" in filename or "\\" in filename or "\x00" in filename or len(filename) > 255:
        return None
    if hashes is not None:
        sha = hashes.get("sha256")
        sha = sha.lower() if isinstance(sha, str) else None
    else:
        sha = parts.fragment[len("sha256="):].lower() if parts.fragment.startswith("sha256=") else None
    if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha)):
        sha = None
    requires_python = (requires_python.strip() or None) if requires_python is not None else None
    return filename, url.split("#", 1)[0], sha, requires_python, yanked


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.anchors.append(dict(attrs))


def reference_html(body: bytes, page_url: str) -> list[Row]:
    parser = _Anchors()
    parser.feed(body.decode("utf-8", "replace"))
    parser.close()
    rows = []
    for attrs in parser.anchors:
        href = attrs.get("href") or ""
        if not href.split("#", 1)[0].split("?", 1)[0].strip().lower().endswith(".whl"):
            continue
        row = _row(page_url, href, attrs.get("data-requires-python"), "data-yanked" in attrs)
        if row:
            rows.append(row)
    return rows


def reference_json(body: bytes, page_url: str) -> list[Row]:
    rows = []
    for entry in json.loads(body)["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            continue
        hashes = entry.get("hashes") if isinstance(entry.get("hashes"), dict) else {}
        rp = entry.get("requires-python")
        row = _row(page_url, entry["url"], rp if isinstance(rp, str) else None, bool(entry.get("yanked")), hashes)
        name = entry.get("filename")
        if row and isinstance(name, str) and name != row[0] and "/" not in name:
            row = (name, *row[1:])
        if row and row[0].lower().endswith(".whl"):
            rows.append(row)
    return rows
