"""Where a uv project says its packages come from: ``[tool.uv.sources]`` and ``[[tool.uv.index]]``, read as uv reads
them for the extras and groups chosen (an entry's ``extra`` or ``group`` must be chosen; its ``marker`` is kept
and evaluated for each target). What they say is the user's choice, and the plan honours it:

- a package of the torch family from an index whose URL names a variant (``…/whl/cu118``): the build it names
  (a :class:`~torch_install.resolver.plan.BuildSource`: the plan takes that variant from that index, and says so
  where it does not run); from a URL or a path of a wheel: a direct reference (``torch @ URL``);
- another package from an index: that index for the step that installs it (``--extra-index-url``, or
  ``--find-links`` for a flat one: pip has no index per package); from a URL, a path or a git repository: its
  requirement becomes that reference (``name @ URL``, ``-e PATH`` where ``editable``);
- an index uv searches for every package (not ``explicit``): the first such one names the family's build where
  its URL names a variant, and the others' step searches every one (``default = true``: in place of the default
  index);
- a workspace member is uv's to install: left out, with a note.

Where an entry's marker does not hold, the requirement as written applies (as uv falls back to the indexes). What
uv refuses is one InputError naming the entry: a source or an index that does not fit uv's schema of them (the
tables below: the keys each kind of source takes, their types and forms), a list of sources whose markers are
missing or overlap, a source naming an index, an extra or a group the project does not define, and, for the
requirements it applies to, an editable file, a URL of no distribution file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError
from ..resolver.plan import BuildSource, FileOption, Wanted
from ..resolver.request import NAME, PACKAGES, canonical_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .uv_workspace import Load, Workspace

# uv's schema of a source (``tool.uv.sources``), as uv reads one: its kind is the first of these keys it has, and
# the kind takes its own keys beside those every kind takes
_KIND_KEYS: dict[str, tuple[str, ...]] = {"git": ("rev", "tag", "branch", "path"), "url": (),
                                          "path": ("editable", "package"), "index": (), "workspace": ("editable",)}
_EVERY_KIND = ("subdirectory", "lfs", "marker", "extra", "group")  # uv reads subdirectory and lfs beside any kind
_SOURCE_TYPES: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(("git", "url", "path", "index", "rev", "tag", "branch", "subdirectory", "marker", "extra", "group"),
                    (str,)),
    **dict.fromkeys(("editable", "package", "lfs"), (bool,)), "workspace": (bool, str)}
# uv's schema of an index (``[[tool.uv.index]]``): the keys torch-install reads, their types and values (uv reads
# the others, which torch-install does not render)
_INDEX_TYPES: dict[str, tuple[type, ...]] = {**dict.fromkeys(("name", "url", "format", "authenticate"), (str,)),
                                             **dict.fromkeys(("explicit", "default"), (bool,))}
_INDEX_VALUES = {"format": ("simple", "flat"), "authenticate": ("auto", "always", "never")}
_INDEX_NAME = r"[A-Za-z0-9._-]+"
_URL = r"[A-Za-z][A-Za-z0-9+.-]*:.*"  # a URL with a scheme: uv refuses a relative one
_DISTRIBUTION = (".whl", ".tar.gz", ".zip", ".tar", ".tgz", ".tbz", ".txz", ".tlz", ".tar.bz2", ".tar.xz", ".tar.lz",
                 ".tar.lzma", ".tar.zst")  # the files uv installs from a URL or a path, by their extension


class UvSources:
    """What the sources of one pyproject say: the requirements as they install, the family's builds, the options
    of the step that installs the others, and notes."""

    def __init__(self) -> None:
        self.builds: list[BuildSource] = []
        self.options: list[FileOption] = []
        self.index_urls: list[tuple[str, str]] = []  # (URL, what names it): each index's, checked as --index-base


def read_uv_sources(path: str, document: dict[str, Any], wanted: list[Wanted], extras: Sequence[str],
                    groups: Sequence[str], notes: list[str], found: UvSources, load: Load) -> list[Wanted]:
    """``wanted`` as the project's sources make it (``found`` gets the builds and options; ``load`` reads the
    workspace's other pyproject files). A source or an index uv refuses is one InputError naming it."""
    from .uv_workspace import workspace_members

    workspace = workspace_members(path, document, load)  # found once: the root's sources, members, their checks
    document = _with_workspace_root(path, document, notes, load, workspace)
    tool = document.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict) or not ({"sources", "index", "workspace"} & set(uv)):
        return wanted
    indexes = _indexes(path, uv.get("index", []))
    found.index_urls += [(i["url"], f"--project: {path}: {i['_where']}") for i in indexes.values()]
    sources = uv.get("sources", {})
    if not isinstance(sources, dict):
        raise InputError(f"--project: {path}: tool.uv.sources is not a table")
    defined = _defined(document)
    chosen = {canonical_name(e) for e in extras}, {canonical_name(g) for g in groups}
    by_name: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for key, value in sources.items():
        if not re.fullmatch(NAME, key):
            raise InputError(f"--project: {path}: tool.uv.sources: {key!r} is not a valid package name")
        entries = value if isinstance(value, list) else [value]
        if not entries:
            raise InputError(f"--project: {path}: tool.uv.sources.{key} is an empty list (uv takes at least one "
                             "source)")
        for i, entry in enumerate(entries):
            where = f"tool.uv.sources.{key}" + (f"[{i}]" if isinstance(value, list) else "")
            _check_entry(path, where, canonical_name(key), entry, defined)
            if "index" in entry and entry["index"] not in indexes:
                raise InputError(f"--project: {path}: {where} names the index {entry['index']!r}, which no "
                                 f"[[tool.uv.index]] defines (has: {', '.join(indexes) or 'none'})")
            if _applies(entry, chosen):
                by_name.setdefault(canonical_name(key), []).append((where, entry))
        _check_markers(path, f"tool.uv.sources.{key}", entries)
        _check_indexes(path, f"tool.uv.sources.{key}", entries, bool(uv.get("conflicts")))
    if isinstance(uv.get("workspace"), dict):
        _check_members(path, document, sources, defined, workspace)
    reader = _Reader(path, indexes, notes, found, workspace)
    for name in PACKAGES:  # the family's builds: where a source names one, else the index uv searches first
        reader.family_build(name, by_name.get(name, []))
    for name, entries in by_name.items():
        if name not in PACKAGES:
            reader.index_options(name, entries)
    reader.searched_for_all()
    out: list[Wanted] = []
    for w in wanted:
        entries = [(where, e) for where, e in by_name.get(w.name or "", []) if "index" not in e]
        out += reader.rewritten(w, entries) if entries and not w.editable else [w]
    return out


def _check_entry(path: str, where: str, name: str, entry: Any, defined: tuple[Defined | None, Defined]) -> None:
    """One line, exit 2, for a source entry of ``name`` uv refuses: not a table of one kind with that kind's keys,
    a value of the wrong type or form, an extra or a group the project does not define or that does not name it."""
    kinds = [kind for kind in _KIND_KEYS if isinstance(entry, dict) and kind in entry]
    if not kinds:
        raise InputError(f"--project: {path}: {where} is not a source table ({{ index = \"…\" }}, "
                         "{ url = \"…\" }, { path = \"…\" }, { git = \"…\" } or { workspace = true })")
    takes = (kinds[0], *_KIND_KEYS[kinds[0]], *_EVERY_KIND)
    for key, value in entry.items():
        if key not in _SOURCE_TYPES:
            raise InputError(f"--project: {path}: {where}.{key}: not a key of a uv source (it takes "
                             f"{', '.join(_SOURCE_TYPES)})")
        if not isinstance(value, _SOURCE_TYPES[key]):
            kind = "true, false or a path" if key == "workspace" else \
                "true or false" if _SOURCE_TYPES[key] == (bool,) else f'a string ({key} = "…")'
            raise InputError(f"--project: {path}: {where}.{key} is not {kind}")
    if "extra" in entry and "group" in entry:
        raise InputError(f"--project: {path}: {where} names both an extra and a group (uv takes one)")
    for key in entry:
        if key not in takes:
            raise InputError(f"--project: {path}: {where}: " + (
                f"both {kinds[0]} and {key} (uv takes one kind of source an entry)" if key in _KIND_KEYS else
                f"a {kinds[0]} source takes no {key} (it takes {', '.join(takes)})"))
    if len([k for k in ("rev", "tag", "branch") if k in entry]) > 1:
        raise InputError(f"--project: {path}: {where} names more than one of rev, tag and branch (uv takes one)")
    if kinds[0] == "git" and "subdirectory" in entry and "path" in entry:
        raise InputError(f"--project: {path}: {where} names both a subdirectory and a path (uv takes one)")
    if entry.get("editable") is True and entry.get("package") is False:
        raise InputError(f"--project: {path}: {where}: editable = true with package = false (uv installs only a "
                         "package editable)")
    for key in ("url", "git"):
        if key in entry and not re.fullmatch(_URL, entry[key]):
            raise InputError(f"--project: {path}: {where}.{key} {entry[key]!r} is not a URL (uv takes an absolute "
                             "one: https://…)")
    for key, lists in (("extra", defined[0]), ("group", defined[1])):
        if key not in entry:
            continue
        if not re.fullmatch(NAME, entry[key]):
            raise InputError(f"--project: {path}: {where}.{key} {entry[key]!r} is not a valid {key} name")
        if lists is not None and canonical_name(entry[key]) not in lists:
            raise InputError(f"--project: {path}: {where}.{key} {entry[key]!r}: the project defines no such "
                             f"{key} (uv takes a source only for one of its extras or groups)")
        if lists is not None and name not in lists[canonical_name(entry[key])]:
            raise InputError(f"--project: {path}: {where}.{key} {entry[key]!r}: the {key} does not name {name} (uv "
                             f"takes a source for {'an extra' if key == 'extra' else 'a group'} only for a package it "
                             "names)")
    if "index" in entry and not re.fullmatch(_INDEX_NAME, entry["index"]):
        raise InputError(f"--project: {path}: {where}.index {entry['index']!r} is not an index name (letters, "
                         "digits, -, _ and .)")
    if "marker" in entry:
        from packaging.markers import InvalidMarker, Marker

        try:
            Marker(entry["marker"])
        except InvalidMarker as exc:
            raise InputError(f"--project: {path}: {where}.marker {entry['marker']!r} is not a marker "
                             f"({str(exc).splitlines()[0]})") from None


Defined = dict[str, set[str]]  # an extra's or a group's name: the names of the packages it names


def _defined(document: dict[str, Any]) -> tuple[Defined | None, Defined]:
    """The extras (None where they are dynamic) and the dependency groups the project defines, each with the
    packages it names itself (a group: with those of the groups it includes)."""
    project = document.get("project")
    project = project if isinstance(project, dict) else {}
    dynamic = project.get("dynamic")
    extras, groups = project.get("optional-dependencies"), document.get("dependency-groups")
    extras, groups = extras if isinstance(extras, dict) else {}, groups if isinstance(groups, dict) else {}
    uv = document.get("tool", {}).get("uv", {})
    if isinstance(uv, dict) and "dev-dependencies" in uv:  # uv's own dev group, before PEP 735
        listed = [groups.get("dev"), uv["dev-dependencies"]]
        groups = {**groups, "dev": [item for items in listed if isinstance(items, list) for item in items]}

    def names(items: Any, seen: tuple[str, ...] = ()) -> set[str]:
        out: set[str] = set()
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("include-group"), str) and item["include-group"] \
                    not in seen:
                out |= names(groups.get(item["include-group"]), (*seen, item["include-group"]))
            elif isinstance(item, str) and (found := _requirement_name(item)):
                out.add(found)
        return out

    return (None if isinstance(dynamic, list) and "optional-dependencies" in dynamic else
            {canonical_name(str(e)): names(v) for e, v in extras.items()},
            {canonical_name(str(g)): names(v, (g,)) for g, v in groups.items()})


def _requirement_name(text: str) -> str | None:
    """The canonical name of a requirement; None for a line that is not one."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return canonical_name(Requirement(text).name)
    except InvalidRequirement:
        return None


def _check_markers(path: str, where: str, entries: list[dict[str, Any]]) -> None:
    """One line, exit 2, where uv refuses a list of sources: two entries in a row for the same extra and group
    whose markers are missing or overlap."""
    from ..markers import overlap

    for i, (one, two) in enumerate(zip(entries, entries[1:], strict=False)):
        if (one.get("extra"), one.get("group")) != (two.get("extra"), two.get("group")):
            continue
        if "marker" not in one or "marker" not in two:
            raise InputError(f"--project: {path}: {where}[{i + ('marker' in one)}] has no marker: uv takes more "
                             "than one source only with a marker on each (marker = \"sys_platform == 'linux'\")")
        if overlap(one["marker"], two["marker"]):
            raise InputError(f"--project: {path}: {where}[{i}] and [{i + 1}]: the markers {one['marker']!r} and "
                             f"{two['marker']!r} overlap (uv takes a package's sources only with disjoint markers)")


def _with_workspace_root(path: str, document: dict[str, Any], notes: list[str], load: Load,
                         found: Workspace | None) -> dict[str, Any]:
    """``document`` as uv reads a workspace member's (``found``: its workspace): the root's ``[tool.uv.sources]``
    apply to it where its own name no source for the package, and the root's ``[[tool.uv.index]]`` after its own
    (a note says so); a project that is no member, or a workspace's root, as it is."""
    tool = document.get("tool")
    own = tool.get("uv") if isinstance(tool, dict) else None
    if found is None or os.path.abspath(found[0]) == os.path.abspath(path):
        return document
    root_tool = load(found[0]).get("tool")
    root = root_tool.get("uv") if isinstance(root_tool, dict) else None
    if not isinstance(root, dict) or not ({"sources", "index"} & set(root)):
        return document
    merged = dict(own) if isinstance(own, dict) else {}
    sources, root_sources = merged.get("sources", {}), root.get("sources", {})
    if isinstance(sources, dict) and isinstance(root_sources, dict):
        merged["sources"] = {**root_sources, **sources}
    indexes, root_indexes = merged.get("index", []), root.get("index", [])
    if isinstance(indexes, list) and isinstance(root_indexes, list):
        names = {i.get("name") for i in indexes if isinstance(i, dict)}
        merged["index"] = [*indexes, *(i for i in root_indexes if not isinstance(i, dict) or i.get("name") not in
                                       names)]
    notes.append(f"{path}: a member of the uv workspace of {found[0]}: its [tool.uv.sources] and [[tool.uv.index]] "
                 "apply here too, as uv takes them")
    return {**document, "tool": {**(tool if isinstance(tool, dict) else {}), "uv": merged}}


def _check_members(path: str, document: dict[str, Any], sources: dict[str, Any],
                   defined: tuple[Defined | None, Defined], found: Workspace | None) -> None:
    """One line, exit 2, where the project is a uv workspace's root (``found``: its workspace) and one of its
    requirements (of any extra or group) names another member without a ``workspace`` source: uv takes a member
    only from the workspace."""
    if found is None:
        return
    project = document.get("project")
    project = project if isinstance(project, dict) else {}
    dependencies = project.get("dependencies")
    named = {n for d in dependencies if isinstance(d, str) and (n := _requirement_name(d))} \
        if isinstance(dependencies, list) else set()
    for lists in defined:
        named |= {n for names in (lists or {}).values() for n in names}
    own = canonical_name(project["name"]) if isinstance(project.get("name"), str) else None
    by_name = {canonical_name(key): (key, value) for key, value in sources.items()}
    for name in sorted((named & found[1]) - {own}):
        key, value = by_name.get(name, (name, []))
        entries = value if isinstance(value, list) else [value]
        other = next((i for i, entry in enumerate(entries) if "workspace" not in entry), None)
        if not entries:
            raise InputError(f"--project: {path}: {name} is a member of the uv workspace, and tool.uv.sources names "
                             f"no source for it (uv takes a member only from the workspace: {name} = "
                             "{ workspace = true })")
        if other is not None:
            where = f"tool.uv.sources.{key}" + (f"[{other}]" if isinstance(value, list) else "")
            raise InputError(f"--project: {path}: {where}: {name} is a member of the uv workspace, which uv takes "
                             f"only from the workspace ({name} = {{ workspace = true }})")


def _check_indexes(path: str, where: str, entries: list[dict[str, Any]], conflicts: bool) -> None:
    """One line, exit 2, where uv refuses a list of sources as it resolves: two entries naming two indexes where
    both apply (their markers overlap), unless one is for an extra or a group and the project declares
    ``conflicts`` (uv resolves those apart)."""
    from itertools import combinations

    from ..markers import overlap

    named = [(i, entry) for i, entry in enumerate(entries) if "index" in entry]
    for (i, one), (j, two) in combinations(named, 2):
        apart = (one.get("extra"), one.get("group")) != (two.get("extra"), two.get("group"))
        chosen = any(entry.get(key) for entry in (one, two) for key in ("extra", "group"))
        if one["index"] == two["index"] or (chosen and conflicts) or \
                ("marker" in one and "marker" in two and not overlap(one["marker"], two["marker"])):
            continue
        raise InputError(f"--project: {path}: {where}[{i}] and [{j}] name the indexes {one['index']!r} and "
                         f"{two['index']!r} where both apply (uv takes one index a package" +
                         ("; tool.uv.conflicts declares the extras or groups that are never chosen together)"
                          if apart else ")"))


def _indexes(path: str, value: Any) -> dict[str, dict[str, Any]]:
    """The ``[[tool.uv.index]]`` entries by name, in order (one without a name gets its place); one uv refuses is
    one InputError naming it."""
    if not isinstance(value, list):
        raise InputError(f"--project: {path}: tool.uv.index is not an array of tables ([[tool.uv.index]])")
    out: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(value):
        where = f"tool.uv.index[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            raise InputError(f"--project: {path}: {where} is not a table with a url")
        for key, types in _INDEX_TYPES.items():
            if key in entry and not isinstance(entry[key], types):
                kind = "true or false" if types == (bool,) else f'a string ({key} = "…")'
                raise InputError(f"--project: {path}: {where}.{key} is not {kind}")
        for key, values in _INDEX_VALUES.items():
            if key in entry and entry[key] not in values:
                raise InputError(f"--project: {path}: {where}.{key} {entry[key]!r} is not one of {', '.join(values)}")
        name = entry.get("name")
        if name is not None and not re.fullmatch(_INDEX_NAME, name):
            raise InputError(f"--project: {path}: {where}.name {name!r} is not an index name (letters, digits, -, _ "
                             "and .)")
        if name in out:
            raise InputError(f"--project: {path}: {where}: a second index named {name!r} (uv takes each name once)")
        if entry.get("default") and any(i.get("default") for i in out.values()):
            raise InputError(f"--project: {path}: {where}: a second index with default = true (uv takes one)")
        url = entry["url"]  # a path is a local index, from the project's directory
        if not re.fullmatch(_URL, url):
            url = Path(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), url))).as_uri()
        out[name if name is not None else where] = {**entry, "url": url, "_where": where}
    return out


def _applies(entry: dict[str, Any], chosen: tuple[set[str], set[str]]) -> bool:
    """Whether a source entry applies to the extras and groups chosen (its marker is the target's to decide)."""
    extra, group = entry.get("extra"), entry.get("group")
    return (not isinstance(extra, str) or canonical_name(extra) in chosen[0]) and \
        (not isinstance(group, str) or canonical_name(group) in chosen[1])


def variant_index(url: str) -> tuple[str, str, str] | None:
    """(index base, channel, variant) of an index URL laid out as the PyTorch index is (``…/whl/cu118``,
    ``…/whl/nightly/cu128``); None for any other URL."""
    from ..resolver.variants import is_index_variant

    parts = url.rstrip("/").rsplit("/", 2)
    if len(parts) < 2 or not is_index_variant(parts[-1]) or "://" not in parts[0]:
        return None
    if len(parts) == 3 and parts[1] in ("nightly", "test"):
        return parts[0], parts[1], parts[2]
    return "/".join(parts[:-1]), "stable", parts[-1]


class _Reader:
    def __init__(self, path: str, indexes: dict[str, dict[str, Any]], notes: list[str], found: UvSources,
                 workspace: Workspace | None) -> None:
        self.path, self.indexes, self.notes, self.found, self.workspace = path, indexes, notes, found, workspace

    def check_member(self, where: str, name: str) -> None:
        """One line, exit 2, where a ``workspace = true`` source names a package that is not a member of the
        project's uv workspace (uv refuses it)."""
        found = self.workspace
        if found is not None and name not in found[1]:
            raise InputError(f"--project: {self.path}: {where}: workspace = true, but {name} is not a member of the "
                             f"uv workspace ({found[0]} has: {', '.join(sorted(found[1])) or 'none'})")

    def family_build(self, name: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """The build a family package's index source names (a URL or path source is a direct reference, read with
        the requirement)."""
        marked = True
        for where, entry in entries:
            marked = marked and isinstance(entry.get("marker"), str)
            if "index" not in entry:
                continue
            index = self.indexes[entry["index"]]
            found = variant_index(index["url"]) if index.get("format") != "flat" else None
            text = f"[tool.uv.sources] {name} = {{ index = \"{entry['index']}\" }}"
            if found is None:
                self.notes.append(f"{self.path}: {where}: {name} from the index {entry['index']!r}, whose URL names "
                                  "no build of the PyTorch index: the plan chooses the build for the machine")
                continue
            self.found.builds.append(BuildSource(name, found[2], index["url"], text, entry.get("marker")))
        if entries and not marked:
            return
        first = self.first_searched()
        if first is not None and (found := variant_index(self.indexes[first]["url"])) is not None:
            text = f"[[tool.uv.index]] {first} (not explicit: uv searches it for every package)"
            self.found.builds.append(BuildSource(name, found[2], self.indexes[first]["url"], text,
                                                 unless=tuple(e["marker"] for _, e in entries)))

    def first_searched(self) -> str | None:
        """The index uv searches first for a package without a source: the first that is neither explicit nor the
        default one."""
        return next((n for n, i in self.indexes.items() if not i.get("explicit") and not i.get("default")), None)

    def index_options(self, name: str, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """The index another package's source names, for the step that installs it."""
        for where, entry in entries:
            if "index" not in entry:
                continue
            index = self.indexes[entry["index"]]
            if variant_index(index["url"]) is not None:
                self.notes.append(f"{self.path}: {where}: {name} from the index {entry['index']!r}: a package of the "
                                  "PyTorch index comes with the chosen build, from its index")
                continue
            self.option(index, f"{where}: {name} from the index {entry['index']!r}")

    def option(self, index: dict[str, Any], why: str) -> None:
        flat = index.get("format") == "flat"
        option = "--find-links" if flat else "--index-url" if index.get("default") else "--extra-index-url"
        if any(o.value == index["url"] for o in self.found.options):
            return
        self.found.options.append(FileOption(option, index["url"], f"{self.path}: {index['_where']}"))
        self.notes.append(f"{self.path}: {why}: pip has no index per package, so the step that installs the "
                          f"packages of your index searches it for every package ({option} {index['url']})")

    def searched_for_all(self) -> None:
        """The indexes uv searches for every package: the others' step searches them too (a variant index of the
        PyTorch index serves the build's step instead)."""
        for name, index in self.indexes.items():
            if index.get("explicit") or variant_index(index["url"]) is not None:
                continue
            self.option(index, f"the index {name!r} ({'the default one' if index.get('default') else 'not explicit'})")

    def rewritten(self, wanted: Wanted, entries: list[tuple[str, dict[str, Any]]]) -> list[Wanted]:
        """The requirement as its URL, path, git or workspace sources make it: one requirement per entry, its
        marker joined with the entry's, and the requirement as written where none of their markers holds."""
        from packaging.requirements import Requirement

        req = Requirement(wanted.text)
        out: list[Wanted] = []
        markers: list[str] = []
        for where, entry in entries:
            marker = entry.get("marker") if isinstance(entry.get("marker"), str) else None
            markers.append(marker or "")
            if entry.get("workspace") is False:
                raise InputError(f"--project: {self.path}: {where}: workspace = false, which uv does not take yet "
                                 f"(leave the entry out: {wanted.name} then comes from the indexes)")
            if entry.get("workspace") is True:
                self.check_member(where, wanted.name or "")
            if "workspace" in entry:
                self.notes.append(f"{self.path}: {where}: {wanted.name} is a member of the uv workspace, which uv "
                                  "installs: torch-install leaves it out")
                continue
            made = Requirement(str(req))
            made.marker = _joined(req.marker, marker)
            if "git" in entry and "path" in entry:  # uv builds a file inside the repository: pip has no such URL
                self.notes.append(f"{self.path}: {where}: {wanted.name} from the file {entry['path']!r} inside a git "
                                  "repository, which pip cannot install from a git URL: the plan takes "
                                  f"{wanted.name} from the indexes")
                out.append(wanted._replace(text=str(made)))
                continue
            made.specifier = type(req.specifier)()
            location, editable = self.location(where, entry)
            if editable:
                text = location + (f" ; {made.marker}" if made.marker is not None else "")
                out.append(wanted._replace(text=text, name=None, editable=True, origin=f"{self.path}: {where}"))
                continue
            made.url = location
            out.append(wanted._replace(text=str(made), origin=f"{wanted.origin} ({where})"))
        if all(markers):  # where none holds: the requirement as written, from the indexes
            from ..markers import negated

            fallback = Requirement(str(req))
            fallback.marker = _joined(req.marker, negated(" or ".join(f"({m})" for m in markers)))
            out.append(wanted._replace(text=str(fallback)))
        return out

    def location(self, where: str, entry: dict[str, Any]) -> tuple[str, bool]:
        """(the URL or path an entry names, whether it installs editable)."""
        if isinstance(entry.get("url"), str):
            if entry["url"].lower().startswith("file:"):
                raise InputError(f"--project: {self.path}: {where}.url {entry['url']!r}: uv fetches no file: URL "
                                 "(name the file with path = \"…\")")
            if not entry["url"].split("#", 1)[0].split("?", 1)[0].lower().endswith(_DISTRIBUTION):
                raise InputError(f"--project: {self.path}: {where}.url {entry['url']!r} names no distribution file "
                                 f"(uv takes a URL that ends in {', '.join(_DISTRIBUTION)})")
            return entry["url"], False
        if isinstance(entry.get("path"), str):
            full = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(self.path)), entry["path"]))
            if entry.get("editable") and (os.path.isfile(full) or full.lower().endswith(_DISTRIBUTION)):
                raise InputError(f"--project: {self.path}: {where}: editable = true on the file {entry['path']!r} "
                                 "(uv installs only a directory editable)")
            return (full, True) if entry.get("editable") else (Path(full).as_uri(), False)
        if isinstance(entry.get("git"), str):
            ref = next((entry[k] for k in ("rev", "tag", "branch") if isinstance(entry.get(k), str)), None)
            url = "git+" + entry["git"].removeprefix("git+") + (f"@{ref}" if ref else "")
            return url + (f"#subdirectory={entry['subdirectory']}" if isinstance(entry.get("subdirectory"), str)
                          else ""), False
        raise InputError(f"--project: {self.path}: {where}: a source without a url, path or git string")


def _joined(marker: Any, extra: str | None) -> Any:
    """The marker that holds where both hold (None: none)."""
    from packaging.markers import Marker

    if extra is None:
        return marker
    return Marker(f"({marker}) and ({extra})" if marker is not None else extra)
