"""pip's requirements-file format, read the way pip reads it (pip's documentation, "Requirements File Format").

A file is a list of logical lines: a line ending in ``\\`` continues on the next (a comment line never does), a
``#`` at the start of a line or after whitespace starts a comment, ``${NAME}`` is an environment variable. Each
logical line is a requirement (PEP 508; a URL or path, optionally ``name @ URL``; ``-e`` editable), with
per-requirement options (``--hash``, ``--config-settings``), or an options line: ``-r``/``-c`` include another
file (relative to the including file), index and find-links options, and the other options pip allows in a file.
The annotations of a compiled lock (``# via torch``) are kept with the requirement they follow.

Every problem is an InputError naming the file and line: a missing file, an include loop, an unknown option, a
requirement that is not one.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping

from ..errors import InputError
from ..records import Record
from ..resolver.plan import FileOption, Wanted
from .requirement_name import URL, requirement_name

MAX_FILE = 4 * 1024 * 1024  # a compiled lock of a large project is well under 1 MiB
MAX_DEPTH = 32  # nested -r/-c files

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
_COMMENT = r"(^|\s+)#.*$"
_VIA_START = r"^\s+#\s+via(?:\s+(.*))?$"
_VIA_MORE = r"^\s+#\s+(\S.*)$"
_VIA_INLINE = r"\s#\s*via\s+(.*)$"  # patterns are compiled where first used (re's cache): a plan reads few of them


class RequirementsFile(Record):
    """One file given with ``-r``/``-c``, with everything it includes."""

    path: str  # as given
    constraint: bool  # given with -c
    entries: tuple[Wanted, ...]  # its requirements and those of the files it includes, in order
    options: tuple[FileOption, ...]


def read_requirements(path: str, constraint: bool = False, environ: Mapping[str, str] = os.environ
                      ) -> RequirementsFile:
    """The file at ``path`` (and every file it includes), read as pip reads it."""
    reader = _Reader(environ)
    reader.read(path, constraint, (), top=path)
    return RequirementsFile(path, constraint, tuple(reader.entries), tuple(reader.options))


class _Reader:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.entries: list[Wanted] = []
        self.options: list[FileOption] = []
        self.seen: list[str] = []

    def read(self, path: str, constraint: bool, chain: tuple[str, ...], top: str, origin: str = "") -> None:
        from ..probe import read_regular

        real = os.path.realpath(path)
        where = f"{origin}: " if origin else ""
        if real in chain:
            raise InputError(f"{where}-r {path}: an include loop ({' -> '.join([*chain, real])})")
        if len(chain) >= MAX_DEPTH:
            raise InputError(f"{where}-r {path}: files nested more than {MAX_DEPTH} deep")
        try:
            data = read_regular(path, MAX_FILE + 1)
        except OSError as exc:
            raise InputError(f"{where}{'-c' if constraint else '-r'} {path}: cannot read "
                             f"({exc.strerror or exc})") from None
        if len(data) > MAX_FILE:
            raise InputError(f"{path}: over {MAX_FILE >> 20} MiB, not a requirements file")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
        self.seen.append(real)
        for number, line, via in _logical_lines(text):
            self.line(path, number, line, via, constraint, (*chain, real), top)

    def line(self, path: str, number: int, line: str, via: tuple[str, ...], constraint: bool,
             chain: tuple[str, ...], top: str) -> None:
        origin = f"{path}:{number}"
        line = re.sub(_ENV_VAR, lambda m: self.environ.get(m[1], m[0]), line)
        if not line.startswith("-"):  # a requirement: its text as written, then its options (pip's own split)
            text, options = _split_options(line)
            self.entries.append(_requirement(text, _words(options, origin), origin, False, constraint, via, top))
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
            if re.match(URL, rest[0]):
                raise InputError(f"{origin}: {first} {rest[0]}: a file from a URL is not read (download it first)")
            nested = rest[0] if os.path.isabs(rest[0]) else os.path.join(os.path.dirname(path), rest[0])
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
        raise InputError(f"{origin}: {words[0]}: not an option pip reads in a requirements file")


def _words(text: str, origin: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError as exc:
        raise InputError(f"{origin}: {exc} in {text.strip()[:80]!r}") from None


def _split_options(line: str) -> tuple[str, str]:
    """A requirement line's requirement and its options: the words before the first one starting with "-"."""
    words = line.split(" ")
    for i, word in enumerate(words):
        if word.startswith("-"):
            return " ".join(words[:i]).strip(), " ".join(words[i:])
    return line.strip(), ""


def _option_name(word: str) -> str:
    return SHORT.get(word, word)


def _logical_lines(text: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """(first line number, the joined line without its comment, the "# via" parents annotated after it)."""
    physical = text.splitlines()
    out: list[tuple[int, str, list[str]]] = []
    i = 0
    in_via = False
    while i < len(physical):
        start, line = i + 1, physical[i]
        if out and (via := re.match(_VIA_START, line)):
            in_via = True
            if via[1]:
                out[-1][2].extend(via[1].split(", "))
            i += 1
            continue
        if out and in_via and (more := re.match(_VIA_MORE, line)):
            out[-1][2].append(more[1])
            i += 1
            continue
        in_via = False
        while line.endswith("\\") and not line.lstrip().startswith("#") and i + 1 < len(physical):
            i += 1
            line = line[:-1] + physical[i]
        if line.endswith("\\") and not line.lstrip().startswith("#"):
            line = line[:-1]  # a continuation at the end of the file
        i += 1
        inline = re.search(_VIA_INLINE, line)
        stripped = re.sub(_COMMENT, "", line).strip()
        if stripped:
            out.append((start, stripped, inline[1].split(", ") if inline else []))
    return [(n, line, tuple(v.strip() for v in via if v.strip())) for n, line, via in out]


def _requirement(text: str, options: list[str], origin: str, editable: bool, constraint: bool,
                 via: tuple[str, ...], top: str) -> Wanted:
    """A requirement and its per-requirement options (``--hash`` kept; the others pip's to apply)."""
    hashes: list[str] = []
    i = 0
    while i < len(options):
        word = options[i]
        name = word.split("=", 1)[0]
        if name not in PER_REQUIREMENT:
            raise InputError(f"{origin}: {word}: not an option of a requirement line")
        value = word.split("=", 1)[1] if "=" in word else (options[i + 1] if i + 1 < len(options) else None)
        if value is None:
            raise InputError(f"{origin}: {name} takes a value")
        if name == "--hash" and not re.fullmatch(r"[a-z0-9]+:[0-9a-fA-F]+", value):
            raise InputError(f"{origin}: --hash {value}: not algorithm:hexdigest")
        if name == "--hash":
            hashes.append(value)
        i += 1 if "=" in word else 2
    return Wanted(text=text, name=requirement_name(text, origin), origin=origin, hashes=tuple(hashes),
                  editable=editable, constraint=constraint, via=via, file=top)
