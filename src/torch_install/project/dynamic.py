"""A pyproject's dependencies its build backend makes (``dynamic = ["dependencies", "optional-dependencies"]``),
where the backend's own table names them as data: setuptools' ``[tool.setuptools.dynamic]`` ``{file = […]}``
entries and the hatch-requirements-txt plugin's table, read as both read them (one requirement a line, blank
lines and ``#`` comments left out; a pip option such as ``-r`` is no requirement, and both refuse it). A backend
that computes them (its code would have to run) gives nothing to read: a note says so."""

from __future__ import annotations

import os
from types import MappingProxyType

from ..errors import InputError
from ..records import Record
from ..resolver.plan import Wanted
from .bounds import ReadBudget, read_bounded
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SETUPTOOLS = "tool.setuptools.dynamic"
HATCH = "tool.hatch.metadata.hooks.requirements_txt"  # the hatch-requirements-txt plugin's table


class Dynamic(Record):
    """What the backend's table says: the dependencies (None: not dynamic) and each dynamic extra's."""

    dependencies: tuple[Wanted, ...] | None = None
    extras: Mapping[str, tuple[Wanted, ...]] = MappingProxyType({})


class _Files(Record):
    """The files a backend's table names: for the dependencies (None: it names none), for each extra."""

    table: str
    dependencies: list[str] | None
    extras: dict[str, list[str]]


def read_dynamic(path: str, document: dict[str, Any], project: dict[str, Any], budget: ReadBudget,
                 notes: list[str]) -> Dynamic:
    """The dynamic dependencies and extras of the pyproject at ``path`` (``document``, its ``project`` table);
    ``notes`` says where they come from, or that they are not read."""
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or not all(isinstance(field, str) for field in dynamic):
        raise InputError(f"--project: {path}: project.dynamic is not a list of field names")
    if not {"dependencies", "optional-dependencies"} & set(dynamic):
        return Dynamic()
    files = _hatch_files(path, document) or _setuptools_files(path, document)
    found = Dynamic()
    read: list[str] = []
    if "dependencies" in dynamic:
        if files.dependencies is None:
            notes.append(f"{path}: its dependencies are dynamic, made by its build backend: not read here, so they "
                         "bound nothing (list them in [project] dependencies, or name their file in "
                         f"[{SETUPTOOLS}])")
        else:
            found = found._replace(dependencies=_read(path, f"{files.table}.dependencies", files.dependencies,
                                                      budget, read))
    if "optional-dependencies" in dynamic:
        found = found._replace(extras={key: _read(path, f"{files.table}.optional-dependencies.{key}", names, budget,
                                                  read) for key, names in files.extras.items()})
    if read:
        notes.append(f"{path}: its dynamic dependencies are read from {', '.join(dict.fromkeys(read))}, as "
                     f"[{files.table}] names them")
    return found


def _setuptools_files(path: str, document: dict[str, Any]) -> _Files:
    """``[tool.setuptools.dynamic]``: ``dependencies = {file = …}``, ``optional-dependencies.<extra> = {file = …}``
    (a file a string or a list of them)."""
    table = document.get("tool", {}).get("setuptools", {}).get("dynamic", {})
    table = table if isinstance(table, dict) else {}
    extras = table.get("optional-dependencies", {})
    if not isinstance(extras, dict):
        raise InputError(f"--project: {path}: {SETUPTOOLS}.optional-dependencies is not a table")
    named = {key: _file_entry(path, f"{SETUPTOOLS}.optional-dependencies.{key}", entry)
             for key, entry in extras.items()}
    entry = table.get("dependencies")
    return _Files(SETUPTOOLS, _file_entry(path, f"{SETUPTOOLS}.dependencies", entry) if entry is not None else None,
                  named)


def _file_entry(path: str, where: str, entry: Any) -> list[str]:
    """The files a ``{file = …}`` entry names."""
    files = entry.get("file") if isinstance(entry, dict) else None
    files = [files] if isinstance(files, str) else files
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise InputError(f"--project: {path}: {where} is not {{file = [...]}} naming requirement files (what else "
                         "setuptools takes there is code, not read here)")
    return files


def _hatch_files(path: str, document: dict[str, Any]) -> _Files | None:
    """hatch-requirements-txt's table: ``files`` (``filename``, its older spelling; requirements.txt when it names
    neither), ``optional-dependencies = {<extra> = [files]}``; None without the table."""
    table = document.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}).get("requirements_txt")
    if not isinstance(table, dict):
        return None
    files = [table["filename"]] if "filename" in table else table.get("files", ["requirements.txt"])
    extras = table.get("optional-dependencies", {})
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise InputError(f"--project: {path}: {HATCH}.files is not a list of file names")
    if not isinstance(extras, dict) or not all(isinstance(v, list) and all(isinstance(f, str) for f in v)
                                               for v in extras.values()):
        raise InputError(f"--project: {path}: {HATCH}.optional-dependencies is not a table of file lists")
    return _Files(HATCH, files, extras)


def _read(path: str, where: str, files: list[str], budget: ReadBudget, read: list[str]) -> tuple[Wanted, ...]:
    """The requirements of ``files``, relative to the project's directory."""
    out: list[Wanted] = []
    for name in files:
        file = os.path.join(os.path.dirname(os.path.abspath(path)), name)
        data = read_bounded(file, f"--project: {path}: {where}: {name}", "a requirements file", budget)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"--project: {path}: {where}: {name}: not UTF-8 text") from None
        read.append(name)
        for number, line in enumerate(text.splitlines(), 1):
            requirement = line.split(" #", 1)[0].split("\t#", 1)[0].strip()
            if not requirement or requirement.startswith("#"):
                continue
            origin = f"{name}:{number}"
            if requirement.startswith("-"):
                raise InputError(f"--project: {path}: {where}: {origin}: {requirement.split()[0]} is a pip option, "
                                 "not a requirement (the build backend refuses it)")
            out.append(Wanted(text=requirement, name=requirement_name(requirement, origin), origin=origin))
    return tuple(out)
