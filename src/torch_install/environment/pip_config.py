"""pip's configuration, as pip reads it: which files (and in which order), what an option is set to, and an edit
of one option of one file that keeps the rest of it as the user wrote it.

What pip does (its ``configuration.py``, ``utils/appdirs.py``): the site-wide files (each ``$XDG_CONFIG_DIRS``
directory's ``pip/pip.conf`` in the order listed, default ``/etc/xdg``, then ``/etc/pip.conf``; macOS
``/Library/Application Support/pip/pip.conf``), then the user's (``~/.pip/pip.conf``, then
``$XDG_CONFIG_HOME/pip/pip.conf``, default ``~/.config``; macOS ``~/Library/Application Support/pip/pip.conf``;
Windows ``%APPDATA%\\pip\\pip.ini``) unless ``PIP_CONFIG_FILE`` names a file that exists, then the environment's own
(``{prefix}/pip.conf``, ``pip.ini`` on Windows), then ``PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` loads none
at all. Each file is read by ``configparser.RawConfigParser`` with its defaults (``user_files.pip_ini_parser``):
indented keys, text after a section's ``]``, ``[ install ]`` (a section named " install ", which pip never reads),
``[DEFAULT]`` (its keys in every section), duplicates refused. A later file overrides an earlier one key by key;
keys are compared lower-cased with ``_`` as ``-``; for ``pip install`` the ``[install]`` section of any file
overrides ``[global]`` of every file, and ``PIP_<OPTION>`` overrides every file. A list option's value
(``constraint``) is split on whitespace, with no quoting.

An edit (``set_option``) finds the option's lines with configparser itself (the section headers and keys it reads,
where it reads them), replaces only those lines, and is checked afterwards: pip must read every other option of
every command as before, and the edited one as asked.

Read, never run: pip itself is not imported (it may not be installed, and importing it costs time).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    import configparser


def config_name(windows: bool = os.name == "nt") -> str:
    return "pip.ini" if windows else "pip.conf"


def normalize_key(key: str) -> str:
    """A configuration key as pip compares it: "Constraint" and "CONSTRAINT" are "constraint", "index_url" is
    "index-url", "--constraint" is "constraint"."""
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
        dirs = environ.get("XDG_CONFIG_DIRS") or ""
        files += [Path(os.path.expanduser(d)) / "pip" / "pip.conf"
                  for d in (dirs if dirs.strip() else "/etc/xdg").split(os.pathsep)]
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
            xdg = environ.get("XDG_CONFIG_HOME") or ""
            files.append(Path(xdg if xdg.strip() else home / ".config") / "pip" / "pip.conf")
    prefix = prefix or environ.get("VIRTUAL_ENV")
    if prefix:
        files.append(Path(prefix) / config_name(platform == "win32"))
    if env_file:
        files.append(Path(env_file))
    return files


def _home(environ: Mapping[str, str]) -> str:
    home = environ.get("HOME") or ""
    return home if os.path.isabs(home) else os.path.expanduser("~")


def pip_options(parser: configparser.RawConfigParser) -> dict[str, str]:
    """``{"install.constraint": value, …}`` as pip takes a parsed file: each section's items (``[DEFAULT]``'s
    included), keys normalized, a later spelling of a key over an earlier one."""
    return {f"{section}.{normalize_key(key)}": value for section in parser.sections()
            for key, value in parser.items(section)}


def read_options(path: Path) -> dict[str, str]:
    """``{"install.constraint": value, …}`` of one file as pip reads it; {} when it cannot be read (pip would
    refuse it, and says why itself)."""
    import configparser

    from ..errors import InputError
    from ..user_files import read

    try:
        opened = read(str(path), check=False)
        return pip_options(_parse(opened.text)) if opened.text is not None else {}
    except (InputError, configparser.Error):
        return {}


def _parse(text: str) -> configparser.RawConfigParser:
    from ..user_files import pip_ini_parser

    return pip_ini_parser(text)


class Setting(Record):
    """An option's value as ``pip install`` takes it, and where it comes from (a file, or ``$PIP_<OPTION>``)."""

    value: str
    where: str
    path: str | None = None  # the file that sets it
    section: str | None = None  # its section there


def configured(option: str, environ: Mapping[str, str], files: list[Path] | None = None,
               prefix: str | None = None) -> Setting | None:
    """The value ``pip install`` takes for ``option``: ``PIP_<OPTION>``, else the last ``[install]`` value of the
    files, else the last ``[global]`` one; None when nothing sets it."""
    env_name = "PIP_" + option.upper().replace("-", "_")
    if environ.get(env_name) is not None:
        return Setting(environ[env_name], f"${env_name}")
    found: dict[str, Setting] = {}
    key = normalize_key(option)
    for path in pip_config_files(environ, prefix) if files is None else files:
        options = read_options(path)
        for section in ("global", "install"):
            if f"{section}.{key}" in options:
                found[section] = Setting(options[f"{section}.{key}"], f"{path} [{section}]", str(path), section)
    return found.get("install") or found.get("global")


def configured_constraints(environ: Mapping[str, str], prefix: str | None = None) -> tuple[list[str], str]:
    """(the constraint files ``pip install`` reads of its own accord, where they are set): ``PIP_CONSTRAINT``, else
    pip's configuration files' ``constraint`` (split on whitespace, as pip splits a list option)."""
    files = pip_config_files(environ, prefix)
    if environ.get("PIP_CONSTRAINT") is None and not any(_mentions(path, b"onstraint") for path in files):
        return [], ""  # the common case, told without a parser: no file names a constraint
    setting = configured("constraint", environ, files)
    if setting is None:
        return [], ""
    return setting.value.split(), setting.where


def _mentions(path: Path, word: bytes) -> bool:
    """Whether the file at ``path`` holds ``word`` (case aside from its first letter), read up to 1 MiB; a file
    that cannot be read holds nothing (``read_options`` says the same of it)."""
    try:
        with open(path, "rb") as file:
            return word in file.read(1 << 20).lower()
    except OSError:
        return False


# -- editing one option of one file ---------------------------------------------------------------------------

class _Option:
    __slots__ = ("section", "key", "first", "last")

    def __init__(self, section: str, key: str, line: int) -> None:
        self.section, self.key, self.first, self.last = section, key, line, line


class _Layout:
    """Where configparser reads each section header and option of a text ("\\n" line ends): its own reading,
    watched through the hooks it documents (``SECTCRE``, ``optionxform``, the ``dict_type`` of its sections)."""

    def __init__(self, text: str) -> None:
        import configparser

        self.lines = text.split("\n")
        self.headers: list[tuple[str, int]] = []  # (section, line), in file order
        self.options: list[_Option] = []
        self._line = 0
        layout = self

        class Value(list):  # an option's lines: a continuation line is appended
            def append(self, item: object) -> None:
                super().append(item)
                if item and layout.options:
                    layout.options[-1].last = layout._line

        class Section(dict):
            def __setitem__(self, key: object, value: object) -> None:
                super().__setitem__(key, Value(value) if isinstance(value, list) else value)

        class Headers:
            def __init__(self, pattern: object) -> None:
                self.pattern = pattern

            def match(self, value: str) -> object:
                found = self.pattern.match(value)  # type: ignore[attr-defined]
                if found:
                    layout.headers.append((found.group("header"), layout._line))
                return found

        class Locating(configparser.RawConfigParser):
            def optionxform(self, optionstr: str) -> str:
                section = layout.headers[-1][0] if layout.headers else ""
                layout.options.append(_Option(section, optionstr, layout._line))
                return optionstr.lower()

        parser = Locating(dict_type=Section)
        parser.SECTCRE = Headers(parser.SECTCRE)  # type: ignore[assignment]
        parser.read_file(self._numbered())

    def _numbered(self) -> Iterator[str]:
        for number, line in enumerate(self.lines):
            self._line = number
            yield line + "\n"

    def section_end(self, section: str) -> int | None:
        """The last line of ``section`` that is not blank (its header for an empty one); None: not in the text."""
        for i, (name, line) in enumerate(self.headers):
            if name == section:
                end = self.headers[i + 1][1] if i + 1 < len(self.headers) else len(self.lines)
                return max(n for n in range(line, end) if self.lines[n].strip())
        return None


def option_values(text: str, section: str, option: str) -> list[str] | None:
    """The whitespace-separated values pip reads for one option of one section of a file's text (``[DEFAULT]``'s
    included; None: not set there). A ``configparser.Error`` when pip would refuse the text."""
    value = pip_options(_parse(text)).get(f"{section}.{normalize_key(option)}")
    return None if value is None else value.split()


def _pip_reads(text: str) -> dict[str, dict[str, str]]:
    """What each pip command reads from a file: ``{section: {key: value}}`` with ``[global]`` under every command's
    own section (pip's order), for each section the file names, and ``install``."""
    options = pip_options(_parse(text))
    sections = {key.partition(".")[0] for key in options} | {"install"}
    reads = {}
    for command in sections:
        merged = {k.partition(".")[2]: v for k, v in options.items() if k.startswith("global.")}
        merged.update({k.partition(".")[2]: v for k, v in options.items() if k.startswith(f"{command}.")})
        reads[command] = merged
    return reads


def set_option(text: str, section: str, option: str, values: list[str]) -> str:
    """``text`` ("\\n" line ends) with one option of one section set to ``values``: the key's line (and its
    continuation lines) replaced where it is, as the user spelled and indented the key; else a new key after the
    section's last line; else a new section at the end. Every other line stays as it was. The values must hold no
    whitespace. A ``configparser.Error`` when pip would refuse ``text``; a ValueError when the edit would change
    anything else pip reads (it is then not made)."""
    layout = _Layout(text)
    lines = list(layout.lines)
    if lines and lines[-1] == "":
        lines.pop()  # the end of the last line
    value = " ".join(values)
    found = [o for o in layout.options if o.section == section and normalize_key(o.key) == normalize_key(option)]
    end = layout.section_end(section)
    if found:  # pip takes the last spelling of a key
        entry = found[-1]
        indent = lines[entry.first][:len(lines[entry.first]) - len(lines[entry.first].lstrip())]
        lines[entry.first:entry.last + 1] = [f"{indent}{entry.key} = {value}"]
    elif end is not None:
        lines.insert(end + 1, f"{option} = {value}")
    else:
        lines += ([""] if any(line.strip() for line in lines) else []) + [f"[{section}]", f"{option} = {value}"]
    edited = "\n".join(lines) + "\n"
    expected = _pip_reads(text)
    expected.setdefault(section, {})[normalize_key(option)] = value
    if section == "global":
        for command, read in expected.items():
            if normalize_key(option) not in _section_keys(text, command) or command == "global":
                read[normalize_key(option)] = value
    if _pip_reads(edited) != expected:
        raise ValueError(f"setting [{section}] {option} here would change other options pip reads")
    return edited


def _section_keys(text: str, section: str) -> set[str]:
    return {k.partition(".")[2] for k in pip_options(_parse(text)) if k.startswith(f"{section}.")}
