"""On-disk cache of index pages (parsed), with a TTL and ETag/Last-Modified revalidation data.

Location: ``$TORCH_INSTALL_CACHE_DIR``, else the user cache directory (platformdirs) ``…/torch-install/index``.
Each page URL has ``<key>.meta.json`` (url, fetched_at, etag, last_modified: small, read on every lookup)
and ``<key>.files.json`` (the parsed file list, read only when needed). ``derived/`` holds small results
computed from pages (keyed by the pages' identity), so a warm lookup never re-reads a large listing.
Writes are atomic (temp file + rename); an unreadable or corrupt entry counts as absent; a cache that
cannot be written is skipped silently.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing at start-up
if TYPE_CHECKING:
    from typing import Any

    from .index import IndexFile

CACHE_DIR_ENV = "TORCH_INSTALL_CACHE_DIR"
TTL_ENV = "TORCH_INSTALL_INDEX_TTL"
DEFAULT_TTL = 3600.0  # seconds a page is used without asking the server again
_FORMAT = 1


def default_cache_dir() -> Path:
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("torch-install", appauthor=False)) / "index"


def default_ttl() -> float:
    try:
        return max(0.0, float(os.environ.get(TTL_ENV, DEFAULT_TTL)))
    except ValueError:
        return DEFAULT_TTL


def _key(text: str) -> str:
    """A file name for a URL or key (the full text is stored inside and compared on read)."""
    data = text.encode()
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):04x}"


@dataclass(frozen=True)
class CacheEntry:
    url: str
    fetched_at: float  # epoch seconds of the last fetch or successful revalidation
    etag: str | None
    last_modified: str | None
    fresh: bool
    _files_path: Path

    @property
    def files(self) -> tuple[IndexFile, ...]:
        from .index import IndexFile

        try:
            rows = json.loads(self._files_path.read_text(encoding="utf-8"))
            return tuple(IndexFile(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows)
        except (OSError, ValueError, TypeError, IndexError, KeyError):
            return ()


class IndexCache:
    def __init__(self, directory: Path | str | None = None, ttl: float | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.ttl = default_ttl() if ttl is None else ttl

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = _key(url)
        return self.directory / f"{key}.meta.json", self.directory / f"{key}.files.json"

    def get(self, url: str, now: float | None = None) -> CacheEntry | None:
        meta_path, files_path = self._paths(url)
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("format") != _FORMAT or meta.get("url") != url or not files_path.is_file():
                return None
            fetched_at = float(meta["fetched_at"])
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        now = time.time() if now is None else now
        fresh = 0 <= now - fetched_at < self.ttl
        return CacheEntry(url, fetched_at, meta.get("etag"), meta.get("last_modified"), fresh, files_path)

    def put(self, url: str, files: tuple[IndexFile, ...], etag: str | None, last_modified: str | None,
            fetched_at: float) -> None:
        meta_path, files_path = self._paths(url)
        rows = [[f.filename, f.url, f.sha256, f.requires_python, f.yanked] for f in files]
        if self._write(files_path, rows):
            self._write(meta_path, {"format": _FORMAT, "url": url, "fetched_at": fetched_at, "etag": etag,
                                    "last_modified": last_modified})

    def touch(self, url: str, etag: str | None, last_modified: str | None, now: float | None = None) -> CacheEntry:
        """Record a successful revalidation (304): the entry is fresh again."""
        entry = self.get(url)
        assert entry is not None
        now = time.time() if now is None else now
        meta_path, _ = self._paths(url)
        self._write(meta_path, {"format": _FORMAT, "url": url, "fetched_at": now, "etag": etag or entry.etag,
                                "last_modified": last_modified or entry.last_modified})
        return CacheEntry(url, now, etag or entry.etag, last_modified or entry.last_modified, True,
                          entry._files_path)

    def get_derived(self, key: str) -> Any:
        try:
            data = json.loads((self.directory / "derived" / f"{_key(key)}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data.get("value") if isinstance(data, dict) and data.get("key") == key else None

    def put_derived(self, key: str, value: Any) -> None:
        self._write(self.directory / "derived" / f"{_key(key)}.json", {"key": key, "value": value})

    def _write(self, path: Path, data: Any) -> bool:
        import tempfile

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, separators=(",", ":"))
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return False
        return True
