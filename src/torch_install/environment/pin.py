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
- uv, for a ``./.venv`` beside the project (uv finds its configuration from the directory it runs in): the
  ``constraint-dependencies`` of that directory's ``uv.toml`` when there is one (uv reads it over the pyproject),
  else of ``[tool.uv]`` in its ``pyproject.toml`` when that has the table, else of a new ``uv.toml``; only the
  family's entries are ours, the user's other entries stay. Elsewhere uv reads no per-environment configuration:
  a line gives the ``UV_CONSTRAINT`` to export.

A later ``install`` of another build (or ``doctor --fix``), with or without ``--pin``, makes the pin follow the
new build first (``follow``, in the install transaction), so its own pin never blocks it; a run that installs
nothing (``-- --dry-run``) writes no pin. A container image sets ``PIP_CONSTRAINT``/``UV_CONSTRAINT`` instead
(``render/container.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import InputError
from ..records import Record
from ..resolver.plan import Plan
from ..user_files import PIP_INI, PLAIN, Opened, Undone, read, write
from .pip_config import Setting, config_name, configured, option_values, pip_config_files, set_option

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


def uv_config_for(prefix: str) -> tuple[Path | None, str | None]:
    """The uv configuration that keeps the build of this environment, and why none can (a line to say): for
    ``<dir>/.venv``, ``<dir>/uv.toml`` when it exists (uv reads it over the pyproject), else ``<dir>/pyproject.toml``
    when it has a ``[tool.uv]`` table, else a new ``<dir>/uv.toml`` (uv finds it when run in ``<dir>``, where it also
    finds ``.venv``); (None, None) for any other layout (uv reads no per-environment configuration)."""
    path = Path(prefix)
    if path.name != ".venv":
        return None, None
    uv_toml, project = path.parent / "uv.toml", path.parent / "pyproject.toml"
    if os.path.lexists(uv_toml) or not os.path.lexists(project):
        return uv_toml, None
    from ..user_files import TOML, toml_data

    try:
        opened = read(str(project), TOML, UV_CONFIG)
    except InputError as exc:
        return None, f"uv's pin was not written: {exc}"
    tool = toml_data(opened.text or "").get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if tool is not None and not isinstance(tool, dict):
        return None, f"uv's pin was not written: {project}: its tool is not a table"
    if isinstance(tool, dict) and "uv" in tool and not isinstance(uv, dict):
        return None, f"uv's pin was not written: {project}: its tool.uv is not a table"
    return (project, None) if isinstance(uv, dict) else (uv_toml, None)


def _write_uv_config(path: Path, pins: list[str], names: set[str], journal: str) -> list[str]:
    """uv's ``constraint-dependencies`` in ``path`` set to the user's entries and the pins; the lines to say."""
    import copy

    import tomlkit
    from packaging.requirements import InvalidRequirement, Requirement

    from ..user_files import TOML, toml_data, toml_reading_as

    try:
        opened = read(str(path), TOML, UV_CONFIG)
    except InputError as exc:
        return [f"uv's pin was not written: {exc}"]
    text = opened.text or ""
    plain = toml_data(text)
    expected = copy.deepcopy(plain)
    in_project = path.name == "pyproject.toml"
    table = expected["tool"]["uv"] if in_project else expected
    existing = table.get("constraint-dependencies", [])
    if not isinstance(existing, list) or not all(isinstance(e, str) for e in existing):
        return [f"uv's pin was not written: {path}: its constraint-dependencies is not a list of requirements "
                "(uv refuses it too)"]

    def ours(entry: str) -> bool:
        try:
            return Requirement(entry).name.lower() in names
        except InvalidRequirement:
            return False

    wanted = [entry for entry in existing if not ours(entry)] + list(pins)
    table["constraint-dependencies"] = wanted
    if plain == expected:
        return []
    document = tomlkit.parse(text) if text else tomlkit.document()
    if not text:
        document.add(tomlkit.comment("uv reads this when run here: torch-install keeps ./.venv's torch build"))
    container = document["tool"]["uv"] if in_project else document
    entries = tomlkit.array()
    entries.extend(wanted)
    entries.multiline(not isinstance(container, tomlkit.items.InlineTable))
    container["constraint-dependencies"] = entries
    write(opened, tomlkit.dumps(document), toml_reading_as(expected), UV_CONFIG, journal)
    return []


# -- the pin as a whole ----------------------------------------------------------------------------------------

class Written(Record):
    pins: tuple[str, ...]
    lines: tuple[str, ...]  # what to say


def check_writable(prefix: str) -> None:
    """Before anything is installed: the files a pin edits can be edited (an InputError naming the first that
    cannot: a special file, one over the size limit, a pip configuration pip would refuse)."""
    read(constraints_path(prefix), what="the pin", check=False)
    _open_pip_config(prefix)


def write_pin(prefix: str, pins: list[str], environ: Mapping[str, str] | None = None) -> Written:
    """Write the constraints file and name it in the environment's pip configuration and uv's; what was done."""
    environ = os.environ if environ is None else environ
    if not pins:
        return Written((), ())
    target = constraints_path(prefix)
    _write_constraints(prefix, _pin_text(pins))
    lines = [f"pinned {', '.join(pins)}: later pip installs in this environment keep them ({target}, named by "
             f"{config_path(prefix)})"]
    lines += _write_pip_config(prefix, environ)
    uv, why_not = uv_config_for(prefix)
    if uv is not None:
        lines += _write_uv_config(uv, pins, {p.split("==")[0] for p in pins}, journal_path(prefix)) or [
            f"uv keeps them too when run in {uv.parent} ({uv}, constraint-dependencies)"]
    elif why_not:
        lines.append(why_not)
    else:
        lines.append(f"uv reads no configuration of this environment: export UV_CONSTRAINT={config_value(target)} "
                     "where uv installs into it")
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
