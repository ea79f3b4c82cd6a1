"""Live PyTorch wheel index client: PEP 691 JSON and PEP 503 HTML simple pages.

The index layout is download.pytorch.org's (and that of mirrors of it): ``{base}/torch/`` lists the files of
every variant, each named with a local label (``torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl``);
``{base}/{variant}/{project}/`` lists one variant's files.

Transport rules: https only (plain http only for a loopback host or with ``allow_insecure``); TLS verified;
proxies and CA bundles from the environment (``HTTPS_PROXY``, ``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE``);
connect/read timeouts and an overall deadline; bounded retries with backoff for connection errors and
5xx/429; a cap on the body size; redirects followed by hand, and one to plain http is refused.
Every failure is an :class:`IndexUnavailable` with a one-line reason.

``requests`` is imported only when a page is actually fetched.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urljoin, urlsplit

from .errors import EnvironmentFailure
from .index_url import (
    DEFAULT_INDEX_BASE,
    INDEX_BASE_ENV,
    check_index_url,
    index_base_from,
    is_loopback,
    project_url,
    transport_allowed,
)

__all__ = ["DEFAULT_INDEX_BASE", "INDEX_BASE_ENV", "check_index_url", "index_base_from", "is_loopback", "project_url"]

if TYPE_CHECKING:
    from .index_cache import IndexCache


JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_CONTENT_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")
ACCEPT = f"{JSON_CONTENT_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"

MAX_BYTES = 64 * 1024 * 1024  # the full /whl/torch/ page is a few MiB; nightly pages are larger
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 15.0
DEADLINE = 60.0  # whole fetch of one page, all attempts included
RETRIES = 2  # extra attempts after the first
BACKOFF = 0.5  # seconds before the first retry; doubles each time
MAX_REDIRECTS = 5
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class IndexUnavailable(EnvironmentFailure):
    """An index page could not be fetched or read (exit 3). ``str()`` is one line naming the URL;
    ``status`` is the HTTP status when the server answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


# --------------------------------------------------------------------------------------------- page parsing

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
    url = urljoin(page_url, href.strip())
    parts = urlsplit(url)
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
    """An HTMLParser collecting ``<a>`` attributes; scripts, styles and broken markup are ignored."""
    from html.parser import HTMLParser

    class AnchorParser(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.anchors: list[dict[str, str | None]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a":
                self.anchors.append(dict(attrs))

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


# --------------------------------------------------------------------------------------------- wheels

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


# --------------------------------------------------------------------------------------------- fetching

@dataclass(frozen=True)
class Page:
    """A fetched page. ``status`` is 200, or 304 when a conditional request found it unchanged (no body)."""

    url: str
    status: int
    body: bytes
    content_type: str
    etag: str | None = None
    last_modified: str | None = None


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass
class Fetcher:
    """GETs simple pages under the transport rules in the module docstring."""

    allow_insecure: bool = False
    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = READ_TIMEOUT
    deadline: float = DEADLINE
    retries: int = RETRIES
    backoff: float = BACKOFF
    max_bytes: int = MAX_BYTES

    def get(self, url: str, etag: str | None = None, last_modified: str | None = None) -> Page:
        import requests

        headers = {"Accept": ACCEPT, "User-Agent": "torch-install"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        started = time.monotonic()
        last_error = "no attempt made"
        made = 0
        with requests.Session() as session:  # trust_env: proxies, REQUESTS_CA_BUNDLE, .netrc
            for attempt in range(self.retries + 1):
                if attempt:
                    pause = self.backoff * (2 ** (attempt - 1))
                    if time.monotonic() - started + pause > self.deadline:
                        break
                    time.sleep(pause)
                made += 1
                try:
                    return self._get_once(session, url, headers, started)
                except _Retryable as exc:
                    last_error = str(exc)
                except requests.exceptions.SSLError as exc:
                    raise IndexUnavailable(f"{url}: TLS verification failed ({_short(exc)})") from None
                except requests.exceptions.Timeout:
                    last_error = f"timed out after {self.read_timeout:g} s"
                except requests.exceptions.ConnectionError as exc:
                    last_error = f"cannot connect ({_short(exc)})"
                except requests.exceptions.RequestException as exc:
                    raise IndexUnavailable(f"{url}: {_short(exc)}") from None
        raise IndexUnavailable(f"{url}: {last_error} ({made} attempt{'s' if made > 1 else ''})")

    def _get_once(self, session: Any, url: str, headers: dict[str, str], started: float) -> Page:
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            response = session.get(current, headers=headers, stream=True, allow_redirects=False, verify=True,
                                   timeout=(self.connect_timeout, self.read_timeout))
            with response:
                if response.is_redirect:
                    target = urljoin(current, response.headers.get("Location", ""))
                    if not transport_allowed(target, self.allow_insecure):
                        raise IndexUnavailable(f"{url}: refused a redirect to {target.split('?')[0]} (not https)")
                    current = target
                    continue
                if response.status_code == 304:
                    return Page(current, 304, b"", "", response.headers.get("ETag"),
                                response.headers.get("Last-Modified"))
                if response.status_code in _RETRY_STATUS:
                    raise _Retryable(f"HTTP {response.status_code} {response.reason or ''}".rstrip())
                if response.status_code != 200:
                    raise IndexUnavailable(f"{current}: HTTP {response.status_code} {response.reason or ''}".rstrip(),
                                           response.status_code)
                body = self._read_body(response, current, started)
                return Page(current, 200, body, response.headers.get("Content-Type", "text/html"),
                            response.headers.get("ETag"), response.headers.get("Last-Modified"))
        raise IndexUnavailable(f"{url}: more than {MAX_REDIRECTS} redirects")

    def _read_body(self, response: Any, url: str, started: float) -> bytes:
        import requests

        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > self.max_bytes:
            raise IndexUnavailable(f"{url}: page is {int(declared)} bytes, over the {self.max_bytes}-byte limit")
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_content(chunk_size=256 * 1024):
                size += len(chunk)
                if size > self.max_bytes:
                    raise IndexUnavailable(f"{url}: page is over the {self.max_bytes}-byte limit")
                if time.monotonic() - started > self.deadline:
                    raise _Retryable(f"not complete after {self.deadline:g} s")
                chunks.append(chunk)
        except requests.exceptions.ChunkedEncodingError as exc:
            raise _Retryable(f"truncated response ({_short(exc)})") from None
        except requests.exceptions.ConnectionError as exc:
            raise _Retryable(f"connection lost while reading ({_short(exc)})") from None
        body = b"".join(chunks)
        if declared and declared.isdigit() and len(body) < int(declared):
            raise _Retryable(f"truncated response ({len(body)} of {declared} bytes)")
        return body


class _Retryable(Exception):
    """A failure worth another attempt (5xx, 429, truncated body)."""


# --------------------------------------------------------------------------------------------- client

@dataclass(frozen=True)
class Listing:
    """One project page, and where it came from. ``files`` is read from the cache only when asked for."""

    url: str
    fetched_at: float  # epoch seconds of the last successful fetch or revalidation
    source: Callable[[], tuple[IndexFile, ...]]
    from_cache: bool = False
    stale: bool = False  # served from cache after a failed refresh
    error: str | None = None  # why the refresh failed, when stale

    @property
    def files(self) -> tuple[IndexFile, ...]:
        return self.source()


class IndexClient:
    """Project pages through the cache: fresh cache → no request; stale → revalidate; failure → stale cache."""

    def __init__(self, base: str, cache: IndexCache | None = None, fetcher: Fetcher | None = None,
                 offline: bool = False) -> None:
        self.base = base.rstrip("/")
        self.cache = cache
        self.fetcher = fetcher or Fetcher()
        self.offline = offline

    def listing(self, project: str, variant: str | None = None) -> Listing:
        """``{base}/[{variant}/]{project}/``. Raises IndexUnavailable when neither the network nor the cache has it."""
        url = project_url(self.base, project, variant)
        entry = self.cache.get(url) if self.cache else None
        if entry and entry.load_files() is None:  # corrupt: warned about and removed; fetched again below
            entry = None
        if entry and (self.offline or entry.fresh):
            return Listing(url, entry.fetched_at, lambda: entry.files, from_cache=True)
        if self.offline:
            raise IndexUnavailable(f"{url}: not in the cache, and --offline forbids the network")
        try:
            page = self.fetcher.get(url, entry.etag if entry else None, entry.last_modified if entry else None)
        except IndexUnavailable as exc:
            if entry:
                return Listing(url, entry.fetched_at, lambda: entry.files, from_cache=True, stale=True,
                               error=str(exc))
            raise
        if page.status == 304:
            if not entry or not self.cache:
                raise IndexUnavailable(f"{url}: HTTP 304 to a request that was not conditional")
            renewed = self.cache.touch(url, page.etag, page.last_modified)
            return Listing(url, renewed.fetched_at, lambda: renewed.files, from_cache=True)
        files = tuple(parse_page(page.body, page.content_type, url))
        now = time.time()
        if self.cache:
            self.cache.put(url, files, page.etag, page.last_modified, now)
        return Listing(url, now, lambda: files)
