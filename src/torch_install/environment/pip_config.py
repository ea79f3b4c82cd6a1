"""pip's configuration, as pip reads it: which files (and in which order), what an option is set to, and an edit
of one option of one file that keeps the rest of it as the user wrote it.

What pip does (its ``configuration.py``): the site-wide files (``$XDG_CONFIG_DIRS/pip/pip.conf``, ``/etc/pip.conf``;
macOS ``/Library/Application Support/pip/pip.conf``), then the user's (``~/.pip/pip.conf``, then
``~/.config/pip/pip.conf``, macOS ``~/Library/Application Support/pip/pip.conf``, Windows ``%APPDATA%\\pip\\pip.ini``)
unless ``PIP_CONFIG_FILE`` names a file that exists, then the environment's own (``{prefix}/pip.conf``, ``pip.ini``
on Windows), then ``PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` loads none at all. A later file overrides an
earlier one key by key; keys are compared lower-cased with ``_`` as ``-``; for ``pip install`` the ``[install]``
section overrides ``[global]``, and ``PIP_<OPTION>`` overrides every file. A list option's value (``constraint``)
is split on whitespace, with no quoting.

Read, never run: pip itself is not imported (it may not be installed, and importing it costs time).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from ..records import Record


def config_name(windows: bool = os.name == "nt") -> str:
    return "pip.ini" if windows else "pip.conf"


def normalize_key(key: str) -> str:
    """A configuration key as pip compares it: "Constraint" and "CONSTRAINT" are "constraint", "index_url" is
    "index-url"."""
    return key.strip().lower().replace("_", "-").removeprefix("--")


def pip_config_files(environ: Mapping[str, str], prefix: str | None = None,
                     platform: str = sys.platform) -> list[Path]:
    """The files pip reads, lowest priority first; none when ``PIP_CONFIG_FILE`` is the null device. ``prefix``:
    the environment (default ``$VIRTUAL_ENV``)."""
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    home = Path(_home(environ))
    files: list[Path] = []
    if platform == "win32":
        program_data = environ.get("PROGRAMDATA")
        if program_data:
            files.append(Path(program_data) / "pip" / "pip.ini")
    elif platform == "darwin":
        files.append(Path("/Library/Application Support/pip/pip.conf"))
    else:
        dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
        files += [Path(d) / "pip" / "pip.conf" for d in reversed(dirs)]
    if platform != "win32":
        files.append(Path("/etc/pip.conf"))
    if not (env_file and os.path.exists(env_file)):  # pip skips the user's files when PIP_CONFIG_FILE exists
        files.append(home / ".pip" / "pip.conf")
        if platform == "win32":
            if environ.get("APPDATA"):
                files.append(Path(environ["APPDATA"]) / "pip" / "pip.ini")
        elif platform == "darwin":
            files.append(home / "Library" / "Application Support" / "pip" / "pip.conf")
        else:
            xdg = environ.get("XDG_CONFIG_HOME", "")
            files.append(Path(xdg if os.path.isabs(xdg) else home / ".config") / "pip" / "pip.conf")
    prefix = prefix or environ.get("VIRTUAL_ENV")
    if prefix:
        files.append(Path(prefix) / config_name(platform == "win32"))
    if env_file:
        files.append(Path(env_file))
    return files


def _home(environ: Mapping[str, str]) -> str:
    home = environ.get("HOME") or ""
    return home if os.path.isabs(home) else os.path.expanduser("~")


def read_options(path: Path) -> dict[str, str]:
    """``{"install.constraint": value, …}`` of one file as pip reads it (keys normalized); {} when it cannot be read
    (pip would refuse it, and says why itself)."""
    import configparser

    parser = configparser.RawConfigParser()
    try:
        if not path.is_file() or not parser.read(path, encoding="utf-8"):
            return {}
    except (OSError, configparser.Error, UnicodeDecodeError):
        return {}
    return {f"{section}.{normalize_key(key)}": value for section in parser.sections()
            for key, value in parser.items(section)}


class Setting(Record):
    """An option's value as ``pip install`` takes it, and where it comes from (a file, or ``$PIP_<OPTION>``)."""

    value: str
    where: str


def configured(option: str, environ: Mapping[str, str], files: list[Path] | None = None,
               prefix: str | None = None) -> Setting | None:
    """The value ``pip install`` takes for ``option`` ([install] over [global], a later file over an earlier one,
    ``PIP_<OPTION>`` over every file); None when nothing sets it."""
    env_name = "PIP_" + option.upper().replace("-", "_")
    if environ.get(env_name) is not None:
        return Setting(environ[env_name], f"${env_name}")
    found: Setting | None = None
    key = normalize_key(option)
    for path in pip_config_files(environ, prefix) if files is None else files:
        options = read_options(path)
        for section in ("global", "install"):
            if f"{section}.{key}" in options:
                found = Setting(options[f"{section}.{key}"], f"{path} [{section}]")
    return found


# -- editing one option of one file ---------------------------------------------------------------------------

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*(?:[#;].*)?$")
_KEY = re.compile(r"^([^\s=:#;][^=:]*?)\s*[=:]\s?(.*)$")


class _Entry(Record):
    section: str
    key: str  # as written
    first: int  # its line
    last: int  # its last continuation line


def _lines(text: str) -> list[str]:
    """The lines of an INI text as pip reads them, in text mode: "\\n", "\\r\\n" and "\\r" end a line, and nothing
    else does (``str.splitlines`` also splits at a form feed or U+2028, which configparser keeps inside a line)."""
    return _lines_and_ends(text)[0]


def _lines_and_ends(text: str) -> tuple[list[str], list[str]]:
    """``_lines(text)``, and what ends each of them ("" for a last line without a line end)."""
    parts = re.split(r"(\r\n|\r|\n)", text)
    lines, ends = parts[0::2], parts[1::2] + [""]
    if lines[-1] == "":
        lines.pop()  # the end of the last line, or an empty text
        ends.pop()
    return lines, ends


def _entries(lines: list[str]) -> tuple[list[_Entry], dict[str, int]]:
    """The keys of an INI text with their lines, and the last line of each section (its header for an empty one)."""
    entries: list[_Entry] = []
    ends: dict[str, int] = {}
    section = ""
    for number, line in enumerate(lines):
        stripped = line.strip()
        if match := _SECTION.match(line):
            section = match[1].strip()
            ends[section] = number
            continue
        if not stripped:
            continue
        if section:
            ends[section] = number  # a new key goes after every line of its section, comments included
        if stripped.startswith(("#", ";")):
            continue
        if line[:1] in " \t" and entries and entries[-1].section == section and entries[-1].last == number - 1:
            entries[-1] = entries[-1]._replace(last=number)  # a continuation line
            continue
        if (match := _KEY.match(line)) and section:
            entries.append(_Entry(section, match[1], number, number))
    return entries, ends


def option_values(text: str, section: str, option: str) -> list[str] | None:
    """The whitespace-separated values of one option of one section of an INI text (None: not set there)."""
    lines = _lines(text)
    entries, _ = _entries(lines)
    for entry in entries:
        if entry.section == section and normalize_key(entry.key) == normalize_key(option):
            value = _KEY.match(lines[entry.first])
            parts = [value[2] if value else ""] + lines[entry.first + 1:entry.last + 1]
            return " ".join(parts).split()
    return None


def set_option(text: str, section: str, option: str, values: list[str]) -> str:
    """``text`` with one option of one section set to ``values``: the key's line (and its continuation lines)
    replaced where it is, as the user spelled the key; else a new key at the end of the section; else a new
    section at the end. Every other line (comments, order, other keys, each line's own line end) stays as it was;
    added lines end as the file's lines do ("\\r\\n" when any does). The values must hold no whitespace."""
    newline = "\r\n" if "\r\n" in text else "\n"  # for the lines added
    lines, line_ends = _lines_and_ends(text)
    if line_ends and not line_ends[-1]:
        line_ends[-1] = newline  # the file ends with a line end
    entries, ends = _entries(lines)
    found = [e for e in entries if e.section == section and normalize_key(e.key) == normalize_key(option)]
    value = " ".join(values)
    if found:
        entry = found[0]
        lines[entry.first:entry.last + 1] = [f"{entry.key} = {value}"]
        line_ends[entry.first:entry.last + 1] = [line_ends[entry.first]]
    elif section in ends:
        lines.insert(ends[section] + 1, f"{option} = {value}")
        line_ends.insert(ends[section] + 1, newline)
    else:
        added = [f"[{section}]", f"{option} = {value}"]
        if lines and lines[-1].strip():
            added.insert(0, "")
        lines += added
        line_ends += [newline] * len(added)
    return "".join(line + end for line, end in zip(lines, line_ends, strict=True))


def duplicate_keys(text: str) -> list[str]:
    """Keys set twice in one section (pip refuses such a file): "[install] constraint"."""
    seen: set[tuple[str, str]] = set()
    twice = []
    for entry in _entries(_lines(text))[0]:
        key = (entry.section, normalize_key(entry.key))
        if key in seen:
            twice.append(f"[{entry.section}] {entry.key}")
        seen.add(key)
    return twice
