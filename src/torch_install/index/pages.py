"""Simple-index pages as data: the wheel files a PEP 691 JSON or PEP 503 HTML project page lists, and the wheels
among them (file names parsed with packaging). Every failure to read a page is an :class:`IndexUnavailable`.

A page is scanned, never parsed whole: regular expressions over its bytes find the anchors (HTML) or the
``files`` entries (JSON) that name a ``.whl``, and only those are decoded. Given the target's ``platforms``, a
wheel whose file name carries none of them is passed over by a string test before anything else is made of it.
What a page costs in memory is its bytes and the wheel files kept, whatever else it holds; a page of more than
``MAX_PAGE_ENTRIES`` entries is refused. ``parse_wheels`` reads file names in packaging's normal form by string
operations (checked against packaging by the tests), any other through packaging.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from ..errors import EnvironmentFailure
from ..records import Record
from ..wheel_tags import expand_tag

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_CONTENT_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
MAX_PAGE_BYTES = 64 * 1024 * 1024  # the full /whl/torch/ page is a few MiB; nightly pages are larger
MAX_PAGE_ENTRIES = 500_000  # wheel anchors of an HTML page, entries of a JSON page's files (the largest real: ~10^4)
MAX_ENTRY_BYTES = 64 * 1024  # a JSON file entry larger than this is no file of an index
MAX_DEPTH = 512  # JSON nesting outside the file entries
MEMO_LIMIT = 1024  # distinct keys a Memo keeps

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class IndexUnavailable(EnvironmentFailure):
    """An index page could not be fetched or read (exit 3). ``str()`` is one line naming the URL;
    ``status`` is the HTTP status when the server answered with an error."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Memo(dict):  # keys and values of any type, as each use has them
    """What a page repeats over its thousands of files (tag sets, labels, data-* attribute texts): ``compute`` of a
    key is worked out once. At most ``MEMO_LIMIT`` keys are kept, so a page whose every file differs costs no more
    memory; past that, each is worked out again."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        super().__init__()
        self.compute = compute

    def __missing__(self, key: Any) -> Any:
        value = self.compute(key)
        if len(self) < MEMO_LIMIT:
            self[key] = value
        return value


class IndexFile(Record):
    """One file listed on a simple page. ``sha256`` and ``requires_python`` are None when not given."""

    filename: str
    url: str
    sha256: str | None = None
    requires_python: str | None = None
    yanked: bool = False


class _Links:
    """Turns the hrefs of one page into absolute URLs and file names: plain hrefs (absolute, absolute-path, or a
    name beside the page) by string operations, anything else (dot segments, odd characters) by urljoin."""

    def __init__(self, page_url: str) -> None:
        self.page_url = page_url
        parts = urlsplit(page_url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.directory = self.origin + parts.path.rsplit("/", 1)[0] + "/"
        self.requires: dict[str, str] = {}  # one string per distinct Requires-Python on the page

    def file(self, href: str, requires_python: str | None, yanked: bool,
             hashes: Mapping[str, Any] | None = None) -> IndexFile | None:
        href = href.strip()
        url = self._absolute(href)
        if url is None:
            return None
        url, _, fragment = url.partition("#")
        # the file name: the last segment of the URL's path (after its authority), unquoted
        rest = url.partition("://")[2]
        slash = rest.find("/")
        filename = rest[slash:].partition("?")[0].rpartition("/")[2] if slash >= 0 else ""
        if "%" in filename:
            filename = filename.replace("%2B", "+")  # the one escape of PyTorch's file names
            if "%" in filename:
                filename = unquote(filename)
        if not filename or "/" in filename or "\\" in filename or "\x00" in filename or len(filename) > 255:
            return None
        sha256 = None
        if hashes is not None:
            value = hashes.get("sha256")
            sha256 = value.lower() if isinstance(value, str) else None
        elif fragment.startswith("sha256="):
            sha256 = fragment[7:].lower()
        if sha256 is not None and not _SHA256.match(sha256):
            sha256 = None
        if requires_python is not None:
            requires_python = requires_python.strip() or None
            if requires_python is not None:
                requires_python = self.requires.setdefault(requires_python, requires_python)
        return IndexFile(filename, url, sha256, requires_python, yanked)

    def _absolute(self, href: str) -> str | None:
        """The absolute http(s) URL of ``href`` (fragment kept), or None for any other scheme or no URL."""
        if href and not ("./" in href or href[-1] == "." or "\t" in href or "\n" in href or "\r" in href
                         or "[" in href or "\\" in href):  # what only urljoin resolves right: dot segments, and
            # the characters it removes or reads specially
            if href.startswith(("https://", "http://")):
                return href
            if href[0] == "/":
                if href[:2] != "//":
                    return self.origin + href
            elif ":" not in href.partition("/")[0] and href[0] not in "?#":
                return self.directory + href
        try:
            url = urljoin(self.page_url, href)
            scheme = urlsplit(url).scheme
        except ValueError:  # "http://[::1": not a URL at all
            return None
        return url if scheme in ("http", "https") else None  # javascript:, data:, file: … are not files


def platform_listed(filename: str, platforms: Collection[str] | None) -> bool:
    """Whether a wheel file name's platform tag (its last ``-`` part; ``.``-joined when compressed) is one of
    ``platforms`` (any, when None)."""
    if platforms is None:
        return True
    tag = filename[:-4].rpartition("-")[2]
    if "%" in tag:  # as the file name is read: unquoted, then its last "-" part
        tag = unquote(tag).rpartition("-")[2]
    return _tag_listed(tag, platforms)


def _tag_listed(tag: str, platforms: Collection[str]) -> bool:
    """Whether a platform tag (``.``-joined when compressed) is, or holds, one of ``platforms``."""
    return tag in platforms or ("." in tag and any(p in platforms for p in tag.split(".")))


# ---- HTML (PEP 503) --------------------------------------------------------------------------------------------

# An anchor's start, where the text up to the next "<" (its tag, and its text) mentions ".whl": each byte is
# looked at by one start, so a page costs one pass whatever it holds. The shape index servers write (href first,
# then double-quoted data-* attributes) is read whole by the same match: its groups are the href and the data-*
# attributes. Any other shape leaves them None, for ``_TAG``.
_WHEEL_ANCHOR = re.compile(rb"<a\s(?=[^<]*?\.whl)(?-i:(?<=<a )href=\"([^\"&]*)\"((?: data-[a-z-]+=\"[^\"<>]*\")*)>)?",
                           re.IGNORECASE)
_QUOTED = rb'"[^"]{0,65536}"|\'[^\']{0,65536}\''
# The whole tag: any text, quoted values (which may hold "<" and ">") read as a whole, up to 64 of them.
_TAG = re.compile(rb"<a\s[^<>\"']*(?:(?:" + _QUOTED + rb")[^<>\"']*){0,64}>", re.IGNORECASE)
_ATTRIBUTE = re.compile(rb"([^\s\"'<>/=]+)(?:\s*=\s*(" + _QUOTED + rb"|[^\s\"'<>`]*))?")
_DATA_ATTRIBUTE = re.compile(rb' (data-[a-z-]+)="([^"]*)"')
# What is never markup: comments, and the text of scripts and styles.
_HIDDEN = re.compile(rb"<!--|<(script|style)(?=[\s/>])", re.IGNORECASE)
_HIDDEN_END = {b"script": re.compile(rb"</script", re.IGNORECASE), b"style": re.compile(rb"</style", re.IGNORECASE)}


def _hidden_spans(body: bytes | bytearray) -> tuple[list[int], list[int]]:
    """(starts, ends) of the comments, scripts and styles of a page, in order (an unclosed one runs to the end)."""
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    while (found := _HIDDEN.search(body, pos)) is not None:
        if found[1]:
            close = _HIDDEN_END[found[1].lower()].search(body, found.end())
            end = close.end() if close else len(body)
        else:
            close_at = body.find(b"-->", found.end())
            end = close_at + 3 if close_at >= 0 else len(body)
        starts.append(found.start())
        ends.append(end)
        pos = end
    return starts, ends


def _attributes(tag: bytes) -> dict[str, str | None]:
    """A tag's attributes as html.parser gives them: names lower-cased, values unquoted and unescaped (None for
    a name without a value), the last of a repeated name kept."""
    from html import unescape

    found: dict[str, str | None] = {}
    for attribute in _ATTRIBUTE.finditer(tag, 2, len(tag) - 1):
        name, value = attribute.groups()
        if value is None:
            found[name.decode("utf-8", "replace").lower()] = None
            continue
        if value[:1] in (b'"', b"'"):
            value = value[1:-1]
        text = value.decode("utf-8", "replace")
        found[name.decode("utf-8", "replace").lower()] = unescape(text) if "&" in text else text
    return found


def _html_files(data: bytes | bytearray, page_url: str, platforms: Collection[str] | None) -> Iterator[IndexFile]:
    """PEP 503 page: the anchors linking a ``.whl``, their ``#sha256=`` fragments, ``data-requires-python`` and
    ``data-yanked``. Anchors inside comments, scripts and styles are not links."""
    links = _Links(page_url)
    if data.count(b".whl") > MAX_PAGE_ENTRIES and sum(1 for _ in _WHEEL_ANCHOR.finditer(data)) > MAX_PAGE_ENTRIES:
        raise IndexUnavailable(f"{page_url}: lists more than {MAX_PAGE_ENTRIES:,} wheels")  # before building any
    hidden_starts, hidden_ends = _hidden_spans(data) if _HIDDEN.search(data) else ([], [])
    data_attributes = Memo(_data_attributes)  # a plain tag's data-* attributes, by its text
    count = pos = 0
    search = _WHEEL_ANCHOR.search
    while (anchor := search(data, pos)) is not None:
        at, pos = anchor.span()  # the search goes on after the tag: a "<a " in a value is no anchor
        if hidden_starts:
            i = bisect_right(hidden_starts, at) - 1
            if i >= 0 and at < hidden_ends[i]:
                continue
        plain_href = anchor[1]
        if plain_href is not None:
            href = plain_href.decode("utf-8", "replace")
            attrs: dict[str, str | None] | None = None
        else:
            tag = _TAG.match(data, at)
            if tag is None:
                continue
            pos = tag.end()
            attrs = _attributes(tag[0])
            href = attrs.get("href") or ""
        name = href.partition("#")[0].partition("?")[0].strip()
        if not name.lower().endswith(".whl"):
            continue
        count += 1
        if count > MAX_PAGE_ENTRIES:
            raise IndexUnavailable(f"{page_url}: lists more than {MAX_PAGE_ENTRIES:,} wheels")
        if not platform_listed(name.rpartition("/")[2], platforms):
            continue
        if attrs is None:
            found = data_attributes[anchor[2]]
            item = links.file(href, found.get("data-requires-python"), "data-yanked" in found)
        else:
            item = links.file(href, attrs.get("data-requires-python"), "data-yanked" in attrs)
        if item:
            yield item


def _data_attributes(text: bytes) -> dict[str, str]:
    """The ``data-*="…"`` attributes of a plain tag, their values unescaped (the last of a repeated name kept)."""
    from html import unescape

    found: dict[str, str] = {}
    for key, value in _DATA_ATTRIBUTE.findall(text):
        decoded = value.decode("utf-8", "replace")
        found[key.decode()] = unescape(decoded) if "&" in decoded else decoded
    return found


def parse_simple_html(body: bytes | bytearray | str, page_url: str, platforms: Collection[str] | None = None
                      ) -> list[IndexFile]:
    """The wheel files of a PEP 503 page (those of ``platforms`` only, when given)."""
    data = body.encode("utf-8", "surrogateescape") if isinstance(body, str) else body
    return list(_html_files(data, page_url, platforms))


# ---- JSON (PEP 691) --------------------------------------------------------------------------------------------

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRING_RE = re.compile(_STRING)
_SCALAR = re.compile(_STRING + rb"|-?[0-9][0-9.eE+-]*|true|false|null")
_PLAIN = rb'[^{}\[\]"]*'
_FLAT_OBJECT = rb"\{" + _PLAIN + rb"(?:" + _STRING + _PLAIN + rb")*\}"
# A file entry: an object of strings, numbers, literals and flat objects (hashes, core-metadata), no arrays.
_FILE_ENTRY = rb"\{" + _PLAIN + rb"(?:(?:" + _STRING + rb"|" + _FLAT_OBJECT + rb")" + _PLAIN + rb")*\}"
_ENTRY_THEN = re.compile(rb"[ \t\n\r]*(" + _FILE_ENTRY + rb")[ \t\n\r]*(,|\])")
_TOKEN = re.compile(_STRING + rb"|[\[\]{}]")
_WHL = re.compile(rb"\.whl", re.IGNORECASE)


class _Json:
    """A PEP 691 page read from its bytes: the structure walked with regular expressions, only the file entries
    that mention ``.whl`` decoded (``json.loads`` of each entry alone)."""

    def __init__(self, body: bytes | bytearray, page_url: str) -> None:
        self.body, self.page_url, self.pos = body, page_url, 0

    def fail(self, why: str) -> IndexUnavailable:
        return IndexUnavailable(f"{self.page_url}: {why}")

    def skip_space(self) -> int:
        self.pos = _WS.match(self.body, self.pos).end()  # type: ignore[union-attr]  # matches the empty string
        return self.body[self.pos] if self.pos < len(self.body) else -1

    def expect(self, char: bytes) -> None:
        if self.skip_space() != char[0]:
            raise self.fail("not valid JSON (truncated, or not a JSON page)")
        self.pos += 1

    def skip_value(self) -> None:
        """Past one value, checking that its strings end and its brackets balance (without building it)."""
        self.skip_space()
        scalar = _SCALAR.match(self.body, self.pos)
        if scalar:
            self.pos = scalar.end()
            return
        if self.pos >= len(self.body) or self.body[self.pos] not in b"[{":
            raise self.fail("not valid JSON")
        depth = 0
        for token in _TOKEN.finditer(self.body, self.pos):
            first = token[0][0]
            if first in b"[{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise self.fail("JSON nested too deeply for a project page")
            elif first in b"]}":
                depth -= 1
                if depth == 0:
                    self.pos = token.end()
                    return
        raise self.fail("not valid JSON (truncated)")

    def files(self, platforms: Collection[str] | None) -> Iterator[IndexFile]:
        """The page's wheel files (of ``platforms``), the whole page checked to be one JSON object."""
        if self.skip_space() != b"{"[0]:
            raise self.fail("not a PEP 691 project page (no 'files' list)")
        self.pos += 1
        found_files = False
        while self.skip_space() != b"}"[0]:
            key = _STRING_RE.match(self.body, self.pos)
            if key is None:
                raise self.fail("not valid JSON")
            self.pos = key.end()
            self.expect(b":")
            name = key[0] if b"\\" not in key[0] else json.loads(key[0]).encode()
            if name in (b'"files"', b"files") and self.skip_space() == b"["[0]:
                found_files = True
                yield from self.entries(platforms)
            else:
                self.skip_value()
            if self.skip_space() == b","[0]:
                self.pos += 1
            elif self.skip_space() != b"}"[0]:
                raise self.fail("not valid JSON (truncated)")
        self.pos += 1
        if self.skip_space() != -1:
            raise self.fail("not valid JSON (data after the page)")
        if not found_files:
            raise self.fail("not a PEP 691 project page (no 'files' list)")

    def entries(self, platforms: Collection[str] | None) -> Iterator[IndexFile]:
        """The ``files`` array from its ``[``: each entry that is a file object naming a ``.whl`` (of
        ``platforms``), decoded alone; every other entry skipped. One regular-expression match takes a file entry
        and what follows it."""
        links = _Links(self.page_url)
        body, count = self.body, 0
        self.pos += 1
        if self.skip_space() == b"]"[0]:
            self.pos += 1
            return
        pos = self.pos
        while True:
            count += 1
            if count > MAX_PAGE_ENTRIES:
                raise self.fail(f"lists more than {MAX_PAGE_ENTRIES:,} files")
            entry = _ENTRY_THEN.match(body, pos)
            if entry is not None:
                text = entry[1]
                if len(text) <= MAX_ENTRY_BYTES and (b".whl" in text or _WHL.search(text)) and _names_platform(
                        text, platforms):
                    item = _json_file(text, links)
                    if item:
                        yield item
                pos = entry.end()
                if entry[2] == b"]":
                    break
                continue
            self.pos = pos
            self.skip_value()  # an entry of another shape: never a file
            after = self.skip_space()
            pos = self.pos + 1
            if after == b"]"[0]:
                break
            if after != b","[0]:
                raise self.fail("not valid JSON (truncated)")
        self.pos = pos


# A string's "-TAG.whl": the TAG after its last "-" (which may hold an escape or a percent-escape).
_WHEEL_NAME_END = re.compile(rb'-([^-"/]*)\.whl', re.IGNORECASE)


def _names_platform(text: bytes | bytearray, platforms: Collection[str] | None) -> bool:
    """Whether a JSON file entry may name a wheel of one of ``platforms``, by its text. The name the entry is read
    by (its file name, else its URL's last segment) ends in one of the ``-TAG.whl`` the text holds: one whose TAG
    is listed keeps the entry, and so does one that only decoding reads (an escape), or a text with none."""
    if platforms is None:
        return True
    tags = _WHEEL_NAME_END.findall(text)
    if not tags:
        return True
    for tag in tags:
        if b"\\" in tag:
            return True
        if b"%" in tag:  # as the URL's file name is read: unquoted, then its last "-" part
            tag = unquote_to_bytes(tag).rpartition(b"-")[2]
        name = tag.decode("ascii", "replace")
        if _tag_listed(name, platforms):
            return True
    return False


# json.loads' own scanner, called on each entry's text: no per-call encoding detection, decoder lookup or
# whitespace skipping (an entry's text is one object, from its "{" to its "}")
_SCAN_VALUE = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__, not in the stubs


def _json_file(text: bytes | bytearray, links: _Links) -> IndexFile | None:
    try:
        string = text.decode("utf-8")
        entry, end = _SCAN_VALUE(string, 0)
    except (ValueError, StopIteration):  # not UTF-8, or not JSON
        return None
    if end != len(string):
        return None
    url = entry.get("url")
    if not isinstance(url, str):
        return None
    hashes = entry.get("hashes") if isinstance(entry.get("hashes"), dict) else {}
    requires_python = entry.get("requires-python")
    item = links.file(url, requires_python if isinstance(requires_python, str) else None, bool(entry.get("yanked")),
                      hashes)
    name = entry.get("filename")
    if item and isinstance(name, str) and name != item.filename and "/" not in name:
        item = item._replace(filename=name)
    return item if item and item.filename.lower().endswith(".whl") else None


def parse_simple_json(body: bytes | bytearray | str, page_url: str, platforms: Collection[str] | None = None
                      ) -> list[IndexFile]:
    """The wheel files of a PEP 691 page: ``files[]`` of {filename, url, hashes, requires-python, yanked} (those
    of ``platforms`` only, when given)."""
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return list(_Json(data, page_url).files(platforms))


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == JSON_CONTENT_TYPE


def parse_page(body: bytes | bytearray, content_type: str, page_url: str, platforms: Collection[str] | None = None
               ) -> list[IndexFile]:
    """The wheel files of a simple page, by its Content-Type (JSON for PEP 691, HTML otherwise); of
    ``platforms`` only, when given."""
    if _is_json(content_type):
        return parse_simple_json(body, page_url, platforms)
    return parse_simple_html(body, page_url, platforms)


def iter_page(body: bytes | bytearray, content_type: str, page_url: str, platforms: Collection[str] | None = None
              ) -> Iterator[IndexFile]:
    """``parse_page``'s files one at a time, as the page is read: a large page's entries are never all held."""
    if _is_json(content_type):
        return _Json(body, page_url).files(platforms)
    return _html_files(body, page_url, platforms)


def lists_wheels_of(body: bytes | bytearray, content_type: str, page_url: str, project: str) -> bool:
    """Whether the page lists a wheel of ``project`` (read up to the first one): a maintenance or error page
    served with status 200 lists none."""
    prefix = project.lower().replace("-", "_") + "-"
    files = _Json(body, page_url).files(None) if _is_json(content_type) else _html_files(body, page_url, None)
    return any(f.filename.lower().startswith(prefix) and f.filename.endswith(".whl") for f in files)


# ---- wheels ----------------------------------------------------------------------------------------------------

class Wheel(Record):
    """A wheel file of the index, its filename parsed. ``label`` is the local version label ('' if none)."""

    project: str
    version: str  # public version, "2.16.0"
    label: str  # "cu134", "rocm7.14", "xpu", "cpu", ""
    tags: frozenset[str]  # "cp312-cp312-manylinux_2_28_x86_64", …
    file: IndexFile

    @property
    def full_version(self) -> str:
        return f"{self.version}+{self.label}" if self.label else self.version


# A wheel file name already in packaging's normal form (lower-case name, a release of plain numbers, a local label
# of lower-case words and numbers without leading zeros, no build tag): read by string operations, to the same
# answer packaging gives.
_NORMAL_WHEEL = re.compile(r"([a-z0-9]+(?:_[a-z0-9]+)*)-((?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*)"
                           r"(?:\+((?:[a-z0-9]*[a-z][a-z0-9]*|0|[1-9][0-9]*)"
                           r"(?:\.(?:[a-z0-9]*[a-z][a-z0-9]*|0|[1-9][0-9]*))*))?"
                           r"-([a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+)\.whl")


def _normal_wheel(filename: str, tag_sets: Memo | None = None) -> tuple[str, str, str, frozenset[str]] | None:
    """(canonical name, public version, local label, tags) of a wheel name in normal form, else None.
    ``tag_sets``: a ``Memo(_tag_set)`` of the page, whose names repeat a few tag sets."""
    found = _NORMAL_WHEEL.fullmatch(filename)
    if found is None:
        return None
    name, version, label, tag = found.groups()
    tags = tag_sets[tag] if tag_sets is not None else _tag_set(tag)
    return name.replace("_", "-"), version, label or "", tags


def _tag_set(tag: str) -> frozenset[str]:
    """The tags a wheel name's "python-abi-platform" part names: itself, or each of a compressed one."""
    if "." not in tag:
        return frozenset((tag,))
    python, abi, platform = tag.split("-")
    return frozenset("-".join(parts) for parts in expand_tag(python, abi, platform))


def parse_wheels(files: Iterable[IndexFile], project: str, platforms: Collection[str] | None = None
                 ) -> list[Wheel]:
    """The files that are wheels of ``project`` (valid wheel filenames, not yanked); everything else is skipped.
    With ``platforms``, only wheels with one of those platform tags (tested on the file name before parsing).
    Names in normal form are read by ``_normal_wheel``, any other by packaging."""
    return list(iter_wheels(files, project, platforms))


def iter_wheels(files: Iterable[IndexFile], project: str, platforms: Collection[str] | None = None
                ) -> Iterator[Wheel]:
    """``parse_wheels``'s wheels one at a time, as ``files`` yields them."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wanted = canonicalize_name(project)
    tag_sets = Memo(_tag_set)
    for item in files:
        filename = item.filename
        if item.yanked or not filename.endswith(".whl"):
            continue
        if platforms is not None and not _tag_listed(filename[:-4].rpartition("-")[2], platforms):
            continue
        normal = _normal_wheel(filename, tag_sets)
        if normal is not None:
            name, version, label, tags = normal
        else:
            try:
                name, parsed, _build, tag_set = parse_wheel_filename(filename)
            except (InvalidWheelFilename, ValueError):
                continue
            version, label, tags = parsed.public, parsed.local or "", frozenset(str(t) for t in tag_set)
        if name != wanted:
            continue
        yield Wheel(name, version, label, tags, item)
