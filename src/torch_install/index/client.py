"""Live PyTorch wheel index client: PEP 691 JSON and PEP 503 HTML simple pages.

The index layout is download.pytorch.org's (and that of mirrors of it): ``{base}/torch/`` lists the files of
every variant, each named with a local label (``torch-2.9.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl``);
``{base}/{variant}/{project}/`` lists one variant's files.

Transport rules: https only (plain http only for a loopback host or with ``allow_insecure``); TLS verified;
proxies and CA bundles from the environment (``HTTPS_PROXY``, ``REQUESTS_CA_BUNDLE``, ``SSL_CERT_FILE``);
each attempt bounded in total (connect, headers and body: ``TIMEOUT`` s, ``TORCH_INSTALL_INDEX_TIMEOUT``), a
page's attempts together at three times that; bounded retries with backoff for connection errors and 5xx/429;
a cap on the body size; redirects followed by hand, and one to plain http is refused. Every failure is an
:class:`IndexUnavailable` with a one-line reason.

The total bound holds against a server that trickles a byte at a time (each read returning within the socket
timeout): an attempt runs in a worker thread that the fetch stops waiting for at its limit; the abandoned
thread holds at most ``max_bytes`` and stops at its next read. A transfer still arriving at a useful rate
(``MIN_RATE`` over the last ``RATE_WINDOW`` seconds) is not cut off at the limit: a slow link finishes its page
(up to ``MAX_TRANSFER`` seconds), a trickle does not. On a terminal, a page that takes more than a second says so
in one status line (``progress``).

``requests`` is imported only when a page is actually fetched.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from urllib.parse import urljoin

from ..errors import InputError
from ..records import Record
from ..versions import small_int
from .simple import ACCEPT, MAX_PAGE_BYTES, IndexUnavailable
from .urls import project_url, transport_allowed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .cache import CacheEntry, IndexCache
    from .pages import IndexFile, PageWheels

CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 15.0  # between two reads
TIMEOUT = 20.0  # one attempt in total: connect, headers and body
DEADLINE = 3 * TIMEOUT  # one page, all attempts included
RETRIES = 2  # extra attempts after the first
BACKOFF = 0.5  # seconds before the first retry; doubles each time
MAX_REDIRECTS = 5
MIN_RATE = 4096  # bytes a second: a transfer at least this fast is still progressing
RATE_WINDOW = 5.0  # seconds over which the rate is taken
MAX_TRANSFER = 600.0  # seconds one progressing transfer may take in all
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class Page(Record):
    """A fetched page. ``status`` is 200, or 304 when a conditional request found it unchanged (no body)."""

    url: str
    status: int
    body: bytes | bytearray  # a page read from the network is the bytearray it was read into (never copied)
    content_type: str
    etag: str | None = None
    last_modified: str | None = None
    content_range: str | None = None  # "bytes 0-99/1234" for a 206 answer to a range request


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
    return text if len(text) <= 160 else text[:157] + "..."


class Fetcher:
    """GETs simple pages under the transport rules in the module docstring. (A plain class: dataclasses would
    import inspect on every fetch, a tenth of a revalidation.)"""

    __slots__ = ("allow_insecure", "connect_timeout", "read_timeout", "timeout", "deadline", "retries", "backoff",
                 "max_bytes")

    def __init__(self, allow_insecure: bool = False, connect_timeout: float = CONNECT_TIMEOUT,
                 read_timeout: float = READ_TIMEOUT, timeout: float = TIMEOUT, deadline: float = DEADLINE,
                 retries: int = RETRIES, backoff: float = BACKOFF, max_bytes: int = MAX_PAGE_BYTES) -> None:
        self.allow_insecure, self.connect_timeout, self.read_timeout = allow_insecure, connect_timeout, read_timeout
        self.timeout, self.deadline, self.retries, self.backoff = timeout, deadline, retries, backoff
        self.max_bytes = max_bytes

    def get(self, url: str, etag: str | None = None, last_modified: str | None = None,
            byte_range: str | None = None, accept: str = ACCEPT) -> Page:
        """GET ``url`` (conditional with ``etag``/``last_modified``; only the bytes ``byte_range`` names, like
        "0-99" or "-65536", when given)."""
        import requests

        headers = {"Accept": accept, "User-Agent": "torch-install"}
        if byte_range:
            headers = {"User-Agent": "torch-install", "Range": f"bytes={byte_range}"}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        started = time.monotonic()
        last_error = "no attempt made"
        made = 0
        for attempt in range(self.retries + 1):
            if attempt:
                pause = self.backoff * (2 ** (attempt - 1))
                if time.monotonic() - started + pause >= self.deadline:
                    break
                time.sleep(pause)
            limit = min(self.timeout, self.deadline - (time.monotonic() - started))
            if limit <= 0:
                break
            made += 1
            try:
                return self._attempt(url, headers, limit)
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
            except ValueError as exc:  # a redirect to "http://[::1": requests parses it before handing it back
                raise IndexUnavailable(f"{url}: a malformed URL in the answer ({_short(exc)})") from None
        raise IndexUnavailable(f"{url}: {last_error} ({made} attempt{'s' if made > 1 else ''})")

    def _attempt(self, url: str, headers: dict[str, str], limit: float) -> Page:
        """One attempt (redirects included) in a worker thread, given up at ``limit`` seconds in total, unless the
        body is still arriving at ``MIN_RATE`` or faster (then until ``MAX_TRANSFER``)."""
        import requests

        from ..progress import status

        outcome: list[Page | BaseException] = []
        stop = threading.Event()
        received = [0]  # body bytes so far, counted by the worker

        def work() -> None:
            try:
                with requests.Session() as session:  # trust_env: proxies, REQUESTS_CA_BUNDLE, .netrc
                    outcome.append(self._get_once(session, url, headers, stop, received))
            except BaseException as exc:  # handed to the waiting thread
                outcome.append(exc)

        worker = threading.Thread(target=work, name="torch-install-fetch", daemon=True)
        started = time.monotonic()
        until = started + limit
        samples: list[tuple[float, int]] = [(started, 0)]
        worker.start()
        with status() as line:
            while not outcome:
                worker.join(min(0.25, max(0.0, until - time.monotonic())))
                now = time.monotonic()
                samples.append((now, received[0]))
                line.show(f"torch-install: fetching {url.split('?')[0]} … {received[0] // 1024} KiB")
                if outcome or now < until:
                    continue
                past = next((s for s in reversed(samples) if now - s[0] >= RATE_WINDOW), samples[0])  # or all so far
                rate = (received[0] - past[1]) / (now - past[0]) if now > past[0] else 0.0
                if rate >= MIN_RATE and now - started < MAX_TRANSFER:
                    until = now + min(RATE_WINDOW, MAX_TRANSFER - (now - started))  # still coming: keep waiting
                    continue
                break
        if not outcome:
            stop.set()  # the worker stops at its next read; its data is dropped
            if limit < self.timeout:
                raise _Retryable(f"not complete by the page's {self.deadline:g} s deadline")
            taken = now - started
            raise _Retryable(f"not complete after {limit:g} s" if taken < limit + RATE_WINDOW else
                             f"not complete after {taken:.0f} s (it slowed below {MIN_RATE // 1024} KiB/s)")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _get_once(self, session: Any, url: str, headers: dict[str, str], stop: threading.Event,
                  received: list[int]) -> Page:
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            timeout = (min(self.connect_timeout, self.timeout), min(self.read_timeout, self.timeout))
            response = session.get(current, headers=headers, stream=True, allow_redirects=False, verify=True,
                                   timeout=timeout)
            with response:
                if response.is_redirect:
                    try:
                        target = urljoin(current, response.headers.get("Location", ""))
                    except ValueError:  # "http://[::1": not a URL
                        raise IndexUnavailable(f"{url}: refused a redirect to a malformed URL") from None
                    if not transport_allowed(target, self.allow_insecure):
                        raise IndexUnavailable(f"{url}: refused a redirect to {target.split('?')[0]} (not https)")
                    current = target
                    continue
                if response.status_code == 304:
                    return Page(current, 304, b"", "", response.headers.get("ETag"),
                                response.headers.get("Last-Modified"))
                if response.status_code in _RETRY_STATUS:
                    raise _Retryable(f"HTTP {response.status_code} {response.reason or ''}".rstrip())
                if response.status_code not in (200, 206):
                    raise IndexUnavailable(f"{current}: HTTP {response.status_code} {response.reason or ''}".rstrip(),
                                           response.status_code)
                body = self._read_body(response, current, stop, received)
                return Page(current, response.status_code, body, response.headers.get("Content-Type", "text/html"),
                            response.headers.get("ETag"), response.headers.get("Last-Modified"),
                            response.headers.get("Content-Range"))
        raise IndexUnavailable(f"{url}: more than {MAX_REDIRECTS} redirects")

    def _read_body(self, response: Any, url: str, stop: threading.Event, received: list[int]) -> bytearray:
        import requests

        declared = small_int((response.headers.get("Content-Length") or "").strip())
        if declared is not None and declared > self.max_bytes:
            raise IndexUnavailable(f"{url}: page is {declared} bytes, over the {self.max_bytes}-byte limit")
        body = bytearray()  # grown in place: the page is in memory once, not once in chunks and again joined
        try:
            for chunk in response.iter_content(chunk_size=16 * 1024):  # small: progress shows on a slow link
                if len(body) + len(chunk) > self.max_bytes:
                    raise IndexUnavailable(f"{url}: page is over the {self.max_bytes}-byte limit")
                if stop.is_set():
                    raise _Retryable("given up")
                body += chunk
                received[0] = len(body)
        except requests.exceptions.ChunkedEncodingError as exc:
            raise _Retryable(f"truncated response ({_short(exc)})") from None
        except requests.exceptions.ConnectionError as exc:
            raise _Retryable(f"connection lost while reading ({_short(exc)})") from None
        if declared is not None and len(body) < declared:
            raise _Retryable(f"truncated response ({len(body)} of {declared} bytes)")
        return body


class _Retryable(Exception):
    """A failure worth another attempt (5xx, 429, truncated body)."""


class Listing:
    """One project page, and where it came from. Its files are read (from the fetched bytes, or the cache) when
    asked for, for the platforms asked for, once each."""

    def __init__(self, url: str, fetched_at: float, read: Callable[[Callable[[bytes | bytearray, str], Any]], Any],
                 content: str | None = None, stale: bool = False, error: str | None = None) -> None:
        self.url = url
        self.fetched_at = fetched_at  # epoch seconds of the last successful fetch or revalidation
        self.content = content  # what the page holds (cache.CacheEntry.content); None without a cache
        self.stale = stale  # served from cache after a failed refresh
        self.error = error  # why the refresh failed, when stale
        self.read = read  # read(use): use(the page's bytes, its content type), once the page is at hand
        self._files: dict[frozenset[str] | None, tuple[IndexFile, ...]] = {}

    def files(self, platforms: Collection[str] | None = None) -> tuple[IndexFile, ...]:
        """The page's wheel files; with ``platforms``, only the wheels for those platform tags."""
        from .pages import parse_page  # only when a page is read: not on a revalidation that reuses its facts

        key = None if platforms is None else frozenset(platforms)
        if key not in self._files:
            self._files[key] = self.read(lambda body, content_type: tuple(parse_page(body, content_type, self.url,
                                                                                     key)))
        return self._files[key]

    def wheels(self, project: str, platforms: Collection[str] | None = None) -> PageWheels:
        """The page's wheels of ``project`` for ``platforms``, as online mode reads them (``pages.PageWheels``)."""
        from .pages import PageWheels

        return self.read(lambda body, content_type: PageWheels(body, content_type, self.url, project, platforms))


class IndexClient:
    """Project pages through the cache: fresh cache → no request; stale → revalidate; failure → stale cache."""

    def __init__(self, base: str, cache: IndexCache | None = None, fetcher: Fetcher | None = None,
                 offline: bool = False) -> None:
        self.base = base.rstrip("/")
        self.cache = cache
        self.fetcher = fetcher or Fetcher()
        self.offline = offline

    def listing(self, project: str, variant: str | None = None) -> Listing:
        """``{base}/[{variant}/]{project}/``. Raises IndexUnavailable when neither the network nor the cache has it.

        A page is read only when its files are asked for: a revalidated page (HTTP 304) whose derived results
        are reused is never read at all; a cached page found corrupt then is fetched again."""
        url = project_url(self.base, project, variant)
        entry = self.cache.get(url) if self.cache else None
        if entry and (self.offline or entry.fresh):
            return self._cached(entry, project)
        if self.offline:
            raise IndexUnavailable(f"{url}: not in the cache, and --offline forbids the network")
        try:
            page = self.fetcher.get(url, entry.etag if entry else None, entry.last_modified if entry else None)
            if page.status == 304:
                renewed = self.cache.touch(url, page.etag, page.last_modified) if entry and self.cache else None
                if renewed is not None:
                    return self._cached(renewed, project)
                # the entry went away meanwhile (another torch-install, the user clearing the cache): ask again
                page = self.fetcher.get(url)
                if page.status == 304:
                    raise IndexUnavailable(f"{url}: HTTP 304 to a request that was not conditional")
            self._check(page, url, project)
        except IndexUnavailable as exc:
            if entry:
                return self._cached(entry, project, stale=str(exc))
            raise
        return self._stored(url, page)

    @staticmethod
    def _check(page: Page, url: str, project: str) -> None:
        from .pages import lists_wheels_of

        if not lists_wheels_of(page.body, page.content_type, url, project):  # maintenance or error page: not cached
            raise IndexUnavailable(f"{url}: the page lists no {project} wheel (a maintenance or error page?)")

    def _stored(self, url: str, page: Page) -> Listing:
        now = time.time()
        content = self.cache.put(url, page.body, page.content_type, page.etag, page.last_modified, now) \
            if self.cache else None
        body, content_type = page.body, page.content_type
        return Listing(url, now, lambda use: use(body, content_type), content)

    def _cached(self, entry: CacheEntry, project: str, stale: str | None = None) -> Listing:
        """A listing served from ``entry``; its page, if it turns out corrupt when read (warned about and
        removed), is fetched again (or, offline, the page is unavailable)."""

        def read(use: Callable[[bytes | bytearray, str], Any]) -> Any:
            found = entry.read(use)
            if found is not None:
                return found
            if self.offline:
                raise IndexUnavailable(f"{entry.url}: the cached copy is corrupt, and --offline forbids the network")
            page = self.fetcher.get(entry.url)
            self._check(page, entry.url, project)
            return self._stored(entry.url, page).read(use)

        return Listing(entry.url, entry.fetched_at, read, entry.content, stale=stale is not None, error=stale)


def fetch_settings(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Timeout and retry overrides: ``TORCH_INSTALL_INDEX_TIMEOUT`` (seconds an attempt takes in all, connect,
    headers and body; a page's attempts together take at most three times that) and
    ``TORCH_INSTALL_INDEX_RETRIES`` (extra attempts). A malformed value is an input error."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {}
    for name, keys, low, high in (("TORCH_INSTALL_INDEX_TIMEOUT", ("timeout",), 0.05, 600),
                                  ("TORCH_INSTALL_INDEX_RETRIES", ("retries",), 0, 10)):
        if not env.get(name):
            continue
        try:
            value = float(env[name])
        except ValueError:
            value = -1.0
        if not low <= value <= high or (keys == ("retries",) and value != int(value)):
            raise InputError(f"${name}={env[name]!r}: expected a number from {low:g} to {high:g}")
        out.update({k: int(value) if k == "retries" else value for k in keys})
    if "timeout" in out:
        out["deadline"] = 3 * out["timeout"]
    return out


def make_client(base: str, offline: bool = False, allow_insecure: bool = False, cache: IndexCache | None = None
                ) -> IndexClient:
    """A client for ``base`` with the user's cache and the environment's fetch settings."""
    from .cache import IndexCache

    return IndexClient(base, cache or IndexCache(), Fetcher(allow_insecure=allow_insecure, **fetch_settings()),
                       offline=offline)


def fetch_file(url: str, max_bytes: int) -> bytes:
    """One file pip would fetch itself (a requirements or constraints file named by URL), under the transport
    rules above: https, plain http only for loopback, at most ``max_bytes``, the fetch settings' time limits. An
    InputError for a URL those rules refuse; an EnvironmentFailure (IndexUnavailable) naming why it was not read."""
    from .urls import redact_url

    shown = redact_url(url)
    if not transport_allowed(url):
        raise InputError(f"{shown}: only https URLs are fetched (plain http only for loopback)")
    try:
        return bytes(Fetcher(max_bytes=max_bytes, **fetch_settings()).get(url, accept="text/plain, */*").body)
    except IndexUnavailable as exc:
        raise IndexUnavailable(str(exc).replace(url, shown)) from None
