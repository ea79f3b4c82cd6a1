"""A project's requirements from its ``pyproject.toml``: PEP 621 ``[project] dependencies``, the
``optional-dependencies`` chosen with ``--extra``, and PEP 735 ``[dependency-groups]`` chosen with ``--group``
(``{include-group = "…"}`` followed, each group once, at most ``MAX_DEPTH`` deep). Every problem is an InputError
naming the file and the table or line: invalid TOML, arrays nested too deep to read, numbers too long to convert,
tables that are not tables. A poetry project (no ``[project]`` table, a ``[tool.poetry.dependencies]`` one) is read
as poetry reads it (``poetry.py``)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import Wanted
from ..resolver.request import canonical_name
from .bounds import MAX_DEPTH, ReadBudget, read_bounded
from .dynamic import Dynamic
from .requirement_name import requirement_name, requirement_strings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .uv_sources import UvSources


def pyproject_path(directory: str) -> str:
    """``DIR/pyproject.toml`` (``directory`` may name the file itself)."""
    return directory if directory.endswith(".toml") else os.path.join(directory, "pyproject.toml")


def load_toml(path: str, budget: ReadBudget | None = None, toml_1_1: bool = False) -> dict[str, Any]:
    """The TOML document at ``path`` as plain data (tomllib, or tomlkit before Python 3.11). ``toml_1_1``: the file
    is read by a TOML 1.1 reader where it is used (pixi reads its manifest so: an inline table over several lines,
    a trailing comma in it), and so it is here too, by tomlkit, where tomllib's TOML 1.0 refuses it."""
    data = read_bounded(path, f"--project: {path}", "a pyproject.toml", budget or ReadBudget())
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"--project: {path}:{line}: not UTF-8 text") from None
    try:
        return _parse_toml(path, text, toml_1_1)
    except RecursionError:
        deep = _deep_line(text)
        raise InputError(f"--project: {path}{f':{deep}' if deep else ''}: arrays or tables nested too deep to "
                         "read") from None
    except ValueError as exc:  # a number too long to convert; tomllib's own errors are caught below
        long_number = re.search("[0-9]{1000}", text)
        where = f":{text.count(NEWLINE, 0, long_number.start()) + 1}" if long_number else ""
        raise InputError(f"--project: {path}{where}: not valid TOML ({exc})") from None


def _parse_toml(path: str, text: str, toml_1_1: bool = False) -> dict[str, Any]:
    refused: Exception | None = None  # what the TOML 1.0 reader said, where the 1.1 reader is tried after it
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            if not toml_1_1:
                raise InputError(f"--project: {path}: not valid TOML ({exc})") from None
            refused = exc
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document: dict[str, Any] = tomlkit.parse(text).unwrap()
    except TOMLKitError as exc:
        raise InputError(f"--project: {path}: not valid TOML ({refused or exc})") from None
    return document


# What opens or closes a TOML array or inline table, and what can hold a bracket without doing so (strings,
# comments)
_TOML_TOKEN = (r'"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""|\'\'\'[\s\S]*?\'\'\''
               r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]')
DEEP = 100  # brackets open at once; tomllib gives up at a few hundred
NEWLINE = "\n"


def _deep_line(text: str) -> int | None:
    """The line where arrays or inline tables first nest ``DEEP`` deep, if any."""
    depth = 0
    for token in re.finditer(_TOML_TOKEN, text):
        bracket = token[0]
        if bracket in "[{":
            depth += 1
            if depth >= DEEP:
                return text.count(NEWLINE, 0, token.start()) + 1
        elif bracket in "]}":
            depth -= 1
    return None


def read_pyproject(directory: str, extras: Sequence[str] = (), groups: Sequence[str] = (),
                   budget: ReadBudget | None = None, notes: list[str] | None = None,
                   sources: UvSources | None = None) -> list[Wanted]:
    """The requirements of the project in ``directory``: its dependencies, the chosen extras' and groups', a
    requirement on the project's own extras (``myproj[cuda]``) read as those extras' requirements (``notes``
    says so); with ``sources``, as its ``[tool.uv.sources]`` and ``[[tool.uv.index]]`` make them
    (``uv_sources.py``: the family's builds and the others' index options go to ``sources``)."""
    path = pyproject_path(directory)
    setup_cfg = os.path.join(os.path.dirname(path), "setup.cfg")
    setup_py = os.path.join(os.path.dirname(path), "setup.py")
    if not os.path.exists(path) and os.path.isfile(setup_cfg):  # a setuptools project of setup.cfg alone
        return _setuptools_project(os.path.dirname(path), extras, groups, budget, notes)
    if not os.path.exists(path) and os.path.isfile(setup_py):
        return _setup_py_only(setup_py, extras, groups, notes)
    document = load_toml(path, budget)
    project = document.get("project")
    if project is None:
        from .poetry import is_poetry, read_poetry

        if is_poetry(document):
            wanted = read_poetry(path, document, extras, groups, notes if notes is not None else [])
            _poetry_sources(path, document, groups, notes, sources)
            return wanted
        if os.path.isfile(setup_cfg):  # [build-system] (and tools') tables only: setuptools reads setup.cfg
            return _setuptools_project(os.path.dirname(path), extras, groups, budget, notes)
        if os.path.isfile(setup_py):
            return _setup_py_only(setup_py, extras, groups, notes)
    if not isinstance(project, dict):
        raise InputError(f"--project: {path} has no [project] table (PEP 621), [tool.poetry.dependencies] nor "
                         "setup.cfg beside it")
    dynamic = Dynamic()
    if "dynamic" in project:  # made by the build backend: read where its table names them as files
        from .dynamic import read_dynamic

        dynamic = read_dynamic(path, document, project, budget or ReadBudget(), notes if notes is not None else [])
    wanted = list(dynamic.dependencies) if dynamic.dependencies is not None else \
        requirement_strings(path, "project.dependencies", project.get("dependencies", []))
    optional = project.get("optional-dependencies", {})
    if not isinstance(optional, dict):
        raise InputError(f"--project: {path}: project.optional-dependencies is not a table")
    optional = {**optional, **dynamic.extras}
    by_name = {canonical_name(k): k for k in optional}
    for extra in extras:
        key = by_name.get(canonical_name(extra))
        if key is None:
            raise InputError(f"--extra {extra}: {path} defines no such extra (has: "
                             f"{', '.join(sorted(optional)) or 'none'})")
        wanted += _extra(path, key, optional)
    pdm = document.get("tool", {}).get("pdm") if isinstance(document.get("tool"), dict) else None
    if isinstance(pdm, dict) and "dev-dependencies" in pdm:  # PDM's own groups, beside PEP 735's
        from .pdm import pdm_groups

        from_pdm, rest = pdm_groups(path, document, groups)
        wanted = _groups(path, document, rest, wanted) + from_pdm
    else:
        wanted = _groups(path, document, groups, wanted)
    name = project.get("name")
    if isinstance(name, str) and any(w.name == canonical_name(name) for w in wanted):
        wanted = _OwnExtras(path, canonical_name(name), optional, by_name, notes if notes is not None else []
                            ).read(wanted, {by_name[canonical_name(e)] for e in extras})
    if sources is not None:
        from .uv_sources import read_uv_sources

        read = budget or ReadBudget()
        loaded: dict[str, dict[str, Any]] = {}  # each of the workspace's files read once, and counted once

        def load(other: str) -> dict[str, Any]:
            if other not in loaded:
                loaded[other] = load_toml(other, read)
            return loaded[other]

        wanted = read_uv_sources(path, document, wanted, extras, groups, notes if notes is not None else [], sources,
                                 load)
        from .uv_settings import apply_uv_settings

        wanted = apply_uv_settings(path, document, wanted, notes if notes is not None else [])
    _poetry_sources(path, document, groups, notes, sources)  # poetry 2 reads [project] with its sources
    if sources is not None and isinstance(pdm, dict) and "source" in pdm:
        from .pdm import pdm_builds

        sources.builds += pdm_builds(path, document, notes if notes is not None else [])
    return wanted


def _setuptools_project(directory: str, extras: Sequence[str], groups: Sequence[str], budget: ReadBudget | None,
                        notes: list[str] | None) -> list[Wanted]:
    """The requirements a setuptools project's setup.cfg declares (``setup_cfg.py``)."""
    from .setup_cfg import read_setup_cfg

    if groups:
        raise InputError(f"--group selects a pyproject.toml's dependency groups; {directory}'s setup.cfg has none")
    return read_setup_cfg(directory, extras, budget or ReadBudget(), notes if notes is not None else [])


def _setup_py_only(setup_py: str, extras: Sequence[str], groups: Sequence[str], notes: list[str] | None
                   ) -> list[Wanted]:
    """A project whose requirements only its setup.py's code says: nothing read (it is not run), a note."""
    if extras or groups:
        raise InputError(f"--extra and --group select what a project's files declare; {setup_py}'s code is not "
                         "read (it is not run)")
    if notes is not None:
        notes.append(f"{setup_py}: the project's requirements are in its code, which is not run: they bound nothing "
                     "here (declare them in pyproject.toml or setup.cfg, or give them with -r)")
    return []


def _poetry_sources(path: str, document: dict[str, Any], groups: Sequence[str], notes: list[str] | None,
                    sources: UvSources | None) -> None:
    """The builds a poetry project's ``[[tool.poetry.source]]`` names, added to ``sources`` (``poetry.py``)."""
    tool = document.get("tool")
    if sources is None or not isinstance(tool, dict) or not isinstance(tool.get("poetry"), dict) \
            or "source" not in tool["poetry"]:
        return
    from .poetry import poetry_builds

    sources.builds += poetry_builds(path, document, groups, notes if notes is not None else [])


class _OwnExtras:
    """A requirement on the project itself with extras (``myproj[cuda]``, as pip and uv read it): the requirements
    of those extras in its place, each extra read once, a marker on the requirement kept on each of them; extras
    that include each other are named in one note, an extra the project does not define too."""

    def __init__(self, path: str, name: str, optional: dict[str, Any], by_name: dict[str, str],
                 notes: list[str]) -> None:
        self.path, self.name, self.optional, self.by_name, self.notes = path, name, optional, by_name, notes
        self.expanded: list[str] = []  # the requirements on the project's own extras, as written

    def read(self, wanted: list[Wanted], done: set[str]) -> list[Wanted]:
        """``wanted`` with each requirement on the project's own extras expanded, and one note naming them."""
        out = self.expand(wanted, done)
        if self.expanded:
            shown = ", ".join(dict.fromkeys(self.expanded))
            self.notes.insert(0, f"{self.path}: {shown} name{'s' if len(self.expanded) == 1 else ''} the project's "
                                 "own extras: their requirements are read in place")
        return out

    def expand(self, wanted: list[Wanted], done: set[str], chain: tuple[str, ...] = ()) -> list[Wanted]:
        from packaging.requirements import Requirement

        out: list[Wanted] = []
        for w in wanted:
            if w.name != self.name:
                out.append(w)
                continue
            req = Requirement(w.text)
            within = chain or self.extra_of(w)
            if not req.extras:
                self.notes.append(f"{w.origin}: {w.text} is the project itself, which torch-install does not "
                                  "install (its requirements are read; install it with pip install -e . or uv sync)")
                continue
            keys = []
            for extra in sorted(req.extras):
                key = self.by_name.get(canonical_name(extra))
                if key is None:
                    self.notes.append(f"{w.origin}: {w.text}: the project defines no extra {extra} (has: "
                                      f"{', '.join(sorted(self.optional)) or 'none'}); nothing is added for it")
                elif key in within:
                    self.notes.append(f"{self.path}: extras include each other ({' -> '.join([*within, key])}): each "
                                      "is read once")
                elif key not in done:
                    keys.append(key)
            self.expanded.append(w.text)
            for key in keys:
                if len(within) >= MAX_DEPTH:
                    raise InputError(f"--project: {self.path}: extras naming the project's own extras nest more "
                                     f"than {MAX_DEPTH} deep ({within[0]} -> … -> {key})")
                done.add(key)
                inner = _extra(self.path, key, self.optional)
                if req.marker is not None:
                    inner = [i._replace(text=_with_marker(i.text, str(req.marker))) for i in inner]
                out += self.expand(inner, done, (*within, key))
        return out

    def extra_of(self, wanted: Wanted) -> tuple[str, ...]:
        """The extra a requirement was read from (its origin says), as the start of a chain; () for another."""
        head = f"{self.path}: project.optional-dependencies."
        if not wanted.origin.startswith(head):
            return ()
        key = wanted.origin[len(head):].rsplit("[", 1)[0]
        return (key,) if key in self.optional else ()


def _extra(path: str, key: str, optional: dict[str, Any]) -> list[Wanted]:
    """The requirements of extra ``key``: its ``project.optional-dependencies`` strings, or those its dynamic
    files hold (``dynamic.py``, already read)."""
    value = optional[key]
    if isinstance(value, tuple):
        return list(value)
    return requirement_strings(path, f"project.optional-dependencies.{key}", value)


def _with_marker(text: str, marker: str) -> str:
    """The requirement ``text`` that applies only where ``marker`` holds too."""
    from packaging.markers import Marker
    from packaging.requirements import Requirement

    req = Requirement(text)
    req.marker = Marker(f"({req.marker}) and ({marker})" if req.marker is not None else marker)
    return str(req)


def _groups(path: str, document: dict[str, Any], groups: Sequence[str], wanted: list[Wanted]) -> list[Wanted]:
    """``wanted`` and the requirements of the chosen dependency groups (PEP 735), includes followed."""
    table = document.get("dependency-groups", {})
    if not isinstance(table, dict):
        raise InputError(f"--project: {path}: dependency-groups is not a table")
    names = {canonical_name(k): k for k in table}
    tool = document.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    uv_dev = uv.get("dev-dependencies") if isinstance(uv, dict) else None  # uv's own, joined to the dev group
    done: set[str] = set()
    for group in groups:
        key = names.get(canonical_name(group))
        if canonical_name(group) == "dev" and uv_dev is not None:
            wanted += requirement_strings(path, "tool.uv.dev-dependencies", uv_dev)
            uv_dev = None  # read once
            if key is None:
                continue
        if key is None:
            raise InputError(f"--group {group}: {path} defines no such dependency group (has: "
                             f"{', '.join(sorted([*table, *(['dev'] if uv_dev is not None else [])])) or 'none'})")
        _group(path, table, names, key, (), done, wanted)
    return wanted


def _group(path: str, table: dict[str, Any], names: dict[str, str], key: str, chain: tuple[str, ...],
           done: set[str], wanted: list[Wanted]) -> None:
    """The requirements of group ``key`` added to ``wanted``, its includes followed: a group already added adds
    nothing again (so a group included twice, or two groups that include a third, cost one reading each)."""
    if key in chain:
        raise InputError(f"--project: {path}: dependency-groups include themselves ({' -> '.join([*chain, key])})")
    if key in done:
        return
    if len(chain) >= MAX_DEPTH:
        raise InputError(f"--project: {path}: dependency-groups.{chain[0]}: include-group nested more than "
                         f"{MAX_DEPTH} deep ({chain[0]} -> {chain[1]} -> … -> {key})")
    items = table[key]
    if not isinstance(items, list):
        raise InputError(f"--project: {path}: dependency-groups.{key} is not a list")
    for i, item in enumerate(items):
        where = f"dependency-groups.{key}[{i}]"
        if isinstance(item, str):
            origin = f"{path}: {where}"
            wanted.append(Wanted(text=item.strip(), name=requirement_name(item.strip(), origin), origin=origin))
        elif isinstance(item, dict) and set(item) == {"include-group"} and isinstance(item["include-group"], str):
            included = names.get(canonical_name(item["include-group"]))
            if included is None:
                raise InputError(f"--project: {path}: {where} includes {item['include-group']!r}, which is no "
                                 f"dependency group (has: {', '.join(sorted(table))})")
            _group(path, table, names, included, (*chain, key), done, wanted)
        else:
            raise InputError(f"--project: {path}: {where} is neither a requirement nor {{include-group = \"…\"}}")
    done.add(key)
