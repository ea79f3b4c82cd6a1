"""On-disk cache of index pages, with a TTL and ETag/Last-Modified revalidation data.

Location: ``$TORCH_INSTALL_CACHE_DIR``, else the user cache directory's ``torch-install/index`` (``default_cache_dir``).
Each page URL has ``<key>.meta.json`` (url, fetched_at, etag, last_modified, content type: small, read on every
lookup) and ``<key>.page`` (the page's bytes as served, scanned only when a target's files are asked for, and
then only for that target's platforms: ``pages.parse_page``). ``derived/`` holds small results computed from
pages, one file per result: each records the content of the pages it came from (``content``: the page's
checksum and size), so a revalidated page (HTTP 304) reuses it without reading the page, and a changed page
overwrites it, never leaving another file behind. A warm lookup never re-reads a large page.
The directory is created private to the user (0o700 on POSIX). Writes are atomic (temp file + rename); the
meta file records the page's size and checksum. Any file that is unreadable, undecodable, of the wrong shape,
over its size limit, a link, a FIFO or a device is named in one warning line, removed (the link, never what it
points to) and fetched or computed again; a cache that cannot be written is skipped silently.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from os import PathLike
    from pathlib import Path
    from typing import Any


CACHE_DIR_ENV = "TORCH_INSTALL_CACHE_DIR"
TTL_ENV = "TORCH_INSTALL_INDEX_TTL"
DEFAULT_TTL = 3600.0  # seconds a page is used without asking the server again
_FORMAT = 3  # 3: the page's bytes are stored (.page), with page_bytes, page_crc and content_type in the meta
MAX_META = 64 * 1024
MAX_PAGE = 64 * 1024 * 1024  # pages.MAX_PAGE_BYTES: the largest page the client accepts
MAX_DERIVED = 16 * 1024 * 1024
LATEST_TIME = 253402300799.0  # 9999-12-31 23:59:59 UTC: the last time a date can be printed for


class _Unusable(Exception):
    """A cache file that exists but cannot be used: its one-line reason."""


def default_cache_dir(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> str:
    """``$TORCH_INSTALL_CACHE_DIR``, else the ``index`` directory of torch-install's place in the user's cache
    (``user_dirs.cache_root``)."""
    if environ.get(CACHE_DIR_ENV):
        return environ[CACHE_DIR_ENV]
    from ..user_dirs import cache_root

    return os.path.join(cache_root(environ, platform), "index")


def default_ttl() -> float:
    try:
        return max(0.0, float(os.environ.get(TTL_ENV, DEFAULT_TTL)))
    except ValueError:
        return DEFAULT_TTL


def _key(text: str) -> str:
    """A file name for a URL or key (the full text is stored inside and compared on read)."""
    data = text.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):04x}"


class CacheEntry:
    """One cached index page: its validators, whether it is within the TTL, and its files (read lazily)."""

    def __init__(self, url: str, fetched_at: float, etag: str | None, last_modified: str | None, fresh: bool,
                 page_path: str, page_crc: int, content_type: str, cache: IndexCache | None = None) -> None:
        self.url = url
        self.fetched_at = fetched_at  # epoch seconds of the last fetch or successful revalidation
        self.etag = etag
        self.last_modified = last_modified
        self.fresh = fresh
        self.content_type = content_type
        self._page_path = page_path
        self._page_crc = page_crc  # checksum the meta file recorded
        self._cache = cache  # told when the page turns out corrupt

    @property
    def content(self) -> str | None:
        """What the page holds, as its checksum and size: equal for a page revalidated unchanged."""
        try:
            return f"{self._page_crc:08x}-{os.stat(self._page_path).st_size}"
        except OSError:
            return None

    def read(self, use: Callable[[bytes, str], Any]) -> Any:
        """``use(the page's bytes, its content type)``, or None when the page is unreadable or corrupt, or ``use``
        finds it is no page (then warned about and removed). ``use`` reads what it needs of the page before it
        returns, so the page is known good when it does."""
        from .pages import IndexUnavailable

        try:
            data = _read(self._page_path, MAX_PAGE)
            if data is None:
                raise _Unusable("missing")
            if zlib.crc32(data) != self._page_crc:
                raise _Unusable("checksum mismatch")
            return use(data, self.content_type)
        except (_Unusable, IndexUnavailable) as exc:
            if self._cache is not None:
                why = str(exc).removeprefix(f"{self.url}: ")
                self._cache.drop_corrupt(self.url, f"{os.path.basename(self._page_path)}: {why}")
            return None


class IndexCache:
    def __init__(self, directory: PathLike[str] | str | None = None, ttl: float | None = None) -> None:
        self._dir = os.fspath(directory) if directory is not None else default_cache_dir()
        self.ttl = default_ttl() if ttl is None else ttl
        self._derived: dict[tuple[str, object], Any] = {}  # what get_derived found good, by (key, valid): read once

    @property
    def directory(self) -> Path:
        """The cache directory (paths inside are joined as strings, so a warm lookup never imports pathlib)."""
        from pathlib import Path

        return Path(self._dir)

    def _paths(self, url: str) -> tuple[str, str]:
        key = _key(url)
        return os.path.join(self._dir, f"{key}.meta.json"), os.path.join(self._dir, f"{key}.page")

    def get(self, url: str, now: float | None = None) -> CacheEntry | None:
        """The entry for ``url``, or None: absent, of an older format, or corrupt (warned about and removed).
        A page of the wrong size is found here; one with the wrong content when it is read."""
        meta_path, page_path = self._paths(url)
        try:
            data = _read(meta_path, MAX_META)
            if data is None:
                return None
            meta = _json(data)
            if not isinstance(meta, dict):
                raise ValueError("not a JSON object")
            if meta.get("format") != _FORMAT or meta.get("url") != url:
                return None  # an older format, or another URL with the same key: simply replaced
            fetched_at = float(meta["fetched_at"])
            if not 0 <= fetched_at <= LATEST_TIME:  # NaN, infinity, a clock past year 9999 or before 1970
                raise ValueError(f"fetched_at {meta['fetched_at']!r} is not a time")
            size, crc, content_type = int(meta["page_bytes"]), int(meta["page_crc"]), meta["content_type"]
            if not isinstance(content_type, str):
                raise TypeError("content_type is not a string")
            found = os.stat(page_path).st_size
            if found != size:
                raise ValueError(f"{os.path.basename(page_path)} has {found} bytes, {size} were written")
        except FileNotFoundError:
            self.drop_corrupt(url, f"{os.path.basename(page_path)} is missing")
            return None
        except (_Unusable, OSError, ValueError, TypeError, KeyError) as exc:
            self.drop_corrupt(url, str(exc))
            return None
        now = time.time() if now is None else now
        fresh = 0 <= now - fetched_at < self.ttl
        return CacheEntry(url, fetched_at, meta.get("etag"), meta.get("last_modified"), fresh, page_path, crc,
                          content_type, self)

    def drop_corrupt(self, url: str, why: str) -> None:
        """Remove a corrupt entry, saying so in one warning line."""
        meta_path, page_path = self._paths(url)
        sys.stderr.write(f"torch-install: warning: index cache entry {meta_path} is corrupt ({why}); ignored, "
                         "fetched again\n")
        _remove(meta_path)
        _remove(page_path)

    def put(self, url: str, body: bytes | bytearray, content_type: str, etag: str | None, last_modified: str | None,
            fetched_at: float) -> str | None:
        """Store a fetched page; its ``content`` (see CacheEntry), or None when the cache cannot be written."""
        meta_path, page_path = self._paths(url)
        crc = zlib.crc32(body)
        if self._write_bytes(page_path, body) and self._write(meta_path, {
                "format": _FORMAT, "url": url, "fetched_at": fetched_at, "etag": etag, "last_modified": last_modified,
                "content_type": content_type, "page_bytes": len(body), "page_crc": crc}):
            _remove(meta_path.replace(".meta.json", ".files.json"))  # what format 2 stored beside it
            return f"{crc:08x}-{len(body)}"
        return None

    def touch(self, url: str, etag: str | None, last_modified: str | None, now: float | None = None
              ) -> CacheEntry | None:
        """Record a successful revalidation (304): the entry is fresh again. None when the entry went away (or
        turned corrupt) while the request was on its way: the page is to be fetched again."""
        entry = self.get(url)
        if entry is None:
            return None
        now = time.time() if now is None else now
        meta_path, page_path = self._paths(url)
        try:
            size = os.stat(page_path).st_size
        except OSError:
            return None
        etag, last_modified = etag or entry.etag, last_modified or entry.last_modified
        self._write(meta_path, {"format": _FORMAT, "url": url, "fetched_at": now, "etag": etag,
                                "last_modified": last_modified, "content_type": entry.content_type,
                                "page_bytes": size, "page_crc": entry._page_crc})
        return CacheEntry(url, now, etag, last_modified, True, page_path, entry._page_crc, entry.content_type, self)

    def get_derived(self, key: str, valid: Callable[[Any], bool] | None = None) -> Any:
        """A stored derived result, or None: absent, or corrupt or not ``valid`` in shape (warned about, removed,
        computed again). A result found is read once a run (a revalidation asks for it twice)."""
        found = self._derived.get((key, valid))
        if found is None:
            found = self._read_derived(key, valid)
            if found is not None:
                self._derived[key, valid] = found
        return found

    def _read_derived(self, key: str, valid: Callable[[Any], bool] | None) -> Any:
        path = os.path.join(self._dir, "derived", f"{_key(key)}.json")
        try:
            data = _read(path, MAX_DERIVED)
            if data is None:
                return None
            data = _json(data)
            if isinstance(data, dict) and data.get("key") == key and valid and not valid(data.get("value")):
                raise _Unusable("a value of the wrong shape")
        except _Unusable as exc:
            sys.stderr.write(f"torch-install: warning: index cache entry {path} is corrupt ({exc}); ignored, "
                             "computed again\n")
            _remove(path)
            return None
        return data.get("value") if isinstance(data, dict) and data.get("key") == key else None

    def put_derived(self, key: str, value: Any) -> None:
        for found in [k for k in self._derived if k[0] == key]:
            del self._derived[found]
        self._write(os.path.join(self._dir, "derived", f"{_key(key)}.json"), {"key": key, "value": value})

    def _write(self, path: str, data: Any) -> bool:
        return self._write_bytes(path, json.dumps(data, separators=(",", ":")).encode("utf-8"))

    def _write_bytes(self, path: str, data: bytes | bytearray) -> bool:
        import tempfile

        try:
            _private_dirs(os.path.dirname(path))
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")  # 0o600
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, path)
            except BaseException:
                _remove(tmp)
                raise
        except OSError as exc:
            if isinstance(exc, (NotADirectoryError, FileExistsError)):
                self._say_blocked()
            return False
        return True

    def _say_blocked(self) -> None:
        """One line, once a run, when a file stands where the cache directory (or one above it) should be."""
        if getattr(self, "_blocked_said", False):
            return
        self._blocked_said = True
        blocker = self._dir
        while blocker and not os.path.lexists(blocker):
            blocker = os.path.dirname(blocker)
        sys.stderr.write(f"torch-install: warning: index cache {self._dir} cannot be made: {blocker} is a file, not "
                         f"a directory; pages are not cached (set {CACHE_DIR_ENV} to another place)\n")


def _read(path: str, limit: int) -> bytes | None:
    """The bytes of a cache file, None when it does not exist; _Unusable when it is a link, not a regular file
    (a FIFO or device is found without blocking), unreadable or over ``limit``."""
    from ..probe import read_regular

    try:
        if os.path.islink(path):
            raise _Unusable("a link, not a file this cache wrote")
        data = read_regular(path, limit + 1)
    except (FileNotFoundError, NotADirectoryError):  # absent, or the cache directory is under a file
        return None
    except OSError as exc:
        raise _Unusable(exc.strerror or str(exc)) from None
    if len(data) > limit:
        raise _Unusable(f"over the {limit}-byte limit")
    return data


def _json(data: bytes) -> Any:
    """Cache bytes as JSON; _Unusable when they are not UTF-8 JSON (or nest past the recursion limit)."""
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _Unusable(str(exc).splitlines()[0][:120] if str(exc) else exc.__class__.__name__) from None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    except OSError:  # a read-only cache: the entry is ignored again next time
        return


def _private_dirs(directory: str) -> None:
    """Create ``directory`` and any missing parents readable by the user only (0o700 on POSIX, whatever the
    umask); an existing directory is left as it is."""
    missing: list[str] = []
    while not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent in (directory, ""):
            break
        directory = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        if os.name == "posix":
            os.chmod(path, 0o700)
