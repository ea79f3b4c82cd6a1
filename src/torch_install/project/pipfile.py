"""A pipenv project's ``Pipfile`` (TOML), read as pipenv reads it: ``[packages]``, and the categories ``--group``
names (``dev`` is ``[dev-packages]``; any other, its own table); each entry a version (``"*"``, ``"==2.5.1"``,
``">=2.4"``) or a table of ``version``, ``extras``, ``markers`` and PEP 508 marker names as keys
(``sys_platform = "== 'linux'"``), ``index``, or a location (``path``, ``file``, ``git`` with ``ref``;
``editable``); ``[requires] python_version`` / ``python_full_version``, the Python pipenv makes the environment
with. A ``Pipfile.lock`` given with ``-r`` is read as ``pipenv sync`` installs it (``read_pipfile_lock``): its
``default`` packages (``develop`` too with ``--group dev``) pinned, with their hashes.

Sources (``[[source]]``, a ``name`` and a ``url`` each): a package's ``index`` names the one it comes from, and one
without an index comes from the first (pipenv's default). A source laid out as the PyTorch index's
(``…/whl/cu121``) that serves a family package names its build, as a uv source does; another's index serves the
packages that ride along (``--index-url`` for the first, ``--extra-index-url`` for one a package names). Every
problem of shape is one InputError naming the table."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import BuildSource, FileOption, Wanted
from ..resolver.request import PACKAGES, canonical_name
from .bounds import ReadBudget
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

# PEP 508's marker names, which pipenv takes as keys of a package's table
MARKER_KEYS = ("os_name", "sys_platform", "platform_machine", "platform_python_implementation", "platform_release",
               "platform_system", "platform_version", "python_version", "python_full_version", "implementation_name",
               "implementation_version")


class Pipfile:
    """What a Pipfile asks for: requirements, the family's builds its sources name, the ride-along packages'
    index options, the environment's Python (PEP 440 range, what names it) and notes."""

    def __init__(self) -> None:
        self.wanted: list[Wanted] = []
        self.builds: list[BuildSource] = []
        self.options: list[FileOption] = []
        self.python: tuple[str, str] | None = None
        self.notes: list[str] = []


def read_pipfile(path: str, groups: Sequence[str], budget: ReadBudget) -> Pipfile:
    """The Pipfile at ``path``, its ``[packages]`` and the categories ``groups`` names."""
    from .pyproject import load_toml
    from .uv_sources import variant_index

    document = load_toml(path, budget)
    read = Pipfile()
    sources = _sources(path, document.get("source", []))
    tables = [("packages", document.get("packages", {}))]
    for group in groups:
        key = "dev-packages" if canonical_name(group) == "dev" else group
        if key not in document or key in ("source", "requires", "pipenv", "scripts", "packages"):
            categories = ["dev" if k == "dev-packages" else k for k, v in document.items() if isinstance(v, dict)
                          and k not in ("requires", "pipenv", "scripts", "packages")]
            raise InputError(f"--group {group}: {path} has no such package category (has: "
                             f"{', '.join(categories) or 'none'})")
        tables.append((key, document[key]))
    first = next(iter(sources.items()), None)
    extra_indexes: dict[str, str] = {}
    for where, table in tables:
        if not isinstance(table, dict):
            raise InputError(f"--project: {path}: [{where}] is not a table")
        for name, value in table.items():
            origin = f"{path}: {where}.{name}"
            text, index, editable = _requirement(str(name), value, origin)
            key = canonical_name(str(name))
            named = index or (first[0] if first else None)
            url = sources.get(named) if named else None
            if index is not None and url is None:
                raise InputError(f"--project: {origin}: index {index!r} is no [[source]] (has: "
                                 f"{', '.join(sources) or 'none'})")
            if key in PACKAGES and url is not None:
                found = variant_index(url)
                if found is not None:
                    marker = text.split(";", 1)[1].strip() if ";" in text else None
                    read.builds.append(BuildSource(key, found[2], url, f"Pipfile [{where}] {name} from [[source]] "
                                                   f"{named}" + ("" if index else " (the first: pipenv's default)"),
                                                   marker))
                elif index is not None:
                    read.notes.append(f"{origin}: {name} from the source {index!r}, whose URL names no build of the "
                                      "PyTorch index: the plan chooses the build for the machine")
            elif index is not None and url is not None and index != (first[0] if first else None):
                extra_indexes.setdefault(index, url)
            read.wanted.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin,
                                      editable=editable))
    if first is not None and variant_index(first[1]) is None:  # pipenv's default index, as the Pipfile has it
        read.options.append(FileOption("--index-url", first[1], f"{path}: [[source]] {first[0]} (the first)"))
    for name, url in extra_indexes.items():
        read.options.append(FileOption("--extra-index-url", url, f"{path}: [[source]] {name}"))
    read.python = _python(path, document.get("requires", {}))
    read.notes.insert(0, f"{path}: read as pipenv reads it ([packages]{', ' if groups else ''}"
                         f"{', '.join(w for w, _ in tables[1:])}); the environment is pipenv's to make "
                         "(pipenv install), the plan says which build goes in it")
    return read


def _sources(path: str, value: Any) -> dict[str, str]:
    """name -> URL of the ``[[source]]`` tables, in order."""
    if not isinstance(value, list):
        raise InputError(f"--project: {path}: source is not an array of [[source]] tables")
    out: dict[str, str] = {}
    for i, source in enumerate(value):
        if not isinstance(source, dict) or not isinstance(source.get("name"), str) \
                or not isinstance(source.get("url"), str):
            raise InputError(f"--project: {path}: source[{i}] is not a table with a name and a url")
        out[source["name"]] = source["url"]
    return out


def _requirement(name: str, value: Any, origin: str) -> tuple[str, str | None, bool]:
    """(PEP 508 requirement, the source it names, editable) of one package entry."""
    if isinstance(value, str):
        value = {"version": value}
    if not isinstance(value, dict):
        raise InputError(f"--project: {origin} is neither a version string nor a table")
    extras = value.get("extras", [])
    if not isinstance(extras, list) or not all(isinstance(e, str) for e in extras):
        raise InputError(f"--project: {origin}: extras is not a list of names")
    head = name + (f"[{','.join(extras)}]" if extras else "")
    markers = [f"({value['markers']})"] if isinstance(value.get("markers"), str) else []
    markers += [f"{key} {value[key].strip()}" for key in MARKER_KEYS if isinstance(value.get(key), str)]
    where = f" ; {' and '.join(markers)}" if markers else ""
    index = value.get("index")
    if index is not None and not isinstance(index, str):
        raise InputError(f"--project: {origin}: index is not a source name")
    editable = bool(value.get("editable"))
    if isinstance(value.get("git"), str):
        ref = f"@{value['ref']}" if isinstance(value.get("ref"), str) else ""
        git = value["git"] if value["git"].startswith("git+") else f"git+{value['git']}"
        return f"{head} @ {git}{ref}{where}", index, editable
    if isinstance(value.get("file"), str):
        return f"{head} @ {value['file']}{where}", index, editable
    if isinstance(value.get("path"), str):
        return value["path"] + (f"[{','.join(extras)}]" if extras else ""), index, editable
    version = value.get("version", "*")
    if not isinstance(version, str):
        raise InputError(f"--project: {origin}: version is not a string")
    version = version.strip()
    spec = "" if version in ("", "*") else f"=={version}" if re.match(r"[0-9]", version) else version
    return f"{head}{spec}{where}", index, editable


def _python(path: str, requires: Any, table: str = "Pipfile [requires]") -> tuple[str, str] | None:
    """The Python of ``[requires]`` (``table``) as a PEP 440 range and what names it; None without one."""
    if not isinstance(requires, dict):
        raise InputError(f"--project: {path}: [requires] is not a table")
    for key in ("python_full_version", "python_version"):
        value = requires.get(key)
        if isinstance(value, str) and re.fullmatch(r"[0-9]+(\.[0-9]+){1,2}", value.strip()):
            version = value.strip()
            return (f"=={version}" if key == "python_full_version" else f"=={version}.*",
                    f"{table} {key} = \"{version}\"")
    return None


def is_pipfile_lock(path: str) -> bool:
    """Whether ``path`` names a pipenv lock."""
    return os.path.basename(path) == "Pipfile.lock"


def read_pipfile_lock(path: str, groups: Sequence[str], budget: ReadBudget) -> Pipfile:
    """The packages of the pipenv lock at ``path`` (JSON): ``default``, and the categories ``groups`` names
    (``dev``: ``develop``), each pinned under its markers with its hashes; a family package's index laid out as
    the PyTorch index's names its build."""
    import json

    from .bounds import read_bounded
    from .uv_sources import variant_index

    data = read_bounded(path, path, "a Pipfile.lock", budget)
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not JSON ({exc})") from None
    meta = document.get("_meta") if isinstance(document, dict) else None
    if not isinstance(meta, dict):
        raise InputError(f"{path}: not a Pipfile.lock (no _meta table)")
    sources = _sources(path, meta.get("sources", []))
    read = Pipfile()
    sections = ["default", *("develop" if canonical_name(g) == "dev" else g for g in groups)]
    for section in sections:
        table = document.get(section)
        if not isinstance(table, dict):
            raise InputError(f"{path}: has no {section} section" if section != "default" else
                             f"{path}: default is not a table")
        for name, entry in table.items():
            origin = f"{path}: {section}.{name}"
            if not isinstance(entry, dict):
                raise InputError(f"{origin} is not a table")
            text, index, editable = _requirement(str(name), {k: v for k, v in entry.items() if k != "hashes"},
                                                 origin)
            hashes = entry.get("hashes", [])
            if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
                raise InputError(f"{origin}.hashes is not a list of hashes")
            key = canonical_name(str(name))
            url = sources.get(index) if index else None
            found = variant_index(url) if url else None
            if key in PACKAGES and found is not None and "+" not in text.split(";")[0]:
                marker = text.split(";", 1)[1].strip() if ";" in text else None
                read.builds.append(BuildSource(key, found[2], str(url), f"{path} {section}.{name} from {index}",
                                               marker))
            read.wanted.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin,
                                      hashes=tuple(hashes), editable=editable, file=path))
    read.python = _python(path, meta.get("requires", {}), "Pipfile.lock _meta.requires")
    read.notes.append(f"{path}: pipenv's lock ({', '.join(sections)}): each package installs as locked, with its "
                      "hashes; the file itself is not handed to the installer")
    return read
