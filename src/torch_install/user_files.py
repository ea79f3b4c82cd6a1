"""The one writer of files the user owns: ``pyproject.toml`` and a pixi manifest (``--merge``, ``install --pin``),
an environment's ``pip.conf`` and the constraints file beside it (``install --pin``), and every
such file a later command edits. Nothing else in torch-install writes a file the user keeps
(tests/test_architecture.py checks it).

A file is edited, never replaced by something else:

- **Regular files only.** A device, FIFO, socket or directory is refused with one line (exit 2), found without
  blocking. A **symbolic link is followed**: the file it names is edited and the link stays a link (every tool that
  reads the path sees the edit). A file with **several hard links** is refused: renaming over it would split them.
- **Read whole, or not at all**: at most ``MAX_SIZE`` bytes within ``READ_TIMEOUT`` seconds; a larger or slower
  file is refused, never cut. UTF-8 only (a byte order mark is kept).
- **Everything it does not own stays.** The caller edits the text with ``"\\n"`` line ends; the editor puts the
  file's own back (each line kept keeps its own end, CRLF, CR or LF; an added line takes the file's most common).
  The mode, owner and group are kept (a file whose owner cannot be kept is refused); a read-only file is refused.
- **Checked before it is written**: the new text must read as its format reads it (``TOML``: tomllib;
  ``PIP_INI``: configparser as pip reads its files), else nothing is written.
- **Atomic**: written to a temporary file in the same directory, flushed to disk, renamed over the file.
- **A concurrent change is refused**: just before the rename the file must still be what was read (device, inode,
  size, modification time and content); otherwise nothing is written and one line says so (run again).
- **An undo journal**, when the caller names one: the first edit of a file records what it was (its bytes, or that
  there was none), and ``undo`` puts exactly that back, for each file still as torch-install last wrote it
  (``torch-install unpin``).

Errors: what the file is, or holds, is an ``InputError`` (exit 2); a directory that cannot be written or a full
disk is an ``EnvironmentFailure`` (exit 3). Each is one line naming the file.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time

from .errors import EnvironmentFailure, InputError
from .records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    import configparser
    from collections.abc import Callable
    from typing import Any

MAX_SIZE = 4 * 1024 * 1024  # bytes: the largest file torch-install reads to edit (a pyproject.toml is far smaller)
READ_TIMEOUT = 10.0  # seconds to read it (a hung network file system)
_BOM = "\ufeff"
_LINE_END = re.compile(r"(\r\n|\r|\n)")


class Format(Record):
    """How a file's text is read: its name in messages, and a check that returns why a text does not read (None:
    it reads)."""

    name: str
    check: Callable[[str], str | None]


def toml_data(text: str) -> dict[str, Any]:
    """A TOML text as plain data (tomllib; tomlkit before Python 3.11); a ValueError when it is no TOML."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except RecursionError:
            raise ValueError("nested too deeply") from None
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return dict(tomlkit.parse(text).unwrap())
    except TOMLKitError as exc:
        raise ValueError(str(exc)) from None
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _toml_problem(text: str) -> str | None:
    try:
        toml_data(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError is one
        return str(exc)
    return None


def toml_reading_as(expected: dict[str, Any]) -> Format:
    """TOML that reads as ``expected`` (plain data): an edit made with a layout-keeping TOML editor, checked against
    the same edit made on the plain data."""
    def problem(text: str) -> str | None:
        return _toml_problem(text) or (None if toml_data(text) == expected else
                                       "it would change other values of the file")

    return Format("TOML", problem)


def pip_ini_parser(text: str) -> configparser.RawConfigParser:
    """``text`` read as pip reads a configuration file: ``configparser.RawConfigParser`` with its defaults (keys
    lower-cased, ``=`` and ``:``, ``#``/``;`` comments, duplicates refused), over the text's lines as a file opened
    in text mode splits them (``\\n``, ``\\r\\n`` and ``\\r``). A ``configparser.Error`` when pip would refuse it."""
    import configparser

    parser = configparser.RawConfigParser()
    parser.read_string(_LINE_END.sub("\n", text))
    return parser


def _pip_ini_problem(text: str) -> str | None:
    import configparser

    try:
        pip_ini_parser(text)
    except configparser.Error as exc:
        return " ".join(str(exc).split())
    return None


TOML = Format("TOML", _toml_problem)
PIP_INI = Format("pip's configuration format", _pip_ini_problem)
PLAIN = Format("text", lambda text: None)


class Opened(Record):
    """A user's file as it was read: what to write back against, and how."""

    path: str  # as the caller named it
    target: str  # the regular file read: the path, or the file its link names
    text: str | None  # its text with "\n" line ends, without a byte order mark; None: there is no file
    data: bytes  # its bytes as read (b"" when there is none)
    identity: tuple[int, int, int, int] | None  # device, inode, size, modification time (ns); None: no file
    mode: int | None
    owner: tuple[int, int] | None  # uid, gid


def read(path: str, fmt: Format = PLAIN, what: str = "", check: bool = True, limit: int = MAX_SIZE) -> Opened:
    """The file at ``path`` (a link followed), read whole, for an edit: an ``InputError`` naming ``what`` (the
    option or the role of the file) when it is no regular file, too large, not UTF-8, or (with ``check``) does not
    read as ``fmt``. A missing file is an ``Opened`` whose text is None (the edit creates it)."""
    label = f"{what}: {path}" if what else path
    target = os.path.realpath(path)
    import contextlib

    with contextlib.suppress(OSError):  # missing, or unreadable: the open below says which
        _check_kind(label, os.stat(target))  # a socket cannot even be opened
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        if os.path.lexists(path) and target != os.path.abspath(path):
            raise InputError(f"{label}: a link to {target}, which does not exist: not followed") from None
        return Opened(path, target, None, b"", None, None, None)
    except OSError as exc:
        raise InputError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        _check_kind(label, info)
        data = _read_all(fd, label, limit)
    finally:
        os.close(fd)
    text = _decode(label, data)
    if check and (problem := fmt.check(text)):
        raise InputError(f"{label}: not valid {fmt.name} ({problem})")
    return Opened(path, target, _normal(text), data, _identity(info), stat.S_IMODE(info.st_mode),
                  (info.st_uid, info.st_gid))


def _check_kind(label: str, info: os.stat_result) -> None:
    if stat.S_ISREG(info.st_mode):
        return
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    kind = next((word for test, word in kinds if test(info.st_mode)), "not a regular file")
    raise InputError(f"{label}: {kind}, not a regular file: torch-install edits regular files only")


def _read_all(fd: int, label: str, limit: int) -> bytes:
    deadline = time.monotonic() + READ_TIMEOUT
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise InputError(f"{label}: larger than {limit >> 20} MiB: not read (torch-install never edits part of "
                             "a file)")
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise InputError(f"{label}: not read within {READ_TIMEOUT:g} s: not edited")


def _decode(label: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{label}: not UTF-8 text (byte {exc.start}): torch-install does not edit it") from None


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _normal(text: str) -> str:
    return _LINE_END.sub("\n", text.removeprefix(_BOM))


def with_line_ends(original: str, text: str) -> str:
    """``text`` (an edit of ``original``, "\\n" line ends) with ``original``'s own line ends: each line that the
    edit kept keeps its end; an added line takes the most common end of ``original`` ("\\n" when it has none)."""
    parts = _LINE_END.split(original)
    old_lines, old_ends = parts[0::2], parts[1::2]
    counts = {end: old_ends.count(end) for end in ("\n", "\r\n", "\r") if end in old_ends}
    common = max(counts, key=counts.__getitem__) if counts else "\n"  # a tie: "\n", then "\r\n"
    new_lines = text.split("\n")
    new_ends = ["\n"] * (len(new_lines) - 1) + [""]
    if len(counts) <= 1:
        return common.join(new_lines)
    from difflib import SequenceMatcher

    ends = [common if end else "" for end in new_ends]
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for old, new, size in matcher.get_matching_blocks():
        for i in range(size):
            if ends[new + i] and old + i < len(old_ends):
                ends[new + i] = old_ends[old + i]
    return "".join(line + end for line, end in zip(new_lines, ends, strict=True))


def write(opened: Opened, text: str, fmt: Format = PLAIN, what: str = "", journal: str | None = None,
          mode: int | None = None) -> bool:
    """Write ``text`` (an edit of ``opened.text``, "\\n" line ends) to the file ``opened`` was read from, by the
    rules above; False when it is what the file holds already (nothing written). ``journal``: the undo journal that
    records the file's first state; ``mode``: a new file's mode (default: 0666 less the umask)."""
    label = f"{what}: {opened.path}" if what else opened.path
    original = _decode(label, opened.data)
    bom = _BOM if original.startswith(_BOM) else ""
    final = bom + with_line_ends(original.removeprefix(bom), text) if opened.text is not None else text
    data = final.encode("utf-8")
    if opened.text is not None and data == opened.data:
        return False
    if problem := fmt.check(final.removeprefix(bom)):
        raise InputError(f"{label}: torch-install's edit would not read back as meant ({fmt.name}: {problem}): the "
                         "file is left as it was")
    _check_unchanged(opened, label)
    if journal is not None:
        _record(journal, opened, data)
    _replace(opened, data, label, mode)
    return True


def _check_unchanged(opened: Opened, label: str) -> None:
    """The file is still what ``opened`` read; else an InputError (its change is not lost)."""
    changed = InputError(f"{label}: changed while torch-install was editing it: left as it is now (run the command "
                         "again)")
    try:
        info = os.lstat(opened.target)
    except FileNotFoundError:
        if opened.identity is None:
            return
        raise changed from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    if opened.identity is None or _identity(info) != opened.identity or not stat.S_ISREG(info.st_mode):
        raise changed
    if info.st_nlink > 1:
        raise InputError(f"{label}: has {info.st_nlink} hard links, and an edit replaces the file, which would "
                         "split them: not changed (edit it by hand)")
    if opened.mode is not None and not opened.mode & 0o222:
        raise InputError(f"{label}: read-only (mode {opened.mode:04o}): not changed")
    if not os.access(opened.target, os.W_OK):
        raise InputError(f"{label}: not writable by this user: not changed")
    try:
        fd = os.open(opened.target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise InputError(f"{label}: cannot read it ({exc.strerror or exc})") from None
    try:
        now = _read_all(fd, label, len(opened.data) + 1)
    except InputError:
        raise changed from None
    finally:
        os.close(fd)
    if now != opened.data:
        raise changed


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _replace(opened: Opened, data: bytes, label: str, mode: int | None = None) -> None:
    """``data`` as the file ``opened`` names, atomically, with its mode and owner."""
    import tempfile

    directory = os.path.dirname(opened.target)
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(opened.target)}.", suffix=".tmp")
    except OSError as exc:
        raise EnvironmentFailure(f"{label}: cannot write into {directory} ({exc.strerror or exc}): not changed"
                                 ) from None
    try:
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, opened.mode if opened.mode is not None else mode if mode is not None
                          else _new_file_mode())
            if opened.owner is not None and hasattr(os, "fchown") and \
                    opened.owner != (os.fstat(fd).st_uid, os.fstat(fd).st_gid):
                try:
                    os.fchown(fd, *opened.owner)
                except PermissionError:
                    raise InputError(f"{label}: belongs to uid {opened.owner[0]}, gid {opened.owner[1]}, and an edit "
                                     "by this user would change that: not changed") from None
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, opened.target)
    except OSError as exc:
        _discard(tmp)
        raise EnvironmentFailure(f"{label}: cannot write it ({exc.strerror or exc}): not changed") from None
    except BaseException:
        _discard(tmp)
        raise


def _discard(path: str) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        os.unlink(path)


def remove(opened: Opened, what: str = "") -> None:
    """Delete the file ``opened`` read, if it is still what was read (else an InputError, and it stays)."""
    label = f"{what}: {opened.path}" if what else opened.path
    if opened.identity is None:
        return
    _check_unchanged(opened, label)
    try:
        os.unlink(opened.target)
    except OSError as exc:
        raise EnvironmentFailure(f"{label}: cannot delete it ({exc.strerror or exc})") from None


# -- the undo journal -----------------------------------------------------------------------------------------

def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _load_journal(journal: str) -> dict[str, dict[str, str | None]]:
    import json

    opened = read(journal, PLAIN, "torch-install's undo journal", check=False)
    if opened.text is None:
        return {}
    try:
        entries = json.loads(opened.text)
    except ValueError:
        entries = None
    if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
        raise InputError(f"{journal}: not torch-install's undo journal: not used (remove it to start a new one)")
    return entries


def _save_journal(journal: str, entries: dict[str, dict[str, str | None]]) -> None:
    import json

    opened = read(journal, PLAIN, "torch-install's undo journal", check=False)
    if not entries:
        remove(opened)
        return
    _replace(opened, (json.dumps(entries, indent=1, sort_keys=True) + "\n").encode(), journal, 0o644)


def _record(journal: str, opened: Opened, data: bytes) -> None:
    """Note in the journal what the file was before torch-install's first edit of it, and what it writes now. A file
    changed by someone else since torch-install last wrote it starts again from what it is now."""
    import base64

    entries = _load_journal(journal)
    entry = entries.get(opened.target)
    if entry is None or entry.get("written") != (_digest(opened.data) if opened.identity is not None else None):
        before = base64.b64encode(opened.data).decode("ascii") if opened.identity is not None else None
        entry = {"before": before, "mode": f"{opened.mode:o}" if opened.mode is not None else None}
    entries[opened.target] = {**entry, "written": _digest(data)}
    _save_journal(journal, entries)


def journal_files(journal: str) -> list[str]:
    """The files the journal can put back."""
    return sorted(_load_journal(journal))


class Undone(Record):
    """What ``undo`` did, one line per file: those put back (or removed), and those left as they are."""

    done: tuple[str, ...] = ()
    left: tuple[str, ...] = ()


def undo(journal: str, keep: Callable[[str], bool] = lambda path: False) -> Undone:
    """Put back what the journal recorded, for each file still as torch-install last wrote it (a file another
    hand changed since is left, and stays in the journal). ``keep(path)``: a file not to put back now (it stays
    in the journal too). The journal goes when it is empty."""
    import base64

    entries = _load_journal(journal)
    done, left = [], []
    for path in sorted(entries):
        if keep(path):
            continue
        entry = entries[path]
        opened = read(path, PLAIN, check=False)
        if (_digest(opened.data) if opened.identity is not None else None) != entry.get("written"):
            left.append(f"{path}: changed since torch-install wrote it: left as it is (undo its edit by hand)")
            continue
        before = entry.get("before")
        if before is None:
            remove(opened)
            done.append(f"{path}: removed (torch-install had made it)")
        else:
            _replace(opened, base64.b64decode(before), path)
            done.append(f"{path}: put back as it was")
        del entries[path]
    _save_journal(journal, entries)
    return Undone(tuple(done), tuple(left))
