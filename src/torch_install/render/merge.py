"""``--merge PYPROJECT``: the plan's pyproject entries (``project.py``'s ``Tables``) merged into a user's
``pyproject.toml``, edited as text through the one editor of user files (``user_files``: a regular file, read
whole, line ends, mode and owner kept, a concurrent change refused).

What the merge owns, and changes; everything else stays as the user wrote it:

- **the build's requirements**: each package torch-install chose (the torch family and the packages built against
  torch) is pinned where the project names it: its entries in ``project.dependencies``, and, when the file is the
  ``--project`` read, in the extras and dependency groups that ``--extra``/``--group`` chose; a package the file
  names in none of them is added to ``project.dependencies``. A requirement that rides along (``transformers``) is
  added to ``project.dependencies`` only when the file lists it nowhere, so merging a project into itself
  duplicates nothing and moves nothing between dependencies, extras and groups;
- **its indexes**: the ``[[tool.uv.index]]`` entries named ``torch-install-…`` (a prefix that names them
  torch-install's; the user's own indexes, ``pytorch-cu124`` included, are never touched): the plan's are added or
  updated, the others removed unless a source still names them;
- **the sources of its packages** in ``[tool.uv.sources]``, its ``no-build-isolation-package`` entries and
  ``prerelease``, and the ``requires-python`` floor of several targets.

Every valid TOML form of these tables is kept in its form (inline arrays and tables, dotted keys, ``[tool] uv =
{…}``, an array of tables split by another header). The edit is made twice, on the file's plain data and with a
layout-keeping TOML editor (tomlkit), and the result must read as the plain edit, else nothing is written. A shape
the merge cannot read (``tool.uv`` a string, ``index`` a table …) is an InputError naming it. Merging again changes
nothing.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping, MutableMapping, MutableSequence, Sequence

from ..errors import InputError
from ..resolver.pins import OWN_INDEX_PREFIX
from ..resolver.plan import Plan
from .project import Tables, pyproject_tables

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class _Selection:
    """Which of the file's requirement lists the build's pins may go into: where each is, and its plain list."""

    __slots__ = ("lists",)

    def __init__(self) -> None:
        self.lists: list[tuple[str, tuple[str, ...]]] = []  # (name for messages, key path)


def _key(text: str) -> str:
    """A requirement compared as packaging writes it ("numpy <2" is "numpy<2")."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return str(Requirement(text))
    except InvalidRequirement:
        return text.strip()


def _name(text: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement

    from ..resolver.request import canonical_name

    try:
        return canonical_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _at(root: Any, path: Sequence[str]) -> Any:
    for key in path:
        root = root[key]
    return root


def _kind(value: object) -> str:
    kinds = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "an array",
             dict: "a table"}
    return next((word for cls, word in kinds.items() if type(value) is cls), type(value).__name__)


def _want(label: str, path: str, value: object, table: bool, items: type | None = None) -> None:
    """An InputError unless ``value`` (at ``path``) is absent, a table (``table``) or an array, of ``items``."""
    if value is None:
        return
    of = " of strings" if items is str else " of tables" if items is dict else ""
    what = "a table" if table else f"an array{of}"
    if table and not isinstance(value, dict) or not table and not isinstance(value, list):
        raise InputError(f"{label}: {path} is {_kind(value)}, not {what}: torch-install does not merge into it")
    if isinstance(value, list) and items is not None and not all(isinstance(v, items) for v in value):
        odd = next(v for v in value if not isinstance(v, items))
        raise InputError(f"{label}: {path} is an array holding {_kind(odd)}, not {what}: torch-install does not merge "
                         "into it")


def _check_shape(label: str, data: Mapping[str, Any]) -> None:
    """An InputError naming the first table or list the merge reads that is not of the kind it must be."""
    _want(label, "project", data.get("project"), True)
    project = data.get("project") or {}
    _want(label, "project.dependencies", project.get("dependencies"), False, str)
    if isinstance(project.get("dynamic"), list) and "dependencies" in project["dynamic"]:
        raise InputError(f"{label}: project.dependencies is dynamic (its build backend makes it, from "
                         "[tool.setuptools.dynamic] or its own code): writing it would make it static, which the "
                         "backend refuses; the file is left as it was (--format requirements writes the lines "
                         "for the file it reads)")
    _want(label, "project.optional-dependencies", project.get("optional-dependencies"), True)
    for extra, items in (project.get("optional-dependencies") or {}).items():
        _want(label, f"project.optional-dependencies.{extra}", items, False, str)
    _want(label, "dependency-groups", data.get("dependency-groups"), True)
    for group, items in (data.get("dependency-groups") or {}).items():
        _want(label, f"dependency-groups.{group}", items, False)
    _want(label, "tool", data.get("tool"), True)
    _want(label, "tool.uv", (data.get("tool") or {}).get("uv"), True)
    uv = (data.get("tool") or {}).get("uv") or {}
    _want(label, "tool.uv.index", uv.get("index"), False, dict)
    _want(label, "tool.uv.sources", uv.get("sources"), True)
    _want(label, "tool.uv.no-build-isolation-package", uv.get("no-build-isolation-package"), False, str)


class _Edits:
    """The merge as operations on a TOML document: run on its plain data (``layout`` False), they say what the
    file must read as; run on tomlkit's document (``layout`` True), they make that edit keeping the layout."""

    def __init__(self, layout: bool, split: bool = False) -> None:
        self.layout = layout
        self.split = split  # tool.uv is split by other headers: its index entries can be added, not removed
        self.appended: list[Mapping[str, Any]] = []  # index tables to add as text at the end (a split array)
        self.flat: set[int] = set()  # tables written as dotted keys or inline: no header may go inside them

    def table(self) -> Any:
        if not self.layout:
            return {}
        import tomlkit

        return tomlkit.table()

    def inline(self, entries: Mapping[str, Any]) -> Any:
        if not self.layout:
            return dict(entries)
        import tomlkit

        table = tomlkit.inline_table()
        table.update(entries)
        return table

    def array(self, items: Sequence[Any], container: Any) -> Any:
        if not self.layout:
            return list(items)
        import tomlkit

        array = tomlkit.array()
        array.extend(items)
        array.multiline(len(items) > 1 and not self.inline_container(container))
        return array

    def inline_container(self, container: Any) -> bool:
        """Whether ``container`` is written inline or with dotted keys, so that what goes into it must be inline."""
        if not self.layout:
            return False
        from tomlkit.items import InlineTable

        return isinstance(container, InlineTable) or id(container) in self.flat

    def child(self, container: MutableMapping[str, Any], key: str) -> Any:
        """``container[key]``, made a table (inline inside an inline or dotted one) when it is not there."""
        if key not in container:
            container[key] = self.inline({}) if self.inline_container(container) else self.table()
        child = container[key]
        if self.layout and (self.inline_container(container) or _dotted(container, key)):
            self.flat.add(id(child))
        return child

    def add_index(self, uv: MutableMapping[str, Any], entry: Mapping[str, Any]) -> None:
        index = uv.get("index")
        if index is None:
            if self.inline_container(uv) or not self.layout:
                uv["index"] = self.array([self.inline(entry)], uv) if self.layout else [dict(entry)]
                return
            import tomlkit

            aot = tomlkit.aot()
            table = tomlkit.table()
            table.update(entry)
            aot.append(table)
            uv["index"] = aot
            return
        if self.layout:
            from tomlkit.container import OutOfOrderTableProxy
            from tomlkit.items import AoT

            if isinstance(index, AoT):
                if isinstance(uv, OutOfOrderTableProxy):  # an array of tables split by other headers
                    self.appended.append(entry)
                    return
                import tomlkit

                table = tomlkit.table()
                table.update(entry)
                index.append(table)
                return
        index.append(self.inline(entry))


def _dotted(container: Any, key: str) -> bool:
    """Whether tomlkit's ``container`` holds ``key`` as a dotted key (``uv.index = …``, ``tool.uv.x = …``)."""
    body = getattr(container, "body", None) or getattr(getattr(container, "value", None), "body", None) or []
    return any(k is not None and k.key == key and k.is_dotted() for k, _ in body)


def _set_slots(array: MutableSequence[Any], owned: set[str], wanted: Sequence[str]) -> None:
    """The owned entries of ``array`` (those naming ``owned`` packages) become ``wanted``: each in an owned slot,
    in place (its comment kept there), the rest after the last one (else at the end), surplus slots removed."""
    slots = [i for i, item in enumerate(array) if isinstance(item, str) and _name(item) in owned]
    current = [str(item) for item in array]
    if [_key(current[i]) for i in slots] == [_key(w) for w in wanted]:
        return
    place = (slots[-1] + 1) if slots else len(array)
    for i, text in zip(slots, wanted, strict=False):
        if current[i] != text:
            array[i] = text
    for offset, text in enumerate(wanted[len(slots):]):
        array.insert(place + offset, text)
    for i in reversed(slots[len(wanted):]):
        del array[i]


def _merge(root: MutableMapping[str, Any], tables: Tables, selection: _Selection, edits: _Edits,
           plain: Mapping[str, Any], changes: list[str]) -> None:
    """The merge (module docstring) on ``root``; ``plain``: the file's data before it, which the decisions read;
    ``changes``: one line per table changed, when given as an empty list."""
    say = not edits.layout
    owned_wanted = [d for d in tables.dependencies if _name(d) in tables.owned]
    riding = [d for d in tables.dependencies if _name(d) not in tables.owned]
    lists = [(name, path) for name, path in selection.lists if _plain_at(plain, path) is not None]
    where: dict[str, tuple[str, ...]] = {}
    for _, path in lists:
        for item in _plain_at(plain, path):
            if isinstance(item, str) and (owner := _name(item)) in tables.owned:
                where.setdefault(owner, path)
    dependencies_path = ("project", "dependencies")
    everywhere = {_key(item) for path in _every_list(plain) for item in _plain_at(plain, path)
                  if isinstance(item, str)}
    project = edits.child(root, "project")
    for name, path in [*lists, *([("project.dependencies", dependencies_path)]
                                 if dependencies_path not in [p for _, p in lists] else [])]:
        wanted = [d for d in owned_wanted if where.get(_name(d) or "", dependencies_path) == path]
        added = [d for d in riding if _key(d) not in everywhere] if path == dependencies_path else []
        if path == dependencies_path and "dependencies" not in project:
            if not wanted and not added:
                continue
            project["dependencies"] = edits.array([], project)
        array = _at(root, path)
        before = [str(item) for item in array]
        owned_here = {n for n, p in where.items() if p == path} | {n for n in map(_name, wanted) if n}
        _set_slots(array, owned_here, wanted)
        for text in added:
            array.append(text)
        if say and [str(item) for item in array] != before:
            gone = [t for t in before if _name(t) in owned_here and _key(t) not in {_key(w) for w in wanted}]
            changes.append(f"{name}: {', '.join([*wanted, *added])}"
                           + (f" (replacing {', '.join(gone)})" if gone else ""))
    if tables.requires_python and project.get("requires-python") != tables.requires_python:
        old = project.get("requires-python")
        project["requires-python"] = tables.requires_python
        if say:
            changes.append(f"project.requires-python: {tables.requires_python}" + (f" (was {old})" if old else "") +
                           " (the chosen releases have no wheels below it)")
    uv = edits.child(edits.child(root, "tool"), "uv")
    for key, value in tables.settings.items():
        if uv.get(key) != value:
            uv[key] = value
            if say:
                changes.append(f"tool.uv.{key}: {value}")
    if tables.no_build_isolation:
        current = [str(n) for n in uv.get("no-build-isolation-package", [])]
        missing = [n for n in tables.no_build_isolation if n not in current]
        if missing:
            if "no-build-isolation-package" in uv:
                for name in missing:
                    uv["no-build-isolation-package"].append(name)
            else:
                uv["no-build-isolation-package"] = edits.array(missing, uv)
            if say:
                changes.append(f"tool.uv.no-build-isolation-package: {', '.join(missing)}")
    _merge_sources(uv, tables, edits, changes if say else None)
    _merge_indexes(uv, tables, edits, plain, changes if say else None)


def _merge_sources(uv: MutableMapping[str, Any], tables: Tables, edits: _Edits, changes: list[str] | None) -> None:
    """Each chosen package's source set to where its build is; one that now comes from the default index loses a
    source naming an index of torch-install's."""
    changed = []
    stale = [name for name, entries in _plain_sources(uv).items() if name in tables.owned and
             name not in tables.sources and entries and
             all(str(e.get("index", "")).startswith(OWN_INDEX_PREFIX) for e in entries)]
    for name in stale:
        del uv["sources"][name]
        changed.append(f"{name} (removed)")
    if not tables.sources:
        if changed and changes is not None:
            changes.append(f"tool.uv.sources: {', '.join(changed)}")
        return
    sources = edits.child(uv, "sources")
    for name, entries in tables.sources.items():
        single = len(entries) == 1 and "marker" not in entries[0]
        wanted: Any = dict(entries[0]) if single else [dict(e) for e in entries]
        old = sources.get(name)
        if (old.unwrap() if hasattr(old, "unwrap") else old) == wanted:
            continue
        changed.append(name)
        sources[name] = edits.inline(entries[0]) if single else edits.array(
            [edits.inline(e) for e in entries], sources)
    if changed and changes is not None:
        changes.append(f"tool.uv.sources: {', '.join(changed)}")


def _merge_indexes(uv: MutableMapping[str, Any], tables: Tables, edits: _Edits, plain: Mapping[str, Any],
                   changes: list[str] | None) -> None:
    """The plan's indexes added or updated; torch-install's others removed unless a source still names them."""
    named = {e.get("index") for entries in _plain_sources(uv).values() for e in entries}
    changed = []
    index = uv.get("index")
    if index is not None and not edits.split:
        for i in reversed(range(len(index))):
            name = str(index[i].get("name", ""))
            if name.startswith(OWN_INDEX_PREFIX) and name not in tables.indexes and name not in named:
                del index[i]
                changed.append(f"{name} (removed)")
        if changed and not len(index):  # emptied of torch-install's entries: the key goes too
            del uv["index"]
    for name, entry in tables.indexes.items():
        existing = next((t for t in (uv.get("index") or []) if t.get("name") == name), None)
        if existing is None:
            edits.add_index(uv, entry)
            changed.append(name)
        elif {k: existing[k] for k in existing} != entry:
            for key in list(existing):
                del existing[key]
            existing.update(entry)
            changed.append(name)
    if changed and changes is not None:
        changes.append(f"tool.uv.index: {', '.join(changed)}")


def _plain_sources(uv: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each package's source entries (a table or an array of tables), as plain data."""
    sources = uv.get("sources") or {}
    out = {}
    for name, value in sources.items():
        value = value.unwrap() if hasattr(value, "unwrap") else value
        out[str(name)] = [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict)]
    return out


def _plain_at(data: Mapping[str, Any], path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(data, Mapping) or key not in data:
            return None
        data = data[key]
    return data


def _every_list(data: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The key paths of every requirement list of the file: dependencies, each extra, each dependency group."""
    project = data.get("project") or {}
    paths: list[tuple[str, ...]] = [("project", "dependencies")] if "dependencies" in project else []
    paths += [("project", "optional-dependencies", e) for e in project.get("optional-dependencies") or {}]
    paths += [("dependency-groups", g) for g in data.get("dependency-groups") or {}]
    return [p for p in paths if isinstance(_plain_at(data, p), list)]


def _selection(data: Mapping[str, Any], own: bool, extras: Sequence[str], groups: Sequence[str]) -> _Selection:
    from ..resolver.request import canonical_name

    selection = _Selection()
    selection.lists.append(("project.dependencies", ("project", "dependencies")))
    if not own:
        return selection
    optional = (data.get("project") or {}).get("optional-dependencies") or {}
    for extra in extras:
        key = next((k for k in optional if canonical_name(k) == canonical_name(extra)), None)
        if key is not None:
            selection.lists.append((f"project.optional-dependencies.{key}", ("project", "optional-dependencies", key)))
    table = data.get("dependency-groups") or {}
    todo = list(groups)
    while todo:  # the groups chosen, and the groups they include
        wanted = canonical_name(todo.pop(0))
        key = next((k for k in table if canonical_name(k) == wanted), None)
        if key is None or ("dependency-groups", key) in [p for _, p in selection.lists]:
            continue
        selection.lists.append((f"dependency-groups.{key}", ("dependency-groups", key)))
        todo += [i["include-group"] for i in table[key]
                 if isinstance(i, dict) and isinstance(i.get("include-group"), str)]
    return selection


def merge_pyproject(path: str, plans: Sequence[Plan], requires_python: str | None, project: str | None = None,
                    extras: Sequence[str] = (), groups: Sequence[str] = ()) -> list[str]:
    """Merge the plans' entries into the pyproject.toml at ``path`` (module docstring); ``project``, ``extras``,
    ``groups``: the ``--project`` read and its ``--extra``/``--group`` choices. Returns what changed, one line each
    (none: the file already holds them, and is not written)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from .. import user_files
    from ..project.pyproject import pyproject_path

    tables = pyproject_tables(plans, requires_python)
    if not tables.dependencies:
        raise InputError("--merge: no build fits the target: nothing to merge")
    label = f"--merge {path}"
    opened = user_files.read(path, user_files.TOML, "--merge")
    if opened.text is None:
        raise InputError(f"{label}: no such file (--format pyproject prints the entries to start one)")
    plain = user_files.toml_data(opened.text)
    _check_shape(label, plain)
    own = project is not None and os.path.realpath(pyproject_path(project)) == opened.target
    selection = _selection(plain, own, extras, groups)
    try:
        document = tomlkit.parse(opened.text)
    except TOMLKitError as exc:
        raise InputError(f"{label}: torch-install cannot edit this file ({exc}): it is left as it was") from None
    from tomlkit.container import OutOfOrderTableProxy

    split = isinstance((document.get("tool") or {}).get("uv"), OutOfOrderTableProxy)
    expected = copy.deepcopy(plain)
    changes: list[str] = []
    _merge(expected, tables, selection, _Edits(layout=False, split=split), plain, changes)
    if expected == plain:
        return []
    try:
        layout = _Edits(layout=True, split=split)
        _merge(document, tables, selection, layout, plain, [])
        text = tomlkit.dumps(document)
    except (TOMLKitError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"{label}: torch-install cannot edit this layout of the file ({exc}): it is left as it was; "
                         "--format pyproject prints the entries to merge by hand") from None
    for entry in layout.appended:
        text = text.rstrip("\n") + "\n\n[[tool.uv.index]]\n" + "".join(
            f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
    if not text.endswith("\n"):
        text += "\n"
    user_files.write(opened, text, user_files.toml_reading_as(expected), "--merge")
    return changes


