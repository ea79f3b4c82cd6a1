"""``--format pixi --merge pixi.toml``: the manifest ``--format pixi`` writes, merged into a user's pixi manifest,
edited as text through the one editor of user files (``user_files``), as ``render/merge.py`` merges a pyproject.

What the merge owns, and changes; everything else stays as the user wrote it:

- **each target's platform** in ``[workspace].platforms`` (``[project]`` in older manifests): the entry of the same
  name, else the file's one entry of the same subdir (its name kept where it has one, so the file's
  ``[target.<name>]`` tables and features still name it), else a new entry. ``requires-pixi`` gets the floor of
  platforms with a CUDA declaration (0.71.0); a ``[system-requirements]`` table, which pixi refuses beside such a
  platform, is moved onto the platforms as pixi's own migration does;
- **the build's packages**: the chosen torch family with ``cuda-version`` and ``arm-variant`` in
  ``[dependencies]`` (conda-forge) or ``[pypi-dependencies]`` (PyTorch's index), the same family taken out of the
  other table (one torch per environment), and the selector of the other kind (``pytorch-cpu`` beside a CUDA
  build). A value every platform of the file shares goes in the common table, else in each target's own
  ``[target.<platform>.…]`` table: one of the file's that applies to that platform alone, else a new one;
- ``conda-forge`` among the channels; where it is not the first, the conda-forge specs name it
  (``channel = "conda-forge"``: pixi takes a package from the first channel that has it).

A requirement that rides along (``transformers``) and ``python`` are added only where the file names them nowhere.
A table the merge cannot decide for is an InputError naming it: a feature's table or a target table of a wider
selector (``linux``, a glob, a subdir two platforms share) that names a package it owns, a common table naming
one that a target must not have while other platforms take it. The edit is made on the file's plain data and
with a layout-keeping TOML editor (tomlkit), and the result must read as the plain edit; each target's packages
are then read back as pixi overlays its tables. Merging again changes nothing.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Mapping, MutableMapping, Sequence

from ..errors import InputError
from ..resolver.conda_forge import CHANNEL
from ..resolver.plan import Plan
from ..resolver.request import canonical_name
from ..versions import numeric_key
from .conda import REQUIRES_PIXI, Target, pixi_tables, platform_entry, pypi_entry, riding, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

KINDS = ("dependencies", "pypi-dependencies")
CONDA_FAMILY = {"pytorch": "torch", "pytorch-gpu": "torch", "pytorch-cpu": "torch", "torchvision": "torchvision",
                "torchaudio": "torchaudio"}  # conda-forge's names -> the PyPI name of the same package
ABSENT = "<absent>"  # a package the target must not take (its want)
FAMILIES = {"linux": "linux", "unix": "unix", "win": "win", "osx": "osx", "macos": "osx"}  # pixi's target families
# [system-requirements] keys -> (the platform key pixi migrates them to, the subdirs it applies to)
SYSTEM_KEYS = {"cuda": ("cuda", ("linux", "win")), "macos": ("macos", ("osx",)), "linux": ("linux", ("linux",)),
               "libc": ("glibc", ("linux",))}


class _Want:
    """One target's part: its name and subdir, its platform entry, per kind the packages it owns (a value, or
    ABSENT) and those it adds where the file names them nowhere."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.name = target.name
        self.subdir = target.subdir
        self.owned: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        self.why: dict[str, str] = {}  # why a package it must not take goes
        self.added: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
        conda, pypi = pixi_tables(target)
        along = {canonical_name(pypi_entry(text)[0]) for text in riding(target.plan, "pixi")}
        self.added["dependencies"].update((k, v) for k, v in conda.items() if k == "python")
        self.added["pypi-dependencies"].update((k, v) for k, v in pypi.items() if canonical_name(k) in along)
        own_conda = {k: v for k, v in conda.items() if k != "python"}
        own_pypi = {canonical_name(k): v for k, v in pypi.items() if canonical_name(k) not in along}
        self.owned["dependencies"].update(own_conda)
        self.owned["pypi-dependencies"].update(own_pypi)
        if target.source == "conda-forge":
            other = "pytorch-cpu" if target.choice.build.cuda else "pytorch-gpu"
            self.owned["dependencies"][other] = ABSENT
            self.why[other] = f"it selects {'CPU' if target.choice.build.cuda else 'CUDA'} builds"
            for name in own_conda:
                if name in CONDA_FAMILY:
                    self.owned["pypi-dependencies"][CONDA_FAMILY[name]] = ABSENT
                    self.why[CONDA_FAMILY[name]] = f"conda-forge's {name} is {CONDA_FAMILY[name]}"
        else:
            index = "PyTorch's index" if target.plan.choice and target.plan.choice.index_url else "the default index"
            for conda_name, pypi_name in CONDA_FAMILY.items():
                if pypi_name in own_pypi:
                    self.owned["dependencies"][conda_name] = ABSENT
                    self.why[conda_name] = f"{pypi_name} comes from {index}"

    def entry(self) -> Any:
        return platform_entry(self.target._replace(name=self.name))


# ---- reading the file --------------------------------------------------------------------------------------------

def _kind(value: object) -> str:
    kinds = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "an array",
             dict: "a table"}
    return next((word for cls, word in kinds.items() if type(value) is cls), type(value).__name__)


def _table(label: str, where: str, value: object) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{label}: {where} is {_kind(value)}, not a table: torch-install does not merge into it")
    return value


def _platform_of(label: str, entry: object) -> tuple[str | None, str]:
    """(name, subdir) of a ``platforms`` entry; the name None where pixi makes it up (an inline table without one)."""
    if isinstance(entry, str):
        return entry, entry
    if isinstance(entry, dict) and isinstance(entry.get("platform"), str):
        name = entry.get("name")
        return (name if isinstance(name, str) else None), entry["platform"]
    raise InputError(f"{label}: a platforms entry is {_kind(entry)} without a platform: torch-install does not "
                     "merge into it")


def _channel_name(entry: object) -> str:
    name = entry.get("channel", "") if isinstance(entry, dict) else entry
    text = str(name).rstrip("/")
    return CHANNEL if text.endswith(f"/{CHANNEL}") else text


def _selector_applies(selector: str, name: str | None, subdir: str) -> bool:
    """Whether pixi's ``[target.<selector>]`` applies to the platform ``name`` of ``subdir``."""
    if selector in (name, subdir):
        return True
    family = FAMILIES.get(selector)
    if family is not None:
        return subdir.startswith(family) if family != "unix" else not subdir.startswith("win")
    return any(c in selector for c in "*?[") and name is not None and fnmatch.fnmatchcase(name, selector)


def _key_of(table: Mapping[str, Any], name: str, kind: str) -> str | None:
    """The file's own spelling of the package ``name`` in ``table`` (PyPI names compared as PEP 503 does)."""
    if kind == "dependencies":
        return name if name in table else None
    return next((k for k in table if canonical_name(k) == name), None)


# ---- the merge as operations ------------------------------------------------------------------------------------

class _Ops:
    """The merge's edits, in order, each on a key path of the document; run on the plain data, they say what the
    file must read as, and on tomlkit's document they make that edit keeping the layout. ``changes``: what each
    table gets, for the lines the command prints."""

    def __init__(self) -> None:
        self.edits: list[tuple[str, tuple[str, ...], Any]] = []
        self.changes: dict[str, list[str]] = {}

    def say(self, table: str, item: str) -> None:
        self.changes.setdefault(table, []).append(item)

    def set(self, path: tuple[str, ...], value: Any, item: str | None = None) -> None:
        self.edits.append(("set", path, value))
        self.say(".".join(path[:-1]), item or path[-1])

    def delete(self, path: tuple[str, ...], item: str | None = None) -> None:
        self.edits.append(("delete", path, None))
        self.say(".".join(path[:-1]) or path[0], item or f"{path[-1]} (removed)")

    def put(self, path: tuple[str, ...], index: int | None, value: Any) -> None:
        """Array ``path``'s item ``index`` becomes ``value`` (None: appended; the array made where missing)."""
        self.edits.append(("put", path, (index, value)))

    def lines(self) -> list[str]:
        return [f"{table}: {', '.join(items)}" for table, items in self.changes.items()]


def _inline(value: Any, layout: bool) -> Any:
    if not layout or not isinstance(value, (dict, list)):
        return value
    import tomlkit

    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_inline(v, layout) for v in value)
        return array
    table = tomlkit.inline_table()
    table.update({k: _inline(v, layout) for k, v in value.items()})
    return table


def _container(root: MutableMapping[str, Any], path: tuple[str, ...], layout: bool, made: list[Any]) -> Any:
    """The table at ``path``, made where it is missing (tomlkit: super tables above a header table; ``made``
    collects the header tables made)."""
    here = root
    for i, key in enumerate(path):
        if key not in here:
            if layout:
                import tomlkit

                here[key] = tomlkit.table(is_super_table=i < len(path) - 1)
                if i == len(path) - 1:
                    made.append(here[key])
            else:
                here[key] = {}
        here = here[key]
    return here


def _apply(root: MutableMapping[str, Any], edits: Sequence[tuple[str, tuple[str, ...], Any]], layout: bool) -> None:
    made: list[Any] = []
    for op, path, value in edits:
        if op == "set":
            _container(root, path[:-1], layout, made)[path[-1]] = _inline(value, layout)
        elif op == "delete":
            parents = [root]
            for key in path[:-1]:
                parents.append(parents[-1][key])
            del parents[-1][path[-1]]
            for depth in range(len(path) - 1, 0, -1):  # a target table emptied by it goes, and the tables above
                if len(parents[depth]) or path[0] != "target":
                    break
                del parents[depth - 1][path[depth - 1]]
        else:  # "put"
            index, entry = value
            holder = _container(root, path[:-1], layout, made)
            if path[-1] not in holder:
                holder[path[-1]] = _inline([], layout)
            if index is None:
                holder[path[-1]].append(_inline(entry, layout))
            else:
                holder[path[-1]][index] = _inline(entry, layout)
    if layout:
        import tomlkit

        for table in made:  # a blank line after each table made, as between the file's own
            table.add(tomlkit.nl())


class _Merge:
    """The decisions (module docstring), made on the file's plain data."""

    def __init__(self, label: str, data: Mapping[str, Any], wants: list[_Want]) -> None:
        self.label, self.data, self.wants = label, data, wants
        self.ops = _Ops()
        self.notes: list[str] = []
        legacy = isinstance(data.get("project"), dict) and bool({"channels", "platforms"} & set(data["project"]))
        key = "project" if legacy and "workspace" not in data else "workspace"  # pixi's [project]: its older name
        if label.endswith("pyproject.toml") or isinstance(data.get("tool"), dict) and "pixi" in data["tool"]:
            raise InputError(f"{label}: a pyproject.toml's [tool.pixi] tables are not merged (--format pixi prints "
                             "the entries; pixi reads them from a pixi.toml too)")
        if key not in data:
            raise InputError(f"{label}: no [workspace] table: not a pixi manifest (--format pixi prints one to "
                             "start from)")
        self.ws_key = key
        self.ws = _table(label, key, data[key])
        self.targets = _table(label, "target", data.get("target"))
        for selector, body in self.targets.items():
            _table(label, f"target.{selector}", body)
            for kind in KINDS:
                _table(label, f"target.{selector}.{kind}", body.get(kind))
        for kind in KINDS:
            _table(label, kind, data.get(kind))
        self.platforms: list[tuple[str | None, str]] = []

    # -- platforms --
    def merge_platforms(self) -> None:
        entries = self.ws.get("platforms", [])
        if not isinstance(entries, list):
            raise InputError(f"{self.label}: {self.ws_key}.platforms is {_kind(entries)}, not an array: torch-install "
                             "does not merge into it")
        found = [_platform_of(self.label, e) for e in entries]
        claimed: dict[int, _Want] = {}
        path = (self.ws_key, "platforms")
        for want in self.wants:
            index = next((i for i, (name, _) in enumerate(found) if name == want.name and i not in claimed), None)
            if index is not None and found[index][1] != want.subdir:
                raise InputError(f"{self.label}: its platform {want.name} is {found[index][1]}, not {want.subdir}: "
                                 "torch-install does not rename it")
            if index is None:
                same = [i for i, (_, subdir) in enumerate(found) if subdir == want.subdir and i not in claimed]
                named = [i for i in same if found[i][0] not in [w.name for w in self.wants]]
                if len(same) == 1 and named:
                    index = same[0]
                    name = found[index][0]
                    if isinstance(entries[index], dict) and name:
                        want.name = name  # the file's references to it keep naming it
            entry = want.entry()
            if index is None:
                self.ops.put(path, None, entry)
                self.ops.say(".".join(path), _entry_name(entry))
                entries = [*entries, entry]
                found.append(_platform_of(self.label, entry))
                claimed[len(found) - 1] = want
                continue
            claimed[index] = want
            if entries[index] != entry:
                self.ops.put(path, index, entry)
                self.ops.say(".".join(path), f"{_entry_name(entry)} (replacing {_toml(entries[index])})")
                entries = [*entries[:index], entry, *entries[index + 1:]]
                found[index] = _platform_of(self.label, entry)
        self.entries = entries
        self.platforms = found
        self.ours = claimed
        self.all_ours = len(claimed) == len(found)
        self._system_requirements()
        if any(isinstance(e, dict) for e in entries):
            self._requires_pixi()

    def _system_requirements(self) -> None:
        """pixi refuses ``[system-requirements]`` beside a platform that declares virtual packages: moved onto
        the platforms, as pixi's migration does (the targets' own declarations win)."""
        if not any(isinstance(e, dict) for e in self.entries):
            return
        features = [f for f, body in _table(self.label, "feature", self.data.get("feature")).items()
                    if isinstance(body, dict) and "system-requirements" in body]
        if features:
            raise InputError(f"{self.label}: feature.{features[0]}.system-requirements: pixi's deprecated form, "
                             "which pixi refuses beside a platform that declares CUDA; declare it on the platforms "
                             "(pixi workspace platform add), then merge")
        legacy = self.data.get("system-requirements")
        if legacy is None:
            return
        legacy = _table(self.label, "system-requirements", legacy)
        declared: dict[str, tuple[str, tuple[str, ...]]] = {}
        for key, value in legacy.items():
            if key == "libc" and isinstance(value, dict):
                if value.get("family", "glibc") != "glibc":
                    raise InputError(f"{self.label}: system-requirements.libc is {value.get('family')}: torch-install "
                                     "moves only glibc onto the platforms; move it by hand, then merge")
                value = value.get("version")
            if key not in SYSTEM_KEYS or not isinstance(value, (str, int, float)):
                raise InputError(f"{self.label}: system-requirements.{key}: torch-install cannot move it onto the "
                                 "platforms (pixi refuses the table beside a platform that declares CUDA); move it "
                                 "by hand, then merge")
            declared[SYSTEM_KEYS[key][0]] = (str(value), SYSTEM_KEYS[key][1])
        path = (self.ws_key, "platforms")
        for index, entry in enumerate(self.entries):
            name, subdir = self.platforms[index]
            ours = index in self.ours
            body = dict(entry) if isinstance(entry, dict) else {"platform": entry}
            for key, (value, subdirs) in declared.items():
                if not subdir.startswith(subdirs) or key in body or (ours and key == "cuda"):
                    continue
                body[key] = value
            if body != (entry if isinstance(entry, dict) else {"platform": entry}):
                self.ops.put(path, index, body)
                self.entries[index] = body
        self.ops.delete(("system-requirements",), "moved onto the platforms (pixi's deprecated form, which pixi "
                                                  "refuses beside a platform that declares CUDA)")

    def _requires_pixi(self) -> None:
        current = self.ws.get("requires-pixi")
        floor = REQUIRES_PIXI.removeprefix(">=")
        if current is None:
            self.ops.set((self.ws_key, "requires-pixi"), REQUIRES_PIXI, f"requires-pixi = {REQUIRES_PIXI}")
            return
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            specifiers = SpecifierSet(str(current))
        except InvalidSpecifier:
            raise InputError(f"{self.label}: {self.ws_key}.requires-pixi {current!r} is not a version specifier"
                             ) from None
        if any(s.operator in (">=", ">", "==", "~=", "===") and numeric_key(s.version) >= numeric_key(floor)
               for s in specifiers):
            return
        new = f"{current},{REQUIRES_PIXI}" if str(current).strip() else REQUIRES_PIXI
        self.ops.set((self.ws_key, "requires-pixi"), new, f"requires-pixi = {new} (was {current})")

    # -- channels --
    def merge_channels(self) -> bool:
        """conda-forge among the channels; True when the specs must name it (it is not the first)."""
        if not any(w.target.source == "conda-forge" for w in self.wants):
            return False
        channels = self.ws.get("channels", [])
        if not isinstance(channels, list):
            raise InputError(f"{self.label}: {self.ws_key}.channels is {_kind(channels)}, not an array: "
                             "torch-install does not merge into it")
        names = [_channel_name(c) for c in channels]
        if CHANNEL not in names:
            self.ops.put((self.ws_key, "channels"), None, CHANNEL)
            self.ops.say(f"{self.ws_key}.channels", CHANNEL)
            names.append(CHANNEL)
        return names[0] != CHANNEL

    # -- packages --
    def applying(self, want: _Want) -> list[str]:
        """The file's target selectors that apply to ``want``'s platform."""
        return [s for s in self.targets if _selector_applies(s, want.name, want.subdir)]

    def own_table(self, want: _Want) -> str:
        """The target table ``want``'s own packages go in: the file's one of its name, else one that applies to its
        platform alone (its subdir's first), else a new one of its name."""
        if want.name in self.targets:
            return want.name
        alone = [s for s in self.applying(want)
                 if [p for p in self.platforms if _selector_applies(s, *p)] == [(want.name, want.subdir)]]
        alone.sort(key=lambda s: s != want.subdir)
        return alone[0] if alone else want.name

    def _named_anywhere(self, kind: str, name: str) -> bool:
        tables = [self.data.get(kind) or {}, *((b.get(kind) or {}) for b in self.targets.values())]
        for body in (self.data.get("feature") or {}).values():
            if isinstance(body, dict):
                tables.append(body.get(kind) or {})
                tables += [(t.get(kind) or {}) for t in (body.get("target") or {}).values() if isinstance(t, dict)]
        return any(isinstance(t, dict) and _key_of(t, name, kind) is not None for t in tables)

    def merge_packages(self, channel: bool) -> None:
        own = {id(w): self.own_table(w) for w in self.wants}
        for kind in KINDS:
            if channel and kind == "dependencies":
                for want in self.wants:
                    if want.target.source == "conda-forge":
                        want.owned[kind] = {k: v if v == ABSENT else _with_channel(v)
                                            for k, v in want.owned[kind].items()}
            names = list(dict.fromkeys(n for w in self.wants for n in w.owned[kind]))
            self._check_elsewhere(kind, names, own)
            for name in names:
                self._merge_owned(kind, name, own)
            added = list(dict.fromkeys(n for w in self.wants for n in w.added[kind]))
            for name in added:
                if not self._named_anywhere(kind, canonical_name(name) if kind != "dependencies" else name):
                    self._add(kind, name, own)

    def _check_elsewhere(self, kind: str, names: list[str], own: dict[int, str]) -> None:
        """An InputError for a table the merge cannot decide for that names a package it owns."""
        for feature, body in (self.data.get("feature") or {}).items():
            if not isinstance(body, dict):
                continue
            scopes = [(f"feature.{feature}.{kind}", body.get(kind) or {}),
                      *((f"feature.{feature}.target.{s}.{kind}", t.get(kind) or {})
                        for s, t in (body.get("target") or {}).items() if isinstance(t, dict))]
            for where, table in scopes:
                hit = next((n for n in names if isinstance(table, dict) and _key_of(table, n, kind)), None)
                if hit:
                    raise InputError(f"{self.label}: {where} names {hit}: torch-install merges into the workspace's "
                                     "own tables; take it out there, or merge by hand (--format pixi prints the "
                                     "entries)")
        for want in self.wants:
            for selector in self.applying(want):
                if selector == own[id(want)]:
                    continue
                table = self.targets[selector].get(kind) or {}
                hit = next((n for n in names if want.owned[kind].get(n) is not None and _key_of(table, n, kind)),
                           None)
                if hit:
                    raise InputError(f"{self.label}: target.{selector}.{kind} names {hit}, and applies to "
                                     f"{want.name} and other platforms: torch-install cannot set it for {want.name} "
                                     "alone; take it out there, or merge by hand (--format pixi prints the entries)")

    def _merge_owned(self, kind: str, name: str, own: dict[int, str]) -> None:
        common = self.data.get(kind) or {}
        common_key = _key_of(common, name, kind)
        values = [w.owned[kind].get(name) for w in self.wants]
        present = [v for v in values if v is not None and v != ABSENT]
        if self.all_ours and len(present) == len(values) and all(v == present[0] for v in present):
            if common_key is None or common[common_key] != present[0]:
                self._set((kind, common_key or name), present[0], common.get(common_key or name))
            for want in self.wants:
                key = self._own_key(kind, own[id(want)], name)
                if key is not None:
                    self.ops.delete(("target", own[id(want)], kind, key), f"{key} (removed: {kind} has it)")
            return
        absent = [w for w, v in zip(self.wants, values, strict=True) if v == ABSENT]
        if common_key is not None and absent:
            if not self.all_ours:
                raise InputError(f"{self.label}: {kind}.{common_key} applies to every platform, and {absent[0].name} "
                                 f"takes torch from {_source(absent[0])}: torch-install cannot take it out for "
                                 f"{absent[0].name} alone; take it out there, or merge by hand (--format pixi prints "
                                 "the entries)")
            theirs = common[common_key]
            self.ops.delete((kind, common_key), f"{common_key} (removed: {absent[0].why.get(name, 'owned')})")
            for want, value in zip(self.wants, values, strict=True):  # the platforms it is not owned on keep it
                if value is None and self._own_key(kind, own[id(want)], name) is None:
                    self._set(("target", own[id(want)], kind, common_key), theirs, None)
        for want, value in zip(self.wants, values, strict=True):
            if value is None:
                continue
            table = own[id(want)]
            key = self._own_key(kind, table, name)
            if value == ABSENT:
                if key is not None:
                    self.ops.delete(("target", table, kind, key), f"{key} (removed: {want.why.get(name, 'owned')})")
                continue
            current = (self.targets.get(table) or {}).get(kind) or {}
            if key is None or current[key] != value:
                self._set(("target", table, kind, key or name), value, current.get(key or name))

    def _add(self, kind: str, name: str, own: dict[int, str]) -> None:
        values = [w.added[kind].get(name) for w in self.wants]
        if self.all_ours and all(v == values[0] for v in values):
            self._set((kind, name), values[0], None)
            return
        for want, value in zip(self.wants, values, strict=True):
            if value is not None:
                self._set(("target", own[id(want)], kind, name), value, None)

    def _own_key(self, kind: str, table: str, name: str) -> str | None:
        return _key_of((self.targets.get(table) or {}).get(kind) or {}, name, kind)

    def _set(self, path: tuple[str, ...], value: Any, old: Any) -> None:
        self.ops.set(path, value, f"{path[-1]} = {_toml(value)}" + (f" (was {_toml(old)})" if old is not None else ""))


def _toml(value: Any) -> str:
    from .conda import toml_value

    return toml_value(value) if isinstance(value, (str, dict)) else str(value)


def _with_channel(value: Any) -> Any:
    return {**({"version": value} if isinstance(value, str) else value), "channel": CHANNEL}


def _entry_name(entry: Any) -> str:
    return entry if isinstance(entry, str) else str(entry.get("name") or entry.get("platform"))


def _source(want: _Want) -> str:
    return "conda-forge" if want.target.source == "conda-forge" else "PyTorch's index"


def _effective(data: Mapping[str, Any], want: _Want, kind: str) -> dict[str, Any]:
    """What pixi takes for ``want``'s platform: the common table overlaid by every target table that applies."""
    out = dict(data.get(kind) or {})
    for selector, body in (data.get("target") or {}).items():
        if _selector_applies(selector, want.name, want.subdir):
            out.update(body.get(kind) or {})
    return {(canonical_name(k) if kind != "dependencies" else k): v for k, v in out.items()}


def merge_pixi(path: str, plans: Sequence[Plan], source: str | None) -> list[str]:
    """Merge the plans' pixi entries into the manifest at ``path`` (module docstring). Returns what changed, one
    line per table (none: the file already holds them, and is not written)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from .. import user_files

    found, _ = targets(plans, source)
    if not found:
        raise InputError("--merge: no build fits the target: nothing to merge")
    label = f"--merge {path}"
    opened = user_files.read(path, user_files.TOML, "--merge")
    if opened.text is None:
        raise InputError(f"{label}: no such file (--format pixi prints a manifest to start one)")
    plain = user_files.toml_data(opened.text)
    wants = [_Want(t) for t in found]
    merge = _Merge(label, plain, wants)
    merge.merge_platforms()
    channel = merge.merge_channels()
    merge.merge_packages(channel)
    expected = copy.deepcopy(plain)
    _apply(expected, merge.ops.edits, layout=False)
    for want in wants:  # read back as pixi overlays the tables: each target takes what it must
        for kind in KINDS:
            taken = _effective(expected, want, kind)
            for name, value in want.owned[kind].items():
                if (taken.get(name) if value != ABSENT else taken.get(name, ABSENT)) != value:
                    raise InputError(f"{label}: after the merge {want.name} would not take {name} as it must: "
                                     "torch-install cannot merge into this layout; --format pixi prints the entries")
    if expected == plain:
        return []
    try:
        document = tomlkit.parse(opened.text)
        _apply(document, merge.ops.edits, layout=True)
        text = tomlkit.dumps(document)
    except (TOMLKitError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"{label}: torch-install cannot edit this layout of the file ({exc}): it is left as it was; "
                         "--format pixi prints the entries to merge by hand") from None
    text = text.rstrip("\n") + "\n" if opened.text.endswith("\n") else text.rstrip("\n")
    user_files.write(opened, text, user_files.toml_reading_as(expected), "--merge")
    return merge.ops.lines()


__all__ = ["merge_pixi"]
