"""A pyproject's dependencies its build backend makes (``dynamic = ["dependencies", "optional-dependencies"]``),
where the backend's own table names them as data: setuptools' ``[tool.setuptools.dynamic]`` ``{file = […]}``
entries, read as setuptools reads them (one requirement a line, blank lines and ``#`` comments left out; a pip
option such as ``-r`` is no requirement, and setuptools refuses it). A backend that computes them (its code would
have to run) gives nothing to read: a note says so."""

from __future__ import annotations

import os
from types import MappingProxyType

from ..errors import InputError
from ..records import Record
from ..resolver.plan import Wanted
from .bounds import MAX_FILE, ReadBudget
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SETUPTOOLS = "tool.setuptools.dynamic"


class Dynamic(Record):
    """What the backend's table says: the dependencies (None: not dynamic) and each dynamic extra's."""

    dependencies: tuple[Wanted, ...] | None = None
    extras: Mapping[str, tuple[Wanted, ...]] = MappingProxyType({})


def read_dynamic(path: str, document: dict[str, Any], project: dict[str, Any], budget: ReadBudget,
                 notes: list[str]) -> Dynamic:
    """The dynamic dependencies and extras of the pyproject at ``path`` (``document``, its ``project`` table);
    ``notes`` says where they come from, or that they are not read."""
    dynamic = project.get("dynamic", [])
    if not isinstance(dynamic, list) or not {"dependencies", "optional-dependencies"} & set(dynamic):
        return Dynamic()
    table = document.get("tool", {}).get("setuptools", {}).get("dynamic", {})
    table = table if isinstance(table, dict) else {}
    found = Dynamic()
    read: list[str] = []
    if "dependencies" in dynamic:
        entry = table.get("dependencies")
        if _files(entry) is None:
            notes.append(f"{path}: its dependencies are dynamic, made by its build backend: not read here, so they "
                         "bound nothing (list them in [project] dependencies, or name their file in "
                         f"[{SETUPTOOLS}])")
        else:
            found = found._replace(dependencies=_read(path, f"{SETUPTOOLS}.dependencies", entry, budget, read))
    if "optional-dependencies" in dynamic:
        extras = table.get("optional-dependencies", {})
        if not isinstance(extras, dict):
            raise InputError(f"--project: {path}: {SETUPTOOLS}.optional-dependencies is not a table")
        found = found._replace(extras={key: _read(path, f"{SETUPTOOLS}.optional-dependencies.{key}", entry, budget,
                                                  read) for key, entry in extras.items()})
    if read:
        notes.append(f"{path}: its dynamic dependencies are read from {', '.join(dict.fromkeys(read))}, as "
                     "setuptools reads them")
    return found


def _files(entry: Any) -> list[str] | None:
    """The files a ``{file = …}`` entry names (a string or a list of strings); None for anything else."""
    if not isinstance(entry, dict) or "file" not in entry:
        return None
    files = entry["file"]
    files = [files] if isinstance(files, str) else files
    return files if isinstance(files, list) and all(isinstance(f, str) for f in files) else None


def _read(path: str, where: str, entry: Any, budget: ReadBudget, read: list[str]) -> tuple[Wanted, ...]:
    """The requirements of the files ``entry`` names, relative to the project's directory."""
    from ..probe import read_regular

    files = _files(entry)
    if files is None:
        raise InputError(f"--project: {path}: {where} is not {{file = [...]}} naming requirement files")
    out: list[Wanted] = []
    for name in files:
        file = os.path.join(os.path.dirname(os.path.abspath(path)), name)
        try:
            data = read_regular(file, MAX_FILE + 1)
        except OSError as exc:
            raise InputError(f"--project: {path}: {where}: {name}: cannot read ({exc.strerror or exc})") from None
        budget.take(f"--project: {path}: {where}: {name}", len(data))
        if len(data) > MAX_FILE:
            raise InputError(f"--project: {path}: {where}: {name}: over {MAX_FILE >> 20} MiB, not a requirements "
                             "file")
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
                                 "not a requirement (setuptools refuses it)")
            out.append(Wanted(text=requirement, name=requirement_name(requirement, origin), origin=origin))
    return tuple(out)
