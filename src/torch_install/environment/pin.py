"""The build stays installed: constraints that keep the torch family at the chosen build, read by pip and by uv, so
a later ``pip install torchvision`` (or any package that depends on torch) neither replaces the build with the
default index's nor brings a companion built for another variant. Which pins: ``resolver.pins.kept_pins``.

What ``install --pin`` writes, and only that, each file through the one editor of user files (``user_files``:
regular files only, a link followed, mode and owner kept, checked as its format reads it, a concurrent change
refused) with an undo journal, ``{prefix}/torch-install-undo.json``, from which ``torch-install unpin`` puts back
exactly what was there:

- ``{prefix}/torch-install-constraints.txt``: the pins;
- pip: in the environment's own ``pip.conf`` (``pip.ini``), the ``[install] constraint`` option, edited in place
  (``pip_config.set_option``: the user's comments, order, key spelling and indentation kept). pip's ``[install]``
  replaces ``[global]`` of every file, so the value written holds what was in force before (the last
  ``[install]`` value of pip's files, else their last ``[global]`` one), then the pin; a path with whitespace is
  written as a ``file:`` URL (pip splits the option on whitespace). A ``pip.conf`` that is a link is a file shared
  beyond this environment: it is left alone, and a line says what to add;
- uv: each of its workflows reads another form. ``uv pip`` reads no configuration of an environment (only of the
  directory it runs in, shared by every environment used there, so none is written): a line gives the
  ``UV_CONSTRAINT`` to export, naming the constraints file. ``uv sync``, ``uv lock`` and ``uv add`` of a project
  whose ``.venv`` this is read its ``pyproject.toml``: there the build's index (``[[tool.uv.index]]``, explicit, named
  ``torch-install-<variant>`` as ``--format pyproject`` names it) and the ``[tool.uv.sources]`` of each family
  member the project requires itself, under this platform's marker; sources the user wrote stay (a family member
  without its own gets torch's: the user chooses the build, per extra or per platform). No version goes there:
  ``uv.lock`` holds the versions, and a version in ``[tool.uv]`` would hold every extra to one build, so that
  ``uv lock`` fails for an extra that needs another. uv applies sources to a project's own requirements only:
  a family member that comes in through another package is said.

A later ``install`` of another build (or ``doctor --fix``), with or without ``--pin``, makes the pin follow the
new build first (``follow``, in the install transaction), so its own pin never blocks it; a run that installs
nothing (``-- --dry-run``) writes no pin. A container image sets ``PIP_CONSTRAINT``/``UV_CONSTRAINT`` instead
(``render/container.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import InputError
from ..records import Record
from ..resolver.plan import Plan
from ..user_files import PIP_INI, PLAIN, Opened, Undone, read, write
from .pip_config import Setting, config_name, configured, option_values, pip_config_files, set_option

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

CONSTRAINTS_FILE = "torch-install-constraints.txt"
JOURNAL = "torch-install-undo.json"
HEADER = "# torch-install: keeps the torch build installed"


def config_path(prefix: str, windows: bool = os.name == "nt") -> str:
    return os.path.join(prefix, config_name(windows))


def constraints_path(prefix: str) -> str:
    return os.path.join(prefix, CONSTRAINTS_FILE)


def journal_path(prefix: str) -> str:
    return os.path.join(prefix, JOURNAL)


def config_value(path: str) -> str:
    """How pip's configuration can name a file: its path, or where it holds whitespace, its ``file:`` URL."""
    return Path(path).absolute().as_uri() if any(c.isspace() for c in path) else path


def pinned_versions(prefix: str) -> dict[str, str] | None:
    """What the environment's constraints file pins, name -> version (None: there is none)."""
    text = read(constraints_path(prefix), what="the pin", check=False).text
    if text is None:
        return None
    pins: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and name and not name.startswith("#"):
            pins[name.strip().lower()] = version.strip()
    return pins


def _pin_text(pins: Iterable[str]) -> str:
    return "\n".join([f"{HEADER}; pip's configuration and uv's name this file (torch-install install --pin)",
                      *pins]) + "\n"


def _write_constraints(prefix: str, text: str) -> None:
    path = constraints_path(prefix)
    write(read(path, what="the pin", check=False), text, PLAIN, "the pin", journal_path(prefix))


# -- pip -----------------------------------------------------------------------------------------------------

def pin_setting(prefix: str, environ: Mapping[str, str] | None = None) -> tuple[bool, Setting | None]:
    """Whether ``pip install`` in the environment reads its constraints file, and the constraint option as pip
    takes it (from a file, or ``$PIP_CONSTRAINT``)."""
    environ = os.environ if environ is None else environ
    setting = configured("constraint", environ, pip_config_files(environ, prefix))
    wanted = {constraints_path(prefix), config_value(constraints_path(prefix))}
    return setting is not None and bool(wanted & set(setting.value.split())), setting


PIP_CONFIG = "the environment's pip configuration"


def _open_pip_config(prefix: str) -> Opened | None:
    """The environment's pip configuration as read for an edit (None: it is a link, left alone); an InputError when
    pip could not read it either."""
    conf = config_path(prefix)
    return None if os.path.islink(conf) else read(conf, PIP_INI, PIP_CONFIG)


def _write_pip_config(prefix: str, environ: Mapping[str, str]) -> list[str]:
    """Name the constraints file in the environment's pip configuration; the lines to say."""
    conf = config_path(prefix)
    ours = config_value(constraints_path(prefix))
    opened = _open_pip_config(prefix)
    if opened is None:
        return [f"{conf} is a link to {os.path.realpath(conf)}, a file shared beyond this environment: it was not "
                f"changed; add {ours} to its [install] constraint to keep the build"]
    text = opened.text or ""
    files = pip_config_files(environ, prefix)
    names = [os.path.abspath(f) for f in files]
    in_force = configured("constraint", {}, files)
    lines = []
    here = os.path.abspath(conf)
    later = in_force is not None and in_force.section == "install" and here in names and \
        os.path.abspath(in_force.path or "") in names[names.index(here) + 1:]
    if later or in_force is None:
        values = option_values(text, "install", "constraint") or []
    else:
        values = in_force.value.split()
        if os.path.abspath(in_force.path or "") != here or in_force.section != "install":
            kept = [v for v in values if v not in (ours, constraints_path(prefix))]
            if kept:
                lines.append(f"{conf} [install] constraint also names {' '.join(kept)}, in force from {in_force.where} "
                             "(pip's [install] replaces [global], and a later file's value an earlier one): a change "
                             "to that setting there needs the same change here")
    if ours not in values:
        values = [v for v in values if v != constraints_path(prefix)] + [ours]
        try:
            edited = set_option(text, "install", "constraint", values)
        except ValueError as exc:
            raise InputError(f"{PIP_CONFIG}: {conf}: {exc}: not changed; add {ours} to its [install] constraint by "
                             "hand") from None
        write(opened, edited, PIP_INI, PIP_CONFIG, journal_path(prefix))
    if "PIP_CONSTRAINT" in environ:
        lines.append(f"$PIP_CONSTRAINT is set, and pip takes it over every configuration file: add {ours} to it, or "
                     "unset it, to keep the build")
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        lines.append("$PIP_CONFIG_FILE is the null device, so pip reads no configuration file, this environment's "
                     "neither: unset it to keep the build")
    elif later and in_force is not None:
        lines.append(f"{in_force.where} sets constraint = {in_force.value}, which replaces the pin (pip reads it "
                     f"after {conf}): add {ours} to it to keep the build")
    return lines


# -- uv ------------------------------------------------------------------------------------------------------

UV_CONFIG = "uv's configuration"


def uv_project_for(prefix: str) -> tuple[Path | None, str | None]:
    """The uv project whose environment this is, and why its pin cannot be written there (a line to say): for
    ``<dir>/.venv``, ``<dir>/pyproject.toml`` when it has a ``[project]`` table (``uv sync`` and ``uv lock`` there
    act on that environment); (None, None) for any other layout."""
    path = Path(prefix)
    project = path.parent / "pyproject.toml"
    if path.name != ".venv" or not os.path.lexists(project):
        return None, None
    from ..user_files import TOML, toml_data

    try:
        opened = read(str(project), TOML, UV_CONFIG)
    except InputError as exc:
        return None, f"uv's pin was not written: {exc}"
    data = toml_data(opened.text or "")
    tool = data.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else None
    if not isinstance(uv, dict):
        return None, f"uv's pin was not written: {project}: its tool.uv is not a table"
    if not isinstance(uv.get("sources", {}), dict):
        return None, f"uv's pin was not written: {project}: its tool.uv.sources is not a table (uv refuses it too)"
    indexes = uv.get("index", [])
    if not isinstance(indexes, list) or not all(isinstance(i, dict) for i in indexes):
        return None, f"uv's pin was not written: {project}: its tool.uv.index is not a list of tables (uv refuses " \
                     "it too)"
    return (project, None) if isinstance(data.get("project"), dict) else (None, None)


def _direct_names(data: Mapping[str, object]) -> set[str]:
    """The names a pyproject requires itself: its dependencies, every extra's, every dependency group's."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..resolver.request import canonical_name

    project = data.get("project")
    texts: list[object] = []
    if isinstance(project, dict):
        texts += project.get("dependencies") or []
        extras = project.get("optional-dependencies")
        texts += [t for group in (extras.values() if isinstance(extras, dict) else ()) for t in group or ()]
    groups = data.get("dependency-groups")
    texts += [t for group in (groups.values() if isinstance(groups, dict) else ()) for t in group or ()]
    names = set()
    for text in texts:
        try:
            names.add(canonical_name(Requirement(text).name) if isinstance(text, str) else "")
        except InvalidRequirement:
            continue
    return names - {""}


def _applies_to(data: Mapping[str, Any], entry: Mapping[str, Any], name: str) -> bool:
    """Whether uv takes the source ``entry`` for ``name``: one of an extra (a dependency group) only where that
    extra (group) requires ``name`` itself; any other everywhere."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..resolver.request import canonical_name

    if entry.get("extra"):
        extras = data.get("project", {}).get("optional-dependencies", {})
        texts = extras.get(entry["extra"], []) if isinstance(extras, dict) else []
    elif entry.get("group"):
        groups = data.get("dependency-groups", {})
        texts = groups.get(entry["group"], []) if isinstance(groups, dict) else []
    else:
        return True
    for text in texts if isinstance(texts, list) else []:
        try:
            if isinstance(text, str) and canonical_name(Requirement(text).name) == name:
                return True
        except InvalidRequirement:
            continue
    return False


def _own(entry: object) -> bool:
    """A source or index entry torch-install writes (its index's name begins so)."""
    from ..resolver.pins import OWN_INDEX_PREFIX

    return isinstance(entry, dict) and str(entry.get("index", entry.get("name", ""))).startswith(OWN_INDEX_PREFIX)


def _uv_project_edit(plain: dict[str, Any], plan: Plan) -> tuple[dict[str, list[dict[str, str]]],
                                                                   dict[str, Any] | None, list[str]]:
    """What the pin sets in a uv project (``plain``: its pyproject as data): the sources of each family member
    the project requires itself (name -> entries), the build's index entry (None: none is needed), the lines to
    say. A family member whose sources the user wrote keeps them; one without gets torch's where the user wrote
    torch's (they choose the build, per extra or per platform), else the build's index under this platform's
    marker, beside the entries of ours for other platforms."""
    from ..markers import platform_marker
    from ..resolver.pins import index_name
    from ..resolver.request import PACKAGES

    assert plan.choice is not None
    sources = plain.get("tool", {}).get("uv", {}).get("sources", {})  # a table: uv_project_for checked it

    def entries(name: str) -> list[Any]:
        value = sources.get(name, [])
        return value if isinstance(value, list) else [value]

    direct = _direct_names(plain)
    family = [name for name in PACKAGES if name in direct]
    lines = []
    if not family:
        return {}, None, ["uv takes an index of the project's own requirements only, and the project requires "
                          "no torch, torchvision or torchaudio itself: add them to its dependencies to keep their "
                          "build with uv"]
    users = {name for name in family if entries(name) and not all(_own(e) for e in entries(name))}
    wanted: dict[str, list[dict[str, str]]] = {}
    index: dict[str, Any] | None = None
    if "torch" in users:
        torch = [dict(e) for e in entries("torch")]
        for name in family:
            if name in users or name == "torch":
                continue
            scoped = [e for e in torch if not _applies_to(plain, e, name)]
            if scoped:
                keys = ", ".join(dict.fromkeys(str(e.get("extra") or e.get("group")) for e in scoped))
                lines.append(f"{name}: torch's sources are per extra ({keys}), and uv takes an extra's source only "
                             f"for that extra's own requirements: add {name} to them to take the same build")
            else:
                wanted[name] = [dict(e) for e in torch]
        same = f"{', '.join(wanted)} now take{'s' if len(wanted) == 1 else ''} the same" if wanted else \
            "left as they are"
        lines.insert(0, f"uv's sources of torch in the project are its own: {same}")
    elif plan.choice.index_url:
        marker = platform_marker(plan.machine)
        name_of_index = index_name(plan)
        index = {"name": name_of_index, "url": plan.choice.index_url, "explicit": True}
        for name in family:
            if name in users:
                continue
            kept = [dict(e) for e in entries(name) if _own(e) and e.get("marker") not in (None, marker)]
            wanted[name] = [*kept, {"index": name_of_index, "marker": marker}]
    kept_out = sorted(users - {"torch"})
    if kept_out:
        lines.append(f"uv's sources of {', '.join(kept_out)} in the project are its own: left as they are")
    return wanted, index, lines


def _write_uv_project(path: Path, plan: Plan, journal: str) -> list[str]:
    """The pin of a uv project (``uv sync``, ``uv lock``, ``uv add``): ``_uv_project_edit`` written into its
    pyproject (uv's own tables only; the indexes of ours no source names any longer removed); the lines to say.
    No version is written: ``uv.lock`` holds the versions, and a version in ``[tool.uv]`` would hold every extra
    to one build (``uv lock`` then fails for an extra that needs another)."""
    import copy

    import tomlkit

    from ..user_files import TOML, toml_data, toml_reading_as

    try:
        opened = read(str(path), TOML, UV_CONFIG)
    except InputError as exc:
        return [f"uv's pin was not written: {exc}"]
    text = opened.text or ""
    plain = toml_data(text)
    wanted, index, lines = _uv_project_edit(plain, plan)
    if not wanted:
        return lines
    expected = copy.deepcopy(plain)
    uv = expected.setdefault("tool", {}).setdefault("uv", {})
    sources = uv.setdefault("sources", {})
    sources.update(wanted)
    named = {e.get("index") for value in sources.values() for e in (value if isinstance(value, list) else [value])
             if isinstance(e, dict)}
    indexes = [i for i in uv.get("index", []) if not _own(i) or i.get("name") in named]
    if index is not None and not any(i.get("name") == index["name"] for i in indexes):
        indexes.append(index)
    uv["index"] = indexes
    if not uv["index"]:
        del uv["index"]
    if expected == plain:
        return lines
    document = tomlkit.parse(text)
    table = document.setdefault("tool", tomlkit.table(True)).setdefault("uv", tomlkit.table())
    if "index" in table:
        aot = table["index"]
        for i in reversed(range(len(aot))):
            if _own(aot[i]) and aot[i].get("name") not in named:
                del aot[i]
        if index is not None and not any(i.get("name") == index["name"] for i in aot):
            aot.append(index)
        if not len(aot):
            del table["index"]
    elif index is not None:
        table["index"] = tomlkit.aot()
        table["index"].append(index)
    found = table.setdefault("sources", tomlkit.table())
    for name, value in wanted.items():
        array = tomlkit.array()
        array.extend(tomlkit.inline_table() for _ in value)
        for item, entry in zip(array, value, strict=True):
            item.update(entry)
        found[name] = array
    try:
        write(opened, tomlkit.dumps(document), toml_reading_as(expected), UV_CONFIG, journal)
    except InputError as exc:
        return [f"uv's pin was not written: {exc}"]
    return [f"uv sync and uv lock in {path.parent} keep the build too ({path}: [tool.uv.sources] of "
            f"{', '.join(wanted)})", *lines]


# -- the pin as a whole ----------------------------------------------------------------------------------------

class Written(Record):
    pins: tuple[str, ...]
    lines: tuple[str, ...]  # what to say


def check_writable(prefix: str) -> None:
    """Before anything is installed: the files a pin edits can be edited (an InputError naming the first that
    cannot: a special file, one over the size limit, a pip configuration pip would refuse)."""
    read(constraints_path(prefix), what="the pin", check=False)
    _open_pip_config(prefix)


def write_pin(prefix: str, pins: list[str], environ: Mapping[str, str] | None = None, plan: Plan | None = None,
              unguarded: Sequence[str] = ()) -> Written:
    """Write the constraints file and name it in the environment's pip configuration, and (``plan``: the build
    installed) in uv's sources of the project whose ``.venv`` this is; what was done. ``unguarded``: the pins the
    default index's other build of the same version satisfies too (``resolver.pins.unguarded``), said."""
    environ = os.environ if environ is None else environ
    if not pins:
        return Written((), ())
    target = constraints_path(prefix)
    _write_constraints(prefix, _pin_text(pins))
    lines = [f"pinned {', '.join(pins)}: later pip installs in this environment keep them ({target}, named by "
             f"{config_path(prefix)})"]
    lines += _write_pip_config(prefix, environ)
    if unguarded and plan is not None and plan.choice is not None:
        names = [pin.split("==")[0] for pin in unguarded]
        lines.append(f"{', '.join(unguarded)}: no label, and the default index has the same version"
                     f"{'' if len(names) == 1 else 's'} as another build, which a pin cannot tell apart: install "
                     f"{'it' if len(names) == 1 else 'them'} with --index-url {plan.choice.index_url} (or "
                     "torch-install install); `torch-install doctor` finds the other build, and its --fix puts this "
                     "one back")
    lines.append(f"uv pip reads no configuration of an environment: export UV_CONSTRAINT={config_value(target)} "
                 "where uv pip installs into it")
    project, why_not = uv_project_for(prefix)
    if project is not None and plan is not None and plan.choice is not None:
        lines += _write_uv_project(project, plan, journal_path(prefix))
    elif why_not:
        lines.append(why_not)
    return Written(tuple(pins), tuple(lines))


class Followed(Record):
    """The pin rewritten for a new build before an install, and what to put back if the install fails."""

    before: str  # the constraints file as it was
    changed: tuple[str, ...]  # "torch 2.15.0+cpu -> 2.14.1+cpu"


def follow(prefix: str, plan: Plan) -> Followed | None:
    """When the environment has a pin of ours that the plan's build would break (another version of a pinned
    package), its constraints file rewritten to the plan's pins before the installer runs, so it does not block its
    own update (None: no pin, or nothing to change). ``put_back`` restores it if the install fails."""
    pins = pinned_versions(prefix)
    if not pins or plan.choice is None:
        return None
    planned = {name: version for name, version in plan.choice.packages.items() if version}
    changed = [f"{name} {pins[name]} -> {version}" for name, version in planned.items()
               if name in pins and pins[name] != version]
    if not changed:
        return None
    before = read(constraints_path(prefix), what="the pin", check=False).text or ""
    merged = {**pins, **{name: version for name, version in planned.items() if name in pins or name == "torch"}}
    _write_constraints(prefix, _pin_text(f"{n}=={v}" for n, v in merged.items()))
    return Followed(before, tuple(changed))


def put_back(prefix: str, followed: Followed) -> None:
    """Put back the constraints file ``follow`` changed (the install it was changed for failed)."""
    _write_constraints(prefix, followed.before)


def unpin(prefix: str) -> Undone:
    """Undo ``install --pin`` in the environment: every file it changed put back exactly as it was (its constraints
    file removed, unless pip's configuration still names it), each that nobody changed since; one line per file
    (none: nothing to undo)."""
    from ..user_files import journal_files, undo

    journal = journal_path(prefix)
    if not journal_files(journal):
        return Undone()
    first = undo(journal, keep=lambda path: path == os.path.realpath(constraints_path(prefix)))
    if pin_setting(prefix, {k: v for k, v in os.environ.items() if k != "PIP_CONSTRAINT"})[0]:
        return first._replace(left=(*first.left, f"{constraints_path(prefix)}: kept, since pip's configuration "
                                                  "still names it"))
    last = undo(journal)
    return Undone(first.done + last.done, first.left + last.left)


def stale_pins(pins: Mapping[str, str], installed: Mapping[str, str]) -> list[str]:
    """Pins that an installed version does not satisfy, as pip compares them (a bare version matches any local
    label): ``torch==2.9.1+cu128 (installed: 2.10.0+cu130)``."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    stale = []
    for name, version in sorted(pins.items()):
        if name not in installed:
            continue
        try:
            ok = SpecifierSet(f"=={version}").contains(Version(installed[name]), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            ok = version == installed[name]
        if not ok:
            stale.append(f"{name}=={version} (installed: {installed[name]})")
    return stale
