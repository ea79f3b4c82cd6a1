"""A poetry project's requirements, read as poetry reads them, where its pyproject.toml has no ``[project]`` table:
``[tool.poetry.dependencies]`` (``python`` is the interpreter's, not a package), its optional packages where an
extra of ``[tool.poetry.extras]`` chosen with ``--extra`` names them, and ``[tool.poetry.group.NAME.dependencies]``
(``dev-dependencies`` for ``dev``) chosen with ``--group``.

A version constraint is poetry's (its dependency specification): ``^1.2.3`` is ``>=1.2.3,<2.0.0`` (the left-most
non-zero part kept), ``~1.2.3`` is ``>=1.2.3,<1.3.0`` (``~1`` is ``>=1,<2``), ``1.2.*`` and ``*`` as PEP 440
reads them, a bare version is that version exactly, and comparisons are PEP 440's (separated by commas or
spaces). A table adds ``markers``, ``python`` and ``platform`` (as markers), ``extras``, and ``url``, ``path`` or
``git`` (a direct reference); a list of tables is one requirement each. What cannot be written as one PEP 440
specifier (``^1 || ^2``) is read without its versions, with a note. A ``[[tool.poetry.source]]`` laid out as the
PyTorch index that a family package's ``source`` names, or that poetry searches first, names the build
(``poetry_builds``), as uv's sources do. Every problem of shape is one InputError naming the table."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import InputError
from ..resolver.plan import Wanted
from ..resolver.request import PACKAGES, canonical_name
from .requirement_name import requirement_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..resolver.plan import BuildSource

_VERSION = r"[0-9]+(?:\.[0-9]+)*"


def is_poetry(document: dict[str, Any]) -> bool:
    """Whether the document is a poetry project's (a ``[tool.poetry]`` table with dependencies of its own)."""
    tool = document.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    return isinstance(poetry, dict) and any(k in poetry for k in ("dependencies", "group", "dev-dependencies"))


def pep440(constraint: str) -> str | None:
    """A poetry version constraint as a PEP 440 specifier ("" for any version); None for one that is not a single
    specifier (an ``||`` of several)."""
    text = constraint.strip()
    if "|" in text:
        return None
    text = re.sub(r"(==|!=|<=|>=|<|>|~=|\^|~)\s+", r"\1", text)
    out: list[str] = []
    for clause in (c for c in re.split(r"\s*,\s*|\s+", text) if c):
        if clause == "*":
            continue
        caret = re.fullmatch(rf"\^\s*({_VERSION})(.*)", clause)
        tilde = re.fullmatch(rf"~(?!=)\s*({_VERSION})(.*)", clause)
        if caret or tilde:
            found = caret or tilde
            assert found is not None
            parts = [int(p) for p in found[1].split(".")]
            if caret:
                keep = min(next((i for i, p in enumerate(parts) if p), len(parts) - 1), 2)
            else:
                keep = 0 if len(parts) == 1 else 1
            upper = [*parts[:keep], parts[keep] + 1]
            out += [f">={found[1]}{found[2]}", "<" + ".".join(map(str, upper))]
        elif re.fullmatch(rf"{_VERSION}(?:\.\*)?", clause) or re.fullmatch(rf"{_VERSION}[a-z0-9.+!-]*", clause):
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)


def read_poetry(path: str, document: dict[str, Any], extras: Sequence[str], groups: Sequence[str],
                notes: list[str]) -> list[Wanted]:
    """The requirements of the poetry project ``document`` (read from ``path``) for the extras and groups chosen."""
    poetry = document["tool"]["poetry"]
    main = _table(path, "tool.poetry.dependencies", poetry.get("dependencies", {}))
    defined = _table(path, "tool.poetry.extras", poetry.get("extras", {}))
    chosen: set[str] = set()
    by_name = {canonical_name(k): k for k in defined}
    for extra in extras:
        key = by_name.get(canonical_name(extra))
        if key is None:
            raise InputError(f"--extra {extra}: {path} defines no such extra in [tool.poetry.extras] (has: "
                             f"{', '.join(sorted(defined)) or 'none'})")
        names = defined[key]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InputError(f"--project: {path}: tool.poetry.extras.{key} is not a list of package names")
        chosen |= {canonical_name(n.split("[")[0]) for n in names}
    wanted = _entries(path, "tool.poetry.dependencies", main, chosen, notes)
    tables = _table(path, "tool.poetry.group", poetry.get("group", {}))
    group_names = {canonical_name(k): k for k in tables}
    for group in groups:
        key = group_names.get(canonical_name(group))
        if key is not None:
            body = _table(path, f"tool.poetry.group.{key}", tables[key])
            where = f"tool.poetry.group.{key}.dependencies"
            wanted += _entries(path, where, _table(path, where, body.get("dependencies", {})), None, notes)
        elif canonical_name(group) == "dev" and "dev-dependencies" in poetry:
            where = "tool.poetry.dev-dependencies"
            wanted += _entries(path, where, _table(path, where, poetry["dev-dependencies"]), None, notes)
        else:
            raise InputError(f"--group {group}: {path} defines no such poetry group (has: "
                             f"{', '.join(sorted(tables)) or 'none'})")
    notes.insert(0, f"{path}: read as poetry reads it ([tool.poetry.dependencies], its extras and groups; ^ and ~ "
                    "as poetry's ranges); the project itself is poetry's to install (poetry install)")
    return wanted


def _marker(item: dict[str, Any]) -> str:
    """Where a dependency table holds, as a PEP 508 marker ("" everywhere): its ``markers``, ``python``,
    ``platform``."""
    markers = []
    if isinstance(item.get("markers"), str):
        markers.append(f"({item['markers']})")
    if isinstance(item.get("python"), str):
        python = pep440(item["python"])
        if python:
            markers.append(" and ".join(f"python_full_version {m[0]} '{m[1]}'" for m in
                                        re.findall(r"(==|!=|<=|>=|<|>|~=)([^,]+)", python)))
    if isinstance(item.get("platform"), str):
        markers.append(f"sys_platform == '{item['platform']}'")
    return " and ".join(markers)


def poetry_builds(path: str, document: dict[str, Any], groups: Sequence[str], notes: list[str]) -> list[BuildSource]:
    """The builds of the torch family a poetry project's sources name, as poetry takes them: a dependency's
    ``source`` (in ``[tool.poetry.dependencies]`` or a chosen group's; poetry 2 reads it there for ``[project]``
    dependencies too), else the first primary ``[[tool.poetry.source]]`` (no priority, ``primary``, or the
    older ``default``), which poetry searches before the default index. A source whose URL is laid out as the
    PyTorch index's names its build; any other is a note."""
    from ..resolver.plan import BuildSource
    from .uv_sources import variant_index

    poetry = document.get("tool", {}).get("poetry", {})
    listed = poetry.get("source", []) if isinstance(poetry, dict) else []
    if not isinstance(listed, list) or not listed:
        return []
    sources = {}
    for i, source in enumerate(listed):
        if not isinstance(source, dict) or not isinstance(source.get("name"), str):
            raise InputError(f"--project: {path}: tool.poetry.source[{i}] is not a table with a name")
        sources[source["name"].lower()] = source
    tables = [("tool.poetry.dependencies", poetry.get("dependencies", {}))]
    group_tables = poetry.get("group", {}) if isinstance(poetry.get("group", {}), dict) else {}
    chosen = {canonical_name(g) for g in groups}
    tables += [(f"tool.poetry.group.{k}.dependencies", v.get("dependencies", {})) for k, v in group_tables.items()
               if canonical_name(k) in chosen and isinstance(v, dict)]
    builds: list[BuildSource] = []
    for name in PACKAGES:
        items = [(f"{where}.{key}", item) for where, table in tables if isinstance(table, dict)
                 for key, value in table.items() if canonical_name(str(key)) == name
                 for item in (value if isinstance(value, list) else [value]) if isinstance(item, dict)]
        sourced = [(where, item) for where, item in items if isinstance(item.get("source"), str)]
        for where, item in sourced:
            source = sources.get(item["source"].lower())
            if source is None and item["source"].lower() != "pypi":
                raise InputError(f"--project: {path}: {where}: source {item['source']!r} is no "
                                 f"[[tool.poetry.source]] (has: {', '.join(s['name'] for s in listed)})")
            url = str(source.get("url", "")) if source is not None else ""  # "pypi": the default index
            found = variant_index(url)
            if found is None:
                notes.append(f"{path}: {where}: {name} from poetry's source {item['source']!r}, whose URL names no "
                             "build of the PyTorch index: the plan chooses the build for the machine")
                continue
            builds.append(BuildSource(name, found[2], url, f"[tool.poetry.dependencies] {name} = "
                                      f"{{ source = \"{item['source']}\" }}", _marker(item) or None))
        if sourced and all(_marker(item) for _, item in sourced) or not sourced:
            primary = _primary(listed)
            if primary is not None and (found := variant_index(str(primary.get("url", "")))) is not None:
                builds.append(BuildSource(name, found[2], str(primary["url"]), f"[[tool.poetry.source]] "
                                          f"{primary['name']} (primary: poetry searches it first for every package)",
                                          unless=tuple(_marker(item) for _, item in sourced)))
    return builds


def _primary(listed: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The source poetry searches first for a package that names none: a ``default`` one (priority, or the older
    ``default = true``), else the first primary (no priority and not the older ``secondary = true``)."""
    def priority(source: dict[str, Any]) -> str:
        if source.get("default") is True:
            return "default"
        if source.get("secondary") is True:
            return "supplemental"
        return str(source.get("priority", "primary"))

    return next((s for s in listed if priority(s) == "default"), None) or \
        next((s for s in listed if priority(s) == "primary" and s.get("name", "").lower() != "pypi"), None)


def _table(path: str, where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"--project: {path}: {where} is not a table")
    return value


def _entries(path: str, where: str, table: dict[str, Any], chosen: set[str] | None,
             notes: list[str]) -> list[Wanted]:
    """The requirements of one dependencies table; its optional packages only where ``chosen`` names them
    (``None``: a group's, none optional)."""
    out: list[Wanted] = []
    for name, value in table.items():
        key = canonical_name(str(name))
        if key == "python":
            continue
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            origin = f"{path}: {where}.{name}" + (f"[{i}]" if isinstance(value, list) else "")
            if isinstance(item, dict) and item.get("optional") and chosen is not None and key not in chosen:
                continue
            text = _requirement(str(name), item, origin, notes)
            out.append(Wanted(text=text, name=requirement_name(text, origin), origin=origin,
                              editable=isinstance(item, dict) and bool(item.get("develop"))))
    return out


def _requirement(name: str, item: Any, origin: str, notes: list[str]) -> str:
    """One poetry dependency as a PEP 508 requirement."""
    if isinstance(item, str):
        item = {"version": item}
    if not isinstance(item, dict):
        raise InputError(f"--project: {origin} is neither a version string nor a table")
    extras = item.get("extras", [])
    if not isinstance(extras, list) or not all(isinstance(e, str) for e in extras):
        raise InputError(f"--project: {origin}: extras is not a list of names")
    head = name + (f"[{','.join(extras)}]" if extras else "")
    marker = f" ; {_marker(item)}" if _marker(item) else ""
    if "url" in item or "git" in item:
        url = str(item.get("url") or f"git+{item['git']}")
        if "git" in item and any(k in item for k in ("rev", "tag", "branch")):
            url += "@" + str(item.get("rev") or item.get("tag") or item.get("branch"))
        return f"{head} @ {url}{marker}"
    if "path" in item:
        return str(item["path"])
    version = str(item.get("version", "*"))
    spec = pep440(version)
    if spec is None:
        notes.append(f"{origin}: {version!r} is several ranges, which no one PEP 440 specifier writes: read as any "
                     "version")
        spec = ""
    return f"{head}{spec}{marker}"
