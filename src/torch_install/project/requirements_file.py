"""pip's requirements-file format, read the way pip reads it (pip's documentation, "Requirements File Format").

A file is a list of logical lines: a line ending in ``\\`` continues on the next (a comment line never does), a
``#`` at the start of a line or after whitespace starts a comment, ``${NAME}`` is an environment variable. Each
logical line is a requirement (PEP 508; a URL or path, optionally ``name @ URL``; ``-e`` editable), with
per-requirement options (``--hash``, ``--config-settings``), or an options line: ``-r``/``-c`` include another
file (relative to the including file), index and find-links options, and the other options pip allows in a file.
The annotations of a compiled lock (``# via torch``) are kept with the requirement they follow.

Every problem is an InputError naming the file and line: a missing file, an include loop, an unknown option, a
requirement that is not one, input past the bounds of ``bounds.py``. A file included twice is read once. Every
step is linear in the input: comments are found without a backtracking pattern, continuation lines are joined
once, and words are split in one pass (``split_words``, which splits as ``shlex.split`` does).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from itertools import accumulate, chain, count, repeat
from operator import add

from ..display import excerpt
from ..errors import InputError
from ..records import Record
from ..resolver.plan import FileOption, Wanted
from ..versions import MAX_DIGITS, has_long_number
from .bounds import MAX_DEPTH, MAX_FILE, ReadBudget
from .requirement_name import _RELEASE, _SUFFIXES, URL, requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

# Options pip accepts on a line of their own in a requirements file: name -> takes a value
GLOBAL_OPTIONS: Mapping[str, bool] = {
    "--index-url": True, "--extra-index-url": True, "--no-index": False, "--find-links": True,
    "--trusted-host": True, "--pre": False, "--prefer-binary": False, "--only-binary": True, "--no-binary": True,
    "--require-hashes": False, "--use-feature": True,
}
SHORT = {"-i": "--index-url", "-f": "--find-links", "-r": "--requirement", "-c": "--constraint",
         "-e": "--editable"}
PER_REQUIREMENT = {"--hash": True, "--config-settings": True, "--global-option": True}
_ENV_VAR = r"\$\{([A-Z0-9_]+)\}"
_VIA_START = r"^\s+#\s+via(?:\s+(.*))?$"
_VIA_MORE = r"^\s+#\s+(\S.*)$"
_VIA_INLINE = r"\s#\s*via\s+(.*)$"  # patterns are compiled where first used (re's cache): a plan reads few of them


class RequirementsFile(Record):
    """One file given with ``-r``/``-c``, with everything it includes."""

    path: str  # as given
    constraint: bool  # given with -c
    entries: tuple[Wanted, ...]  # its requirements and those of the files it includes, in order
    options: tuple[FileOption, ...]
    notes: tuple[str, ...] = ()  # what of it pip reads and ignores (a file's option on a requirement line)


Fetch = Callable[[str], bytes]  # a file named by URL, as pip fetches it (``index/client.fetch_file``)


def read_requirements(path: str, constraint: bool = False, environ: Mapping[str, str] = os.environ,
                      budget: ReadBudget | None = None, fetch: Fetch | None = None) -> RequirementsFile:
    """The file at ``path`` (and every file it includes), read as pip reads it, within ``budget`` (shared by the
    other files a command reads). A file named by URL (``path`` itself, or an include) is read with ``fetch``, its
    relative includes relative to its URL; without ``fetch`` it is an InputError."""
    reader = _Reader(environ, budget or ReadBudget(), fetch)
    reader.read(path, constraint, (), top=path)
    return RequirementsFile(path, constraint, tuple(reader.entries), tuple(reader.options), tuple(reader.notes))


def local_path(text: str) -> str:
    """A ``file:`` URL as the path it names (pip reads it as that file); any other text as it is."""
    if text[:5].lower() != "file:":
        return text
    from urllib.parse import urlsplit
    from urllib.request import url2pathname

    return url2pathname(urlsplit(text).path)


class _Reader:
    def __init__(self, environ: Mapping[str, str], budget: ReadBudget, fetch: Fetch | None = None) -> None:
        self.environ = environ
        self.budget = budget
        self.fetch = fetch
        self.entries: list[Wanted] = []
        self.options: list[FileOption] = []
        self.notes: list[str] = []
        self.done: set[tuple[str, bool]] = set()  # (real path, read as constraints): what a second include adds

    def read(self, path: str, constraint: bool, chain: tuple[str, ...], top: str, origin: str = "") -> None:
        from ..probe import read_regular

        path = local_path(path)
        remote = bool(re.match(URL, path))
        real = path if remote else os.path.realpath(path)
        where = f"{origin}: " if origin else ""
        if real in chain:
            raise InputError(f"{where}-r {path}: an include loop ({' -> '.join([*chain, real])})")
        if (real, constraint) in self.done:  # its lines are in already (the same file twice, or a diamond)
            return
        if len(chain) >= MAX_DEPTH:
            raise InputError(f"{where}-r {path}: files nested more than {MAX_DEPTH} deep")
        try:
            data = self._fetched(path, constraint, where) if remote else read_regular(path, MAX_FILE + 1)
        except OSError as exc:
            raise InputError(f"{where}{'-c' if constraint else '-r'} {path}: cannot read "
                             f"({exc.strerror or exc})") from None
        if len(data) > MAX_FILE:
            raise InputError(f"{path}: over {MAX_FILE >> 20} MiB, not a requirements file")
        self.budget.take(origin or path, len(data))
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        self.done.add((real, constraint))
        locked = _lock_entries(text, path, constraint, top)
        if locked is not None:  # a compiled lock of the common shape, read whole
            entries, options = locked
            for number, line in options:
                self.line(path, number, line, (), constraint, (*chain, real), top)
            self.entries += entries
            return
        for number, line, via in _logical_lines(text, path, self.budget):
            self.line(path, number, line, via, constraint, (*chain, real), top)

    def _fetched(self, url: str, constraint: bool, where: str) -> bytes:
        if self.fetch is None:
            raise InputError(f"{where}{'-c' if constraint else '-r'} {excerpt(url, 200)}: a file from a URL is not "
                             "read (download it first)")
        return self.fetch(url)

    def line(self, path: str, number: int, line: str, via: tuple[str, ...], constraint: bool,
             chain: tuple[str, ...], top: str) -> None:
        origin = f"{path}:{number}"
        if "${" in line:
            line = re.sub(_ENV_VAR, lambda m: self.environ.get(m[1], m[0]), line)
        if not line.startswith("-"):  # a requirement: its text as written, then its options (pip's own split)
            text, options = _split_options(line)
            words = _words(options, origin)
            ignored = _file_options(words)
            if ignored:  # pip parses them there and ignores them: they apply only on a line of their own
                self.notes.append(f"{origin}: {' '.join(ignored)} on a requirement line: pip reads it there and "
                                  "ignores it (a file's options apply only on a line of their own)")
                words = [w for w in words if w not in ignored]
            self.entries.append(_requirement(text, words, origin, False, constraint, via, top))
            return
        words = _words(line, origin)
        first, rest = _option_name(words[0]), words[1:]
        if "=" in words[0] and words[0].startswith("--"):
            first, rest = _option_name(words[0].split("=", 1)[0]), [words[0].split("=", 1)[1], *rest]
        elif words[0][:2] in SHORT and len(words[0]) > 2 and not words[0].startswith("--"):
            first, rest = SHORT[words[0][:2]], [words[0][2:], *rest]  # "-rbase.txt"
        if first in ("--requirement", "--constraint"):
            if len(rest) != 1:
                raise InputError(f"{origin}: {first} takes one file")
            if re.match(URL, path) and not re.match(URL, rest[0]):  # relative to the URL, as pip joins it
                from urllib.parse import urljoin

                nested = urljoin(path, rest[0])
            else:
                nested = rest[0] if os.path.isabs(rest[0]) or re.match(URL, rest[0]) else \
                    os.path.join(os.path.dirname(path), rest[0])
            self.read(nested, constraint or first == "--constraint", chain, top, origin)
            return
        if first in GLOBAL_OPTIONS:
            takes = GLOBAL_OPTIONS[first]
            if (len(rest) != 1) if takes else rest:
                raise InputError(f"{origin}: {first} {'takes one value' if takes else 'takes no value'}")
            self.options.append(FileOption(first, rest[0] if takes else None, origin, top))
            return
        if first == "--editable":
            if not rest:
                raise InputError(f"{origin}: -e needs a path or URL")
            self.entries.append(_requirement(rest[0], rest[1:], origin, True, constraint, via, top))
            return
        raise InputError(f"{origin}: {excerpt(words[0], 80)}: not an option pip reads in a requirements file")


def _file_options(words: list[str]) -> list[str]:
    """The words of a requirement line's options that are a file's options (``--index-url URL``), with their
    values."""
    out: list[str] = []
    i = 0
    while i < len(words):
        name = _option_name(words[i].split("=", 1)[0]) if words[i].startswith("-") else ""
        if name in GLOBAL_OPTIONS:
            takes = GLOBAL_OPTIONS[name] and "=" not in words[i] and i + 1 < len(words)
            out += words[i:i + 1 + takes]
            i += 1 + takes
        else:
            i += 1
    return out


def _words(text: str, origin: str) -> list[str]:
    try:
        return split_words(text)
    except ValueError as exc:
        raise InputError(f"{origin}: {exc} in {excerpt(text.strip(), 80)!r}") from None


# One piece of a shell word, as shlex reads it in POSIX mode: plain characters, a single-quoted run, a double-quoted
# run (backslash escapes inside), an escaped character, or the blanks between words. Loops are unrolled
# ([^"\\]* runs between escapes), so a long quoted word costs re no state per character.
_PIECE = r"""[^ \t\r\n'"\\]+|'[^']*'|"[^"\\]*(?:\\[\s\S][^"\\]*)*"|\\[\s\S]|[ \t\r\n]+"""
_OPEN_DOUBLE = r'"[^"\\]*(?:\\[\s\S][^"\\]*)*'


def split_words(text: str) -> list[str]:
    """``text`` split into words exactly as ``shlex.split`` splits it, in one linear pass (shlex builds each word a
    character at a time, so a long word costs it the square of its length); ValueError with shlex's message for an
    unclosed quote or a backslash at the end. A line without quotes or backslashes (nearly every line of a lock)
    is split at its blanks alone."""
    if "'" not in text and '"' not in text and "\\" not in text:
        if "\r" in text or "\n" in text:
            text = text.replace("\r", " ").replace("\n", " ")
        return [word for word in text.replace("\t", " ").split(" ") if word]
    piece_of = re.compile(_PIECE)  # re's cache: compiled once per process
    words: list[str] = []
    word: list[str] = []
    quoted = False
    at, end = 0, len(text)
    while at < end:
        found = piece_of.match(text, at)
        if found is None:  # an unclosed quote, or a backslash at the end
            opened = re.compile(_OPEN_DOUBLE).match(text, at)
            closing = text[at] == "'" or (opened is not None and opened.end() == end)
            raise ValueError("No closing quotation" if closing else "No escaped character")
        piece, at = found[0], found.end()
        first = piece[0]
        if first in " \t\r\n":
            if word or quoted:
                words.append("".join(word))
            word, quoted = [], False
        elif first == "'":
            word.append(piece[1:-1])
            quoted = True
        elif first == '"':
            word.append(re.sub(r'\\([\\"])', r"\1", piece[1:-1]) if "\\" in piece else piece[1:-1])
            quoted = True
        elif first == "\\":
            word.append(piece[1])
        else:
            word.append(piece)
    if word or quoted:
        words.append("".join(word))
    return words


def _split_options(line: str) -> tuple[str, str]:
    """A requirement line's requirement and its options: the words before the first one starting with "-"."""
    words = line.split(" ")
    for i, word in enumerate(words):
        if word.startswith("-"):
            return " ".join(words[:i]).strip(), " ".join(words[i:])
    return line.strip(), ""


def _option_name(word: str) -> str:
    return SHORT.get(word, word)


class _Lines:
    """pip's logical lines of one file, fed a physical line at a time: ``out`` holds [first line number, the joined
    line without its comment, the "# via" parents annotated after it]."""

    __slots__ = ("out", "pending", "first", "in_via")

    def __init__(self) -> None:
        self.out: list[list[Any]] = []
        self.pending: list[str] = []  # the parts of a line continued so far
        self.first = 0
        self.in_via = False

    def feed(self, number: int, line: str) -> None:
        """One physical line, joined as pip joins them: a line ending in a backslash continues on the next, a
        comment line never continues and ends the line it follows."""
        if not self.pending and self.out and line[:1].isspace():  # a compiled lock's "# via" lines are indented
            if via := re.match(_VIA_START, line):
                self.in_via = True
                if via[1]:
                    self.out[-1][2].extend(via[1].split(", "))
                return
            if self.in_via and (more := re.match(_VIA_MORE, line)):
                self.out[-1][2].append(more[1])
                return
        self.in_via = False
        comment = line.lstrip()[:1] == "#"
        if line.endswith("\\") and not comment:
            if not self.pending:
                self.first = number
            self.pending.append(line.strip("\\"))
            return
        if self.pending:
            self.pending.append(" " + line if comment else line)
            self.add(self.first, "".join(self.pending))
            self.pending = []
        else:
            self.add(number, line)

    def add(self, number: int, line: str) -> None:
        inline = re.search(_VIA_INLINE, line) if "via" in line else None
        stripped = _without_comment(line).strip()
        if stripped:
            self.out.append([number, stripped, inline[1].split(", ") if inline else []])

    def end(self) -> list[list[Any]]:
        if self.pending:  # a continuation at the end of the file
            self.add(self.first, "".join(self.pending))
            self.pending = []
        for item in self.out:
            item[2] = tuple(v.strip() for v in item[2] if v.strip())
        return self.out


def _logical_lines(text: str, path: str, budget: ReadBudget) -> list[list[Any]]:
    """(first line number, the joined line without its comment, the "# via" parents annotated after it)."""
    lines = _Lines()
    for number, line in enumerate(text.splitlines(), 1):
        if not number & 1023:
            budget.check(f"{path}:{number}")
        lines.feed(number, line)
    return lines.end()


# A compiled lock in the shape uv and pip-compile write, read whole by a few operations over the whole text
# (``_lock_entries``): its entries ("name==version \", "    --hash=sha256:…" lines, indented "# via" lines) one
# after the other, with only blank and comment lines between them. It stands for exactly what the line reading
# makes of such a file, and the file is read line by line wherever it is anything else. The pattern is loose
# where it is cheap (names, versions, hash values are checked afterwards, all at once).
_LOCK_ENTRY = (r"\n([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9a-z.+!]*)"
               r"((?: \\(?:\n    --hash=.*)+)?)((?:\n +#.*)*)(?=\n|\Z)")  # head, hash lines, annotations
_VERSION = rf"{_RELEASE}{_SUFFIXES}(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?"  # an == clause's version, as requirement_name
_HASH_PART = " \\\n    --hash="  # what comes before each hash value of an entry, as uv and pip-compile write it
_BETWEEN = r"(?:\n(?:#.*)?)*"  # what may come between entries: blank lines and comment lines
_LINE_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")  # where splitlines splits an ASCII text, but \n
_HEX_BYTES = b"0123456789abcdefABCDEF"
_FILE_NAME = r"\.(?:whl|zip|tar\.gz)$"  # a version ending so is read as a file name


def _lock_entries(text: str, path: str, constraint: bool, top: str
                  ) -> tuple[list[Wanted], list[tuple[int, str]]] | None:
    """The entries of a compiled lock as the line reading makes them, and the (line number, line) of the options
    in its header (``--index-url``, ``--find-links`` …), or None where the file is not only lock entries of the
    common shape: text other than ASCII, line breaks other than line feeds (splitlines splits at them), ${VAR},
    anything between entries but blank and comment lines, a name or version the line reading reads another way, a
    hash that is not sha256:hexdigits after its continuation. Everything is done on all the entries at once (joined
    texts, ``map``), since a Python step per entry would cost more than all of it."""
    if not text.isascii() or ("$" in text and "${" in text) or any(end in text for end in _LINE_BREAKS):
        return None  # (single characters first: str finds them a word at a time)
    pieces = re.split(_LOCK_ENTRY, "\n" + text)  # [between, name, version, hashes, notes, between, …]
    betweens, names, versions, hash_parts, notes = (pieces[i::5] for i in range(5))
    header = _header_options(betweens[0])
    if not names or header is None or not re.fullmatch(_BETWEEN, "\n".join(betweens[1:])):
        return None
    named, released = "\n".join(names) + "\n", "\n".join(versions) + "\n"
    if ".\n" in named or "-\n" in named or "_\n" in named or _long_number(names, named) \
            or _long_number(versions, released):
        return None  # a name ending so is no name; a long number is an error the line reading names
    plain = not released.encode("ascii").translate(None, b"0123456789.\n") and ".." not in released \
        and ".\n" not in released and "\n." not in released  # releases only: "2.9.1"
    if not plain and (not re.fullmatch(rf"(?:{_VERSION}\n)*", released) or re.search(_FILE_NAME, released, re.M)):
        return None
    # every hash part is " \\\n    --hash=sha256:<hex>" repeated (the pattern took its lines): with that separator
    # turned into a line feed, each value has one colon, that of the "sha256:" before only hex digits, and no value
    # is empty (a line that does not continue, or that continues into another, leaves a blank or a backslash)
    values = "".join(hash_parts).replace(_HASH_PART, "\n")  # "\nsha256:<hex>" for each hash of each entry
    digits = values.replace("\nsha256:", "\n")
    if "\n\n" in digits or digits.endswith("\n") or values.count(":") != values.count("\n") \
            or digits.encode("ascii").translate(None, _HEX_BYTES + b"\n"):
        return None
    vias, note_lines = _annotations(notes)
    keys = _canonical_names(named).split("\n")
    hashes = [tuple(part.split(_HASH_PART)[1:]) for part in hash_parts]
    # the line of entry k: the line feeds of the pieces before it (names and versions hold none; a hash part one a
    # hash, a note one a line), and of the k matches before it (each begins at the line feed before its head,
    # which no piece holds)
    between_lines = {between: between.count("\n") for between in set(betweens)}
    feeds = accumulate(map(add, map(between_lines.__getitem__, betweens),
                           chain((0,), map(add, map(len, hashes), map(note_lines.__getitem__, notes)))))
    origins = map((path.replace("%", "%%") + ":%d").__mod__, map(add, feeds, count(1)))
    # tuple.__new__: a Wanted is its tuple of fields, made here without a Python frame for each
    fields = zip(map("==".join, zip(names, versions, strict=True)), keys, origins, hashes, repeat(False),
                 repeat(constraint), map(vias.__getitem__, notes), repeat(top), repeat(None))  # every field
    return list(map(tuple.__new__, repeat(Wanted), fields)), header


def _header_options(header: str) -> list[tuple[int, str]] | None:
    """The (line number, line) of the option lines before a lock's first entry, or None where a line there is
    not blank, a comment or one option line that the line reading reads as it is (no comment, no continuation)."""
    options = []
    for number, line in enumerate(header.split("\n")[1:], 1):
        if line[:2] == "--" and "#" not in line and not line.endswith("\\") \
                and line.split(" ", 1)[0].split("=", 1)[0] in GLOBAL_OPTIONS:
            options.append((number, line.strip()))
        elif line and line[0] != "#":
            return None
    return options


def _annotations(notes: list[str]) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """What the line reading makes of each distinct block of "# via" lines under an entry (read once each), and
    the lines of each."""
    vias: dict[str, tuple[str, ...]] = {}
    lines_of: dict[str, int] = {}
    for note in notes:
        if note not in vias:
            lines = _Lines()
            lines.out.append([0, "", []])
            for line in note[1:].split("\n") if note else ():
                lines.feed(0, line)
            vias[note] = lines.end()[0][2]
            lines_of[note] = note.count("\n")
    return vias, lines_of


def _long_number(parts: list[str], joined: str) -> bool:
    """``has_long_number(joined)``, the join of ``parts``, looked for only where a part is long enough to hold one."""
    return max(map(len, parts), default=0) > MAX_DIGITS and has_long_number(joined)


def _canonical_names(named: str) -> str:
    """``canonical_name`` of each line of ``named``, on the whole text at once: runs of "-", "_" and "." become one
    "-" (with replacements where there is no run, as nearly always), and the text is lower-cased."""
    if "_" in named or "." in named:
        named = named.replace("_", "-").replace(".", "-")
        if "--" in named:
            named = re.sub("-{2,}", "-", named)
    return named.lower()


def _without_comment(line: str) -> str:
    """``line`` up to its comment: a "#" at its start or after whitespace (pip's ``(^|\\s+)#.*$``, found in one
    pass where that pattern backtracks over every run of blanks)."""
    at = line.find("#")
    while at > 0 and not line[at - 1].isspace():
        at = line.find("#", at + 1)
    return line if at < 0 else line[:at]


def _requirement(text: str, options: list[str], origin: str, editable: bool, constraint: bool,
                 via: tuple[str, ...], top: str) -> Wanted:
    """A requirement and its per-requirement options (``--hash`` kept; the others pip's to apply)."""
    hashes: list[str] = []
    i = 0
    while i < len(options):
        word = options[i]
        name = word.split("=", 1)[0]
        if name not in PER_REQUIREMENT:
            raise InputError(f"{origin}: {excerpt(word, 80)}: not an option of a requirement line")
        value = word.split("=", 1)[1] if "=" in word else (options[i + 1] if i + 1 < len(options) else None)
        if value is None:
            raise InputError(f"{origin}: {name} takes a value")
        if name == "--hash" and not re.fullmatch(r"[a-z0-9]+:[0-9a-fA-F]+", value):
            raise InputError(f"{origin}: --hash {excerpt(value, 80)}: not algorithm:hexdigest")
        if name == "--hash":
            hashes.append(value)
        i += 1 if "=" in word else 2
    return Wanted(text=text, name=requirement_name(text, origin), origin=origin, hashes=tuple(hashes),
                  editable=editable, constraint=constraint, via=via, file=top)
