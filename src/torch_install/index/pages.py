"""Simple-index pages as data: the wheel files a PEP 691 JSON or PEP 503 HTML project page lists, and the wheels
among them (file names parsed with packaging). Every failure to read a page is an :class:`IndexUnavailable`.

A page is scanned, never parsed whole: regular expressions over its bytes find the anchors (HTML) or the
``files`` entries (JSON) that name a ``.whl``, and only those are decoded. Given the target's ``platforms``, a
wheel whose file name carries none of them is passed over by a string test before anything else is made of it.
What a page costs in memory is its bytes and the wheel files kept, whatever else it holds; a page of more than
``MAX_PAGE_ENTRIES`` entries is refused. ``parse_wheels`` reads file names in packaging's normal form by string
operations (checked against packaging by the tests), any other through packaging.

Online mode reads a page's wheels as ``PageWheels``: a page of the common shape (the anchors or the one layout of
entry that index servers write, file names in normal form) by one pattern that reads each file name's release and
tags where it finds them, a file's record (URL, sha256, requires-python) made only for the files asked for; any
other anchor or entry by the general reading, to the same answer (tests/test_page_wheels.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from ..records import Record
from ..wheel_tags import expand_tag
from .simple import JSON_CONTENT_TYPE
from .simple import IndexUnavailable as IndexUnavailable  # every reader of a page raises it

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any, AnyStr

MAX_PAGE_ENTRIES = 500_000  # wheel anchors of an HTML page, entries of a JSON page's files (the largest real: ~10^4)
MAX_ENTRY_BYTES = 64 * 1024  # a JSON file entry larger than this is no file of an index
MAX_DEPTH = 512  # JSON nesting outside the file entries
MEMO_LIMIT = 1024  # distinct keys a Memo keeps
PAGE_BYTES_PER_KEY = 2048  # and on a large page, one per this many of its bytes

class _Pattern:
    """A regular expression compiled when first used: a run that reads no page (a revalidation answered 304, a warm
    plan) compiles none of the page patterns. Each method used is then the compiled pattern's own."""

    def __init__(self, source: str | bytes, flags: int = 0) -> None:
        self._source, self._flags = source, flags

    def __getattr__(self, name: str) -> Any:
        method = getattr(re.compile(self._source, self._flags), name)
        setattr(self, name, method)  # found directly from now on
        return method


def _pattern(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    return _Pattern(source, flags)  # type: ignore[return-value]  # it has every method of the pattern it compiles


_SHA256 = _pattern(r"^[0-9a-f]{64}$")


class Memo(dict):  # keys and values of any type, as each use has them
    """What a page repeats over its thousands of files (tag sets, labels, data-* attribute texts): ``compute`` of a
    key is worked out once. At most ``limit`` keys are kept (``MEMO_LIMIT``, or one per ``PAGE_BYTES_PER_KEY``
    bytes of a large page), so a page whose every file differs costs little more memory than its bytes; past that,
    each is worked out again."""

    def __init__(self, compute: Callable[[Any], Any], limit: int = MEMO_LIMIT) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit

    def __missing__(self, key: Any) -> Any:
        value = self.compute(key)
        if len(self) < self.limit:
            self[key] = value
        return value


def memo_limit(size: int) -> int:
    """How many keys a Memo of a page of ``size`` bytes keeps."""
    return max(MEMO_LIMIT, size // PAGE_BYTES_PER_KEY)


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
_WHEEL_ANCHOR = _pattern(rb"<a\s(?=[^<]*?\.whl)(?-i:(?<=<a )href=\"([^\"&]*)\"((?: data-[a-z-]+=\"[^\"<>]*\")*)>)?",
                           re.IGNORECASE)
_QUOTED = rb'"[^"]{0,65536}"|\'[^\']{0,65536}\''
# The whole tag: any text, quoted values (which may hold "<" and ">") read as a whole, up to 64 of them.
_TAG = _pattern(rb"<a\s[^<>\"']*(?:(?:" + _QUOTED + rb")[^<>\"']*){0,64}>", re.IGNORECASE)
_ATTRIBUTE = _pattern(rb"([^\s\"'<>/=]+)(?:\s*=\s*(" + _QUOTED + rb"|[^\s\"'<>`]*))?")
_DATA_ATTRIBUTE = _pattern(rb' (data-[a-z-]+)="([^"]*)"')
# What is never markup: comments, and the text of scripts and styles.
_HIDDEN_START = rb"!--|(?i:(script|style))(?=[\s/>])"  # after its "<"
_HIDDEN = _pattern(b"<(?:" + _HIDDEN_START + b")")
_HIDDEN_LONGEST = len(b"<script>")  # what a search for one that starts at a place reads of the page
_HIDDEN_END = {b"script": _pattern(rb"</script", re.IGNORECASE), b"style": _pattern(rb"</style", re.IGNORECASE)}


def _hidden_end(body: bytes | bytearray, after: int, element: bytes | None) -> int:
    """Where a comment (``element`` None) or a script or style opened before ``after`` ends."""
    if element:
        close = _HIDDEN_END[element.lower()].search(body, after)
        return close.end() if close else len(body)
    close_at = body.find(b"-->", after)
    return close_at + 3 if close_at >= 0 else len(body)


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
    _check_anchor_count(data, page_url)
    anchors = _Anchors(data, page_url, platforms)
    count = pos = 0
    search = _WHEEL_ANCHOR.search
    while (anchor := search(data, pos)) is not None:
        if anchors.hidden(anchor.start()):
            pos = anchor.end()
            continue
        pos, wheel, item = anchors.read(anchor)  # the search goes on after the tag: a "<a " in a value is no anchor
        if wheel:
            count += 1
            if count > MAX_PAGE_ENTRIES:
                raise IndexUnavailable(f"{page_url}: lists more than {MAX_PAGE_ENTRIES:,} wheels")
        if item:
            yield item


def _check_anchor_count(data: bytes | bytearray, page_url: str) -> None:
    """IndexUnavailable for a page of more than ``MAX_PAGE_ENTRIES`` wheel anchors, before building any."""
    if data.count(b".whl") > MAX_PAGE_ENTRIES and sum(1 for _ in _WHEEL_ANCHOR.finditer(data)) > MAX_PAGE_ENTRIES:
        raise IndexUnavailable(f"{page_url}: lists more than {MAX_PAGE_ENTRIES:,} wheels")


class _Anchors:
    """Reads the anchors of one page, in order: where its comments, scripts and styles are (no anchor there is a
    link; found as far as the anchors asked about), and what a plain anchor's data-* attributes say, each text
    once."""

    def __init__(self, data: bytes | bytearray, page_url: str, platforms: Collection[str] | None) -> None:
        self.data, self.platforms = data, platforms
        self.links = _Links(page_url)
        self.data_attributes = Memo(_data_attributes)  # a plain tag's data-* attributes, by its text
        self._searched = 0  # every comment, script or style that starts before this is known
        self._hidden_end = 0  # where the last of them ends

    def hidden(self, at: int) -> bool:
        """Whether the anchor at ``at`` (after those asked about before) is inside a comment, a script or a style."""
        while self._searched <= at:
            found = _HIDDEN.search(self.data, self._searched, at + _HIDDEN_LONGEST)
            if found is None or found.start() > at:
                self._searched = at + 1 if found is None else found.start()
                break
            self._searched = self._hidden_end = _hidden_end(self.data, found.end(), found[1])
        return at < self._hidden_end

    def read(self, anchor: re.Match[bytes]) -> tuple[int, bool, IndexFile | None]:
        """(where its tag ends, whether it links a ``.whl``, its file when of the platforms) for an anchor that
        ``_WHEEL_ANCHOR`` found."""
        plain_href = anchor[1]
        if plain_href is not None:
            end = anchor.end()
            href = plain_href.decode("utf-8", "replace")
            attrs: Mapping[str, str | None] | None = None
        else:
            tag = _TAG.match(self.data, anchor.start())
            if tag is None:
                return anchor.end(), False, None
            end = tag.end()
            attrs = _attributes(tag[0])
            href = attrs.get("href") or ""
        name = href.partition("#")[0].partition("?")[0].strip()
        if not name.lower().endswith(".whl"):
            return end, False, None
        if not platform_listed(name.rpartition("/")[2], self.platforms):
            return end, True, None
        if attrs is None:
            attrs = self.data_attributes[anchor[2]]
        return end, True, self.links.file(href, attrs.get("data-requires-python"), "data-yanked" in attrs)


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

_WS = _pattern(rb"[ \t\n\r]*")
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_STRING_RE = _pattern(_STRING)
_SCALAR = _pattern(_STRING + rb"|-?[0-9][0-9.eE+-]*|true|false|null")
_PLAIN = rb'[^{}\[\]"]*'
_FLAT_OBJECT = rb"\{" + _PLAIN + rb"(?:" + _STRING + _PLAIN + rb")*\}"
# A file entry: an object of strings, numbers, literals and flat objects (hashes, core-metadata), no arrays.
_FILE_ENTRY = rb"\{" + _PLAIN + rb"(?:(?:" + _STRING + rb"|" + _FLAT_OBJECT + rb")" + _PLAIN + rb")*\}"
_ENTRY_THEN = _pattern(rb"[ \t\n\r]*(" + _FILE_ENTRY + rb")[ \t\n\r]*(,|\])")
_TOKEN = _pattern(_STRING + rb"|[\[\]{}]")
_WHL = _pattern(rb"\.whl", re.IGNORECASE)


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
        return self.walk(lambda: self.entries(platforms))

    def walk(self, read_files: Callable[[], Iterator[Any]]) -> Iterator[Any]:
        """What ``read_files`` yields from the ``files`` array (it starts at its ``[`` and leaves ``pos`` after its
        ``]``), the whole page checked to be one JSON object."""
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
                yield from read_files()
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
        ``platforms``), decoded alone; every other entry skipped."""
        links = _Links(self.page_url)
        pos = self.open_array()
        count = 0
        while pos >= 0:
            count += 1
            if count > MAX_PAGE_ENTRIES:
                raise self.fail(f"lists more than {MAX_PAGE_ENTRIES:,} files")
            pos, item = self.entry(pos, links, platforms)
            if item:
                yield item

    def open_array(self) -> int:
        """Past the ``files`` array's ``[``: where its first entry is, or -1 (``pos`` past the ``]``) when empty."""
        self.pos += 1
        if self.skip_space() == b"]"[0]:
            self.pos += 1
            return -1
        return self.pos

    def entry(self, pos: int, links: _Links, platforms: Collection[str] | None) -> tuple[int, IndexFile | None]:
        """The entry at ``pos`` (a file of ``platforms``, or None) and where the next one is: -1 (``pos`` past the
        array's ``]``) after the last. One regular-expression match takes a file entry and what follows it."""
        entry = _ENTRY_THEN.match(self.body, pos)
        if entry is not None:
            text = entry[1]
            item = None
            if len(text) <= MAX_ENTRY_BYTES and (b".whl" in text or _WHL.search(text)) and _names_platform(
                    text, platforms):
                item = _json_file(text, links)
            if entry[2] == b"]":
                self.pos = entry.end()
                return -1, item
            return entry.end(), item
        self.pos = pos
        self.skip_value()  # an entry of another shape: never a file
        after = self.skip_space()
        self.pos += 1
        if after == b"]"[0]:
            return -1, None
        if after != b","[0]:
            raise self.fail("not valid JSON (truncated)")
        return self.pos, None


# A string's "-TAG.whl": the TAG after its last "-" (which may hold an escape or a percent-escape).
_WHEEL_NAME_END = _pattern(rb'-([^-"/]*)\.whl', re.IGNORECASE)


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


# A wheel file name already in packaging's normal form (lower-case name; a release of plain numbers, with an a, b or
# rc pre-release, a post- and a dev-release in their canonical spelling; a local label of lower-case words and numbers
# without leading zeros; no build tag): read by string operations, to the same answer packaging gives.
_NUMBER = r"(?:0|[1-9][0-9]*)"
_LABEL_PART = r"(?:[a-z0-9]*[a-z][a-z0-9]*|0|[1-9][0-9]*)"
_RELEASE = (rf"({_NUMBER}(?:\.{_NUMBER})*(?:(?:a|b|rc){_NUMBER})?(?:\.post{_NUMBER})?(?:\.dev{_NUMBER})?)"
            rf"(?:\+({_LABEL_PART}(?:\.{_LABEL_PART})*))?")
_TAGS = r"[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+"
_NORMAL_WHEEL = _pattern(rf"([a-z0-9]+(?:_[a-z0-9]+)*)-{_RELEASE}-({_TAGS})\.whl")


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
    from packaging.utils import canonicalize_name

    wanted = canonicalize_name(project)
    tag_sets = Memo(_tag_set)
    for item in files:
        read = _read_wheel(item, wanted, platforms, tag_sets)
        if read is not None:
            yield Wheel(wanted, *read, item)


def _read_wheel(item: IndexFile, wanted: str, platforms: Collection[str] | None, tag_sets: Memo
                ) -> tuple[str, str, frozenset[str]] | None:
    """(version, local label, tags) of a file that is a wheel of the project ``wanted`` (canonical) for
    ``platforms`` and not yanked, else None."""
    filename = item.filename
    if item.yanked or not filename.endswith(".whl"):
        return None
    if platforms is not None and not _tag_listed(filename[:-4].rpartition("-")[2], platforms):
        return None
    normal = _normal_wheel(filename, tag_sets)
    if normal is not None:
        name, version, label, tags = normal
    else:
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename

        try:
            name, parsed, _build, tag_set = parse_wheel_filename(filename)
        except (InvalidWheelFilename, ValueError):
            return None
        version, label, tags = parsed.public, parsed.local or "", frozenset(str(t) for t in tag_set)
    return (version, label, tags) if name == wanted else None


# ---- the common shape ------------------------------------------------------------------------------------------

# What index servers write: every anchor ``<a href="PREFIX/NAME…">`` with double-quoted data-* attributes (HTML),
# or one kind of entry object over and over (JSON), naming a wheel of the project in normal form. Such a page is
# read by one pattern that takes a file name's release (version, local label) and tags as it finds the anchor or
# entry; what they repeat (tag sets, releases, prefixes, attributes) is checked once, and a file's record (URL,
# sha256, requires-python) is made only for the files asked for. A page of any other shape is read by the general
# path above, to the same answer (tests/test_page_scan.py).

Release = tuple  # (public version, local label): one object per distinct release of a page
Row = tuple  # (Release, tags, ref): ref, the file's record or where on the page it is read from

_COMMON_TAGS = _pattern(rf"{_TAGS}\.whl")
_COMMON_RELEASE = _pattern(_RELEASE)
_PLAIN_ATTRIBUTES = _pattern(rb'(?: data-[a-z-]+="[^"<>]*")*')
_PLAIN_PROJECT = _pattern(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NAME_LIMIT = 255  # the longest file name a file record takes (``_Links.file``)


def _common_anchor(project: str) -> re.Pattern[bytes]:
    """An anchor of the common shape for ``project`` (a plain name): its href's head (directory, name, release),
    the tags (to the end of the href) and its attributes; else any other anchor's start (4), or where a comment, a
    script or a style starts (5, 6: which element). Only literals and single-character exclusions: one pass."""
    name = re.escape(project.replace("-", "_").encode())
    return re.compile(rb'<(?:a href="([^"]*/' + name + rb'-[^-]*)-([^"]*)"([^>]*)>|([aA]\s)|(' + _HIDDEN_START
                      + rb"))")  # every branch after one "<": the search skips to each "<"


class _Common:
    """What one page's files repeat, each checked once (``Memo``): a tag text's tags (None: another platform;
    False: not the common shape), a release text (None: not in normal form), a link's head (its directory, the
    project's name and the release: the release, when a file record of the name is that name; else None) and an
    anchor's attributes (True; None: yanked; False: another shape)."""

    def __init__(self, page_url: str, project: str, platforms: Collection[str] | None, html: bool, size: int) -> None:
        self.links = _Links(page_url)
        self.name = f"{project.replace('-', '_')}-".encode()
        self.probe = f"{project.replace('-', '_')}-0-py3-none-any.whl"
        self.platforms = platforms
        self.html = html
        limit = memo_limit(size)
        self.tags = Memo(self._tags, limit)
        self.releases = Memo(lambda text: self._release(text, False), limit)
        self.heads = Memo(self._head, limit)
        self.attributes = Memo(self._attributes, limit)
        self.limit = _NAME_LIMIT - len(project) - 2  # what a release and tags may take of a file name
        self.tag_sets = Memo(_tag_set)  # for the general reading of a file

    def _tags(self, text: bytes) -> frozenset[str] | None | bool:
        """``cp312-cp312-manylinux_2_28_x86_64.whl``: its tags when of the platforms; None for another platform."""
        if not text.isascii() or len(text) > self.limit // 2:
            return False
        name = text.decode()
        if not _COMMON_TAGS.fullmatch(name):
            return False
        name = name[:-4]
        if self.platforms is not None and not _tag_listed(name.rpartition("-")[2], self.platforms):
            return None
        return _tag_set(name)

    def _release(self, text: bytes, in_url: bool) -> Release | None:
        """``2.9.1+cu128`` (``%2B`` for ``+`` in a URL): (version, label), or None."""
        if not text.isascii() or len(text) > self.limit // 2:
            return None
        release = text.decode()
        if in_url:
            release = release.replace("%2B", "+")
        found = _COMMON_RELEASE.fullmatch(release)
        return (found[1], found[2] or "") if found else None

    def _head(self, text: bytes) -> Release | None:
        """``/whl/cu128/torch-2.9.1%2Bcu128``: the release, when a file of the project named so in that directory
        is a file of that name (``_Links.file``); else None."""
        directory, slash, name = text.rpartition(b"/")
        if not slash or not name.startswith(self.name):
            return None
        if self.html and (b"&" in directory or b"<" in directory or b">" in directory):  # entities, and no anchor
            return None
        item = self.links.file(directory.decode("utf-8", "replace") + "/" + self.probe, None, False)
        if item is None or item.filename != self.probe:
            return None
        return self._release(name[len(self.name):], True)

    @staticmethod
    def _attributes(text: bytes) -> bool | None:
        if not _PLAIN_ATTRIBUTES.fullmatch(text):
            return False
        return None if "data-yanked" in _data_attributes(text) else True


def _common_html_rows(data: bytes | bytearray, page_url: str, project: str, platforms: Collection[str] | None
                      ) -> list[Row] | None:
    """The rows of a page, its anchors of the common shape read by ``_common_anchor``, any other by the general
    path, to the same answer; None when an anchor is not what the common reading takes it for. An anchor of the
    common shape holds no "<" but its first: nothing the general reading would take for a tag is passed over."""
    common = _Common(page_url, project, platforms, html=True, size=len(data))
    tags_of, heads, attributes = common.tags, common.heads, common.attributes
    anchors: _Anchors | None = None  # the general reading, once an anchor needs it
    rows: list[Row] = []
    count = hidden_until = tag_until = blocked = 0  # where the comment (script, style) and the tag read last end
    for found in _common_anchor(project).finditer(data):
        head, rest, attrs, _, opened, element = found.groups()
        if head is not None and not (blocked and found.start() < blocked):
            tags = tags_of[rest.partition(b"#")[0]]
            if tags is None:  # another platform
                if attributes[attrs] is not False and heads[head] is not None:
                    count += 1
                    continue
            elif tags is not False:
                kept = attributes[attrs]
                release = heads[head]
                if kept is not False and release is not None:
                    count += 1
                    if kept:  # not yanked
                        if count > MAX_PAGE_ENTRIES:
                            break
                        rows.append((release, tags, found.start()))
                    continue
        at = found.start()  # anything else, as the general path reads it
        if opened is not None:
            if at >= hidden_until:
                hidden_until = _hidden_end(data, found.end(), element)
                blocked = max(hidden_until, tag_until)
            continue
        if at < tag_until:  # inside a tag the general path read (the search goes on where it ends)
            if found.end() > tag_until and data.find(b"<", tag_until, found.end()) >= 0:
                return None
            continue
        if head is not None and b"<" in found[0][1:]:  # what the general reading may take for a tag of its own
            return None
        anchor = _WHEEL_ANCHOR.match(data, at)
        if anchor is None:
            continue
        if at < hidden_until:
            tag_until = anchor.end()
        else:
            if anchors is None:
                anchors = _Anchors(data, page_url, platforms)
            tag_until, wheel, item = anchors.read(anchor)
            count += wheel
            if item is not None and (read := _read_wheel(item, project, platforms, common.tag_sets)) is not None:
                rows.append(((read[0], read[1]), read[2], item))
        blocked = max(hidden_until, tag_until)
    if count > MAX_PAGE_ENTRIES:
        raise IndexUnavailable(f"{page_url}: lists more than {MAX_PAGE_ENTRIES:,} wheels")
    return rows


def _html_file_at(data: bytes | bytearray, at: int, links: _Links) -> IndexFile | None:
    """The record of the common-shape anchor at ``at``, as the general reading makes it."""
    anchor = _WHEEL_ANCHOR.match(data, at)
    if anchor is None or anchor[1] is None:
        return None
    found = _data_attributes(anchor[2])
    return links.file(anchor[1].decode("utf-8", "replace"), found.get("data-requires-python"), "data-yanked" in found)


_CONTROLS = [bytes((c,)) for c in range(32) if c != 10]  # all but the line end
_SHAPE_TOKEN = _pattern(rb'"[^"]*"|-?[0-9][0-9.eE+-]*|true|false|null|[{}:,]|[ \n]+')
_JSON_NUMBER = rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_VALUE_OF = {b'"': rb'(?:"[^"]*"|null)', b"t": rb"(?:true|false|null)", b"f": rb"(?:true|false|null)",
             b"n": rb'(?:"[^"]*"|true|false|null)'}  # by a value's first character; numbers: _JSON_NUMBER


def _plain_json(body: bytes | bytearray) -> bool | None:
    """Whether a page's strings are read by ``"[^"]*"`` (ASCII, no escape, no control character but for line ends
    and the blanks around the page), and if so whether it has line ends (which a string must not hold: each entry
    read so is checked to hold those of its layout); None when not."""
    if not body.isascii() or b"\\" in body:
        return None
    start, end = _WS.match(body).end(), len(body)  # type: ignore[union-attr]  # matches the empty string
    while end > start and body[end - 1] in b" \t\n\r":
        end -= 1
    if any(body.find(control, start, end) >= 0 for control in _CONTROLS):  # one fast search each
        return None
    return body.find(b"\n", start, end) >= 0


def _entry_shape(text: bytes | bytearray, after: bytes | bytearray, project: str) -> re.Pattern[bytes] | None:
    """The pattern of entries laid out as ``text`` is and followed as ``after`` (its blanks, ``,`` or ``]``, blanks)
    is: the same keys in the same order, blanks alike, values of the same kinds, ``yanked`` as false or null, the
    URL's last segment the file name. Its groups: the file name's release and tags, the URL's head (directory,
    name, release), and the ``,`` after the entry (None after the last). None for an entry that is no plain file object,
    or names its URL before its file name."""
    try:
        entry, end = _SCAN_VALUE(text.decode(), 0)
    except (ValueError, StopIteration):
        return None
    if not (end == len(text) and isinstance(entry, dict) and isinstance(entry.get("filename"), str)
            and isinstance(entry.get("url"), str) and entry.get("yanked", False) in (False, None)):
        return None
    name = re.escape(project.replace("-", "_").encode())
    parts: list[bytes] = []
    keys: list[bytes] = []
    depth, key, after_colon, at = 0, b"", False, 0
    for token in _SHAPE_TOKEN.finditer(text):
        if token.start() != at:  # an array, or a string the tokens do not read alike
            return None
        at = token.end()
        value = token[0]
        first = value[:1]
        if first in b"{}":
            depth += 1 if first == b"{" else -1
            if depth > 2:
                return None
            parts.append(re.escape(value))
            after_colon = False
        elif first == b":":
            parts.append(value)
            after_colon = True
        elif first in b", \n":
            parts.append(re.escape(value))
        elif not after_colon:  # a key
            if depth == 1:
                keys.append(value)
            key = value
            parts.append(re.escape(value))
        else:
            after_colon = False
            if depth == 1 and key == b'"filename"':
                parts.append(rb'"' + name + rb'-([^-]*)-([^"]*)"')
            elif depth == 1 and key == b'"url"':
                if b'"filename"' not in keys:
                    return None
                parts.append(rb'"([^"]*/' + name + rb'-[^-]*)-\2(?:#[^"]*)?"')
            elif depth == 1 and key == b'"yanked"':
                parts.append(value)
            else:
                parts.append(_VALUE_OF.get(first, _JSON_NUMBER))
    if at != len(text) or depth != 0 or len(keys) != len(set(keys)) or len(keys) != len(entry):
        return None
    blank, comma, rest = bytes(after).partition(b",")
    tail = re.escape(blank) + (rb"(?:(,)" + re.escape(rest) + rb"|\])" if comma else rb"()\]")
    return re.compile(b"".join(parts) + tail)


class _CommonJson(_Json):
    """A PEP 691 page whose entries are mostly of one plain layout (learnt from the first entry): those read by its
    pattern, any other by the general reading of one entry."""

    def rows(self, project: str, platforms: Collection[str] | None) -> list[Row] | None:
        """The rows of the page, or None when its strings are not plain or its first entry is no plain file."""
        lines = _plain_json(self.body)
        if lines is None:
            return None
        try:
            return [row for rows in self.walk(lambda: self._rows(project, platforms, lines)) for row in rows]
        except _NotCommon:
            return None

    def _rows(self, project: str, platforms: Collection[str] | None, lines: bool) -> Iterator[list[Row]]:
        body = self.body
        common = _Common(self.page_url, project, platforms, html=False, size=len(body))
        pos = self.open_array()
        if pos < 0:
            return
        first = _ENTRY_THEN.match(body, pos)
        shape = None
        if first is not None:
            after = body[first.end(1):_WS.match(body, first.end()).end()]  # type: ignore[union-attr]
            shape = _entry_shape(first[1], after, project)
        if first is None or shape is None:
            raise _NotCommon
        line_ends = (first[1].count(b"\n") + after.count(b"\n"), after.partition(b",")[0].count(b"\n")) \
            if lines else None  # what an entry's layout holds, with the "," and without (the last)
        tags_of, releases, heads = common.tags, common.releases, common.heads
        general = _GeneralEntries(self, common.links, project, platforms)
        rows = general.rows
        count = 0
        pos = first.start(1)
        for found in shape.finditer(body, pos):
            at, end = found.span()
            if at != pos:
                while 0 <= pos < at:  # entries of another layout first
                    count += 1
                    pos = general.read(pos)
                if pos != at:
                    if pos < 0:
                        break
                    continue  # inside an entry of another layout
            release_text, rest, head, comma = found.groups()
            tags = tags_of[rest]
            if tags is not None:  # (a file of another platform is passed over, whatever else the entry holds)
                release = releases[release_text]
                if (tags is False or release is None or heads[head] is None
                        or end - at > MAX_ENTRY_BYTES
                        or (line_ends and body.count(b"\n", at, end) != line_ends[not comma])):
                    continue  # read by the general path, as an entry of another layout
                rows.append((release, tags, at))
            count += 1
            pos = end
            if not comma:  # the array's "]"
                self.pos, pos = pos, -1
                break
        while pos >= 0:
            count += 1
            pos = general.read(pos)
        if count > MAX_PAGE_ENTRIES:
            raise self.fail(f"lists more than {MAX_PAGE_ENTRIES:,} files")
        yield rows


class _GeneralEntries:
    """Entries of a page's files array read one at a time by the general path, their rows kept."""

    def __init__(self, page: _Json, links: _Links, wanted: str, platforms: Collection[str] | None) -> None:
        self.page, self.links, self.wanted, self.platforms = page, links, wanted, platforms
        self.tag_sets = Memo(_tag_set)
        self.rows: list[Row] = []

    def read(self, pos: int) -> int:
        """The entry at ``pos`` read (its row kept, if any): where the next one starts, or -1 after the last."""
        pos, item = self.page.entry(pos, self.links, self.platforms)
        if item is not None:
            read = _read_wheel(item, self.wanted, self.platforms, self.tag_sets)
            if read is not None:
                self.rows.append(((read[0], read[1]), read[2], item))
        return _WS.match(self.page.body, pos).end() if pos >= 0 else pos  # type: ignore[union-attr]


class _NotCommon(Exception):
    """The page is not of the common shape: it is read by the general path."""


def _json_file_at(body: bytes | bytearray, at: int, links: _Links) -> IndexFile | None:
    entry = _ENTRY_THEN.match(body, at)
    return _json_file(entry[1], links) if entry is not None else None


class PageWheels:
    """The wheels of one project on one page, of the target's platforms, as online mode reads them: ``rows`` of
    ``(release, tags, ref)`` (``release``: (public version, local label)), read when made, and ``file(ref)``, a
    row's file record (URL, sha256, requires-python), made when asked for. The same wheels as ``parse_wheels`` of
    ``parse_page``'s files."""

    def __init__(self, body: bytes | bytearray, content_type: str, page_url: str, project: str,
                 platforms: Collection[str] | None) -> None:
        from packaging.utils import canonicalize_name

        self.body, self.page_url, self.json = body, page_url, _is_json(content_type)
        self._links: _Links | None = None
        wanted = canonicalize_name(project)
        rows: list[Row] | None = None
        if _PLAIN_PROJECT.fullmatch(wanted):
            if self.json:
                rows = _CommonJson(body, page_url).rows(wanted, platforms)
            else:
                rows = _common_html_rows(body, page_url, wanted, platforms)
        if rows is None:  # the general path
            tag_sets = Memo(_tag_set)
            files = iter_page(body, content_type, page_url, platforms)
            rows = [((read[0], read[1]), read[2], item) for item in files
                    if (read := _read_wheel(item, wanted, platforms, tag_sets)) is not None]
        self.rows = rows

    def file(self, ref: IndexFile | int) -> IndexFile:
        """The file record of a row."""
        if isinstance(ref, IndexFile):
            return ref
        if self._links is None:
            self._links = _Links(self.page_url)
        item = (_json_file_at if self.json else _html_file_at)(self.body, ref, self._links)
        if item is None:  # the common shape makes a record of every file it reads
            raise IndexUnavailable(f"{self.page_url}: the file at byte {ref} is not the wheel it was read as")
        return item
