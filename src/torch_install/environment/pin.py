"""The build stays installed: constraints that keep the torch family at the chosen build, read by pip and by uv, so
a later ``pip install torchvision`` (or any package that depends on torch) neither replaces the build with the
default index's nor brings a companion built for another variant.

What ``install --pin`` writes, and only that:

- ``{prefix}/torch-install-constraints.txt``: one pin per family member (``torch==2.9.1+cu128``), at the version
  installed, local label included; a companion that is not installed is pinned to the release's match
  (``torchvision==0.24.1+cu128``; the bare version where the default index's wheel is that very build), so that a
  later install of it takes the matching build or none;
- pip: in the environment's own ``pip.conf`` (``pip.ini``), the ``[install] constraint`` option, edited in place
  (pip_config.set_option: the user's comments, order and key spelling kept), its other values kept and the values
  that other files or ``[global]`` put in force added, since ``[install]`` there replaces them; a path with
  whitespace is written as a ``file:`` URL (pip splits the option on whitespace);
- uv, for a ``./.venv`` beside the project (uv finds its configuration from the directory it runs in): the
  ``constraint-dependencies`` of ``[tool.uv]`` in that directory's ``pyproject.toml`` when it has that table, else
  of its ``uv.toml``; only the family's entries are ours, the user's other entries stay. Elsewhere uv reads no
  per-environment configuration: ``UV_CONSTRAINT`` names the constraints file.

A later ``install`` of another build, with or without ``--pin``, updates the pin first (``prepare_update``), so its
own pin never blocks it; a run that installs nothing (``-- --dry-run``) writes no pin. A container image sets
``PIP_CONSTRAINT``/``UV_CONSTRAINT`` instead (``render/container.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import EnvironmentFailure
from ..records import Record
from ..resolver.plan import Plan
from .pip_config import (
    Setting,
    config_name,
    configured,
    duplicate_keys,
    option_values,
    pip_config_files,
    set_option,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.matrix import Matrix

CONSTRAINTS_FILE = "torch-install-constraints.txt"
IMAGE_CONSTRAINTS = "/etc/torch-install-constraints.txt"  # in a container image
HEADER = "# torch-install: keeps the torch build installed"


def constraint_lines(plan: Plan) -> list[str]:
    """``name==version`` for each package of the plan whose version is chosen (an open one is left out): the
    family, then the requested packages built against torch."""
    if plan.choice is None:
        return []
    return [f"{name}=={version}" for name, version in plan.choice.packages.items() if version] + [
        f"{p.name}=={p.version}" for p in plan.choice.companions if p.version and p.kind != "left-out"]


def render_constraints(plan: Plan) -> str:
    """A pip/uv constraints file keeping the chosen build: a comment, then one pin per line."""
    lines = constraint_lines(plan)
    if not lines or plan.choice is None:
        return ""
    head = (f"# torch-install: keeps torch {plan.choice.torch} ({plan.choice.variant}) installed; use with "
            "pip -c FILE, PIP_CONSTRAINT or UV_CONSTRAINT")
    return "\n".join([head, *lines]) + "\n"


def config_path(prefix: str, windows: bool = os.name == "nt") -> str:
    return os.path.join(prefix, config_name(windows))


def constraints_path(prefix: str) -> str:
    return os.path.join(prefix, CONSTRAINTS_FILE)


def config_value(path: str) -> str:
    """How pip's configuration can name a file: its path, or where it holds whitespace, its ``file:`` URL."""
    return Path(path).absolute().as_uri() if any(c.isspace() for c in path) else path


def _write_atomic(path: str, text: str) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".torch-install-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read(path: str) -> str | None:
    from ..probe import read_regular

    try:
        return read_regular(path, 1 << 20).decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvironmentFailure(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc}); torch-install "
                                 "does not change a file it cannot read") from None


# -- what to pin ----------------------------------------------------------------------------------------------

def pins_for(plan: Plan, installed: Mapping[str, str], matrix: Matrix | None = None) -> list[str]:
    """The pins that keep the plan's build: every family member installed (its version as installed), each
    companion of the release not installed, at the release's match (labelled unless the default index's wheel is
    this very build), and every installed package built against torch (``installed`` holds them; at the version
    installed). Empty when the plan's torch is not what is installed (the run installed nothing)."""
    from ..resolver.request import PACKAGES

    choice = plan.choice
    if choice is None or installed.get("torch") != choice.packages.get("torch"):
        return []
    pins = [f"{name}=={installed[name]}" for name in PACKAGES if name in installed]
    pins += [f"{name}=={version}" for name, version in sorted(installed.items()) if name not in PACKAGES]
    release = matrix.release(choice.torch) if matrix is not None and matrix.has_release(choice.torch) else None
    if release is not None and plan.request.channel == "stable":
        default_build = release.pypi.get(plan.machine.platform or "")
        for name, version in release.companions.items():
            if name in installed or name not in PACKAGES:
                continue
            labelled = choice.variant not in ("default", default_build) and matrix is not None and \
                matrix.companion_labelled(name, version)
            pins.append(f"{name}=={version}+{choice.variant}" if labelled else f"{name}=={version}")
    return pins


def pinned_versions(prefix: str) -> dict[str, str] | None:
    """What the environment's constraints file pins, name -> version (None: there is none)."""
    text = _read(constraints_path(prefix)) if os.path.exists(constraints_path(prefix)) else None
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


# -- pip -----------------------------------------------------------------------------------------------------

def pin_setting(prefix: str, environ: Mapping[str, str] | None = None) -> tuple[bool, Setting | None]:
    """Whether ``pip install`` in the environment reads its constraints file, and the constraint option as pip
    takes it (from a file, or ``$PIP_CONSTRAINT``)."""
    environ = os.environ if environ is None else environ
    setting = configured("constraint", environ, pip_config_files(environ, prefix))
    wanted = {constraints_path(prefix), config_value(constraints_path(prefix))}
    return setting is not None and bool(wanted & set(setting.value.split())), setting


def _write_pip_config(prefix: str, environ: Mapping[str, str]) -> list[str]:
    """Name the constraints file in the environment's pip configuration; the lines to say."""
    conf = config_path(prefix)
    ours = config_value(constraints_path(prefix))
    if os.path.islink(conf):
        return [f"{conf} is a link to {os.path.realpath(conf)}, a file shared beyond this environment: it was not "
                f"changed; add {ours} to its [install] constraint to keep the build"]
    text = _read(conf) or ""
    if twice := duplicate_keys(text):
        raise EnvironmentFailure(f"{conf} sets {', '.join(twice)} twice, which pip refuses: torch-install does not "
                                 "change it (remove the duplicate first)")
    values = option_values(text, "install", "constraint")
    if values is None:  # [install] here replaces what [global] here and the files before this one put in force
        files = pip_config_files(environ, prefix)
        before = files[:[str(f) for f in files].index(conf) + 1] if conf in map(str, files) else [Path(conf)]
        in_force = configured("constraint", {}, before)
        values = in_force.value.split() if in_force else []
    if ours not in values:
        values = [v for v in values if v != constraints_path(prefix)] + [ours]
        _write_atomic(conf, set_option(text, "install", "constraint", values))
    lines = []
    if "PIP_CONSTRAINT" in environ:
        lines.append(f"$PIP_CONSTRAINT is set, and pip takes it over every configuration file: add {ours} to it, or "
                     "unset it, to keep the build")
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        lines.append("$PIP_CONFIG_FILE is the null device, so pip reads no configuration file, this environment's "
                     "neither: unset it to keep the build")
    elif env_file and (later := configured("constraint", {}, [Path(env_file)])) and ours not in later.value.split():
        lines.append(f"$PIP_CONFIG_FILE ({env_file}) sets constraint = {later.value}, which replaces the pin: add "
                     f"{ours} to it to keep the build")
    return lines


# -- uv ------------------------------------------------------------------------------------------------------

def uv_config_for(prefix: str) -> Path | None:
    """The uv configuration that keeps the build of this environment: for ``<dir>/.venv``, ``<dir>/pyproject.toml``
    when it has a ``[tool.uv]`` table, else ``<dir>/uv.toml`` (uv finds it when run in ``<dir>``, where it also
    finds ``.venv``); None for any other layout (uv reads no per-environment configuration)."""
    path = Path(prefix)
    if path.name != ".venv":
        return None
    project = path.parent / "pyproject.toml"
    text = _read(str(project)) if project.is_file() else None
    if text is not None and "[tool.uv" in text:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        try:
            if isinstance(tomlkit.parse(text).get("tool", {}).get("uv"), dict):
                return project
        except TOMLKitError:
            return None
    return path.parent / "uv.toml"


def _write_uv_config(path: Path, pins: list[str], names: set[str]) -> list[str]:
    import tomlkit
    from packaging.requirements import InvalidRequirement, Requirement
    from tomlkit.exceptions import TOMLKitError

    text = _read(str(path)) or ""
    try:
        document = tomlkit.parse(text) if text else tomlkit.document()
    except TOMLKitError as exc:
        return [f"{path} is not valid TOML ({exc}); uv's pin was not written"]
    table = document
    if path.name == "pyproject.toml":
        table = document["tool"]["uv"]
    elif not text:
        document.add(tomlkit.comment("uv reads this when run here: torch-install keeps ./.venv's torch build"))

    def ours(entry: object) -> bool:
        try:
            return isinstance(entry, str) and Requirement(entry).name.lower() in names
        except InvalidRequirement:
            return False

    existing = table.get("constraint-dependencies") or []
    kept = [entry for entry in existing if not ours(entry)]
    entries = tomlkit.array()
    entries.multiline(True)
    for entry in [*kept, *pins]:
        entries.append(entry)
    table["constraint-dependencies"] = entries
    _write_atomic(str(path), tomlkit.dumps(document))
    return []


# -- the pin as a whole ----------------------------------------------------------------------------------------

class Written(Record):
    pins: tuple[str, ...]
    lines: tuple[str, ...]  # what to say


def write_pin(prefix: str, pins: list[str], environ: Mapping[str, str] | None = None) -> Written:
    """Write the constraints file and name it in the environment's pip configuration and uv's; what was done."""
    environ = os.environ if environ is None else environ
    if not pins:
        return Written((), ())
    target = constraints_path(prefix)
    try:
        _write_atomic(target, _pin_text(pins))
        lines = [f"pinned {', '.join(pins)}: later pip installs in this environment keep them ({target}, named by "
                 f"{config_path(prefix)})"]
        lines += _write_pip_config(prefix, environ)
        uv = uv_config_for(prefix)
        if uv is not None:
            lines += _write_uv_config(uv, pins, {p.split("==")[0] for p in pins}) or [
                f"uv keeps them too when run in {uv.parent} ({uv}, constraint-dependencies)"]
        else:
            lines.append(f"uv reads no configuration of this environment: export UV_CONSTRAINT={config_value(target)} "
                         "where uv installs into it")
    except OSError as exc:
        raise EnvironmentFailure(f"cannot write the pin into {prefix} ({exc.strerror or exc})") from None
    return Written(tuple(pins), tuple(lines))


class Update(Record):
    """The pin rewritten for a new build before an install, and what to put back if the install fails."""

    before: str | None  # the constraints file as it was
    changed: tuple[str, ...]  # "torch 2.15.0+cpu -> 2.14.1+cpu"


def prepare_update(prefix: str, plan: Plan) -> Update | None:
    """When the environment has a pin of ours that the plan's build would break (another version of a pinned
    package), its constraints file rewritten to the plan's pins before the installer runs, so it does not block its
    own update (None: no pin, or nothing to change). ``restore`` puts it back if the install fails."""
    pins = pinned_versions(prefix)
    if not pins or plan.choice is None:
        return None
    planned = {name: version for name, version in plan.choice.packages.items() if version}
    changed = [f"{name} {pins[name]} -> {version}" for name, version in planned.items()
               if name in pins and pins[name] != version]
    if not changed:
        return None
    before = _read(constraints_path(prefix))
    merged = {**pins, **{name: version for name, version in planned.items() if name in pins or name == "torch"}}
    _write_atomic(constraints_path(prefix), _pin_text(f"{n}=={v}" for n, v in merged.items()))
    return Update(before, tuple(changed))


def restore(prefix: str, update: Update) -> None:
    """Put back the constraints file ``prepare_update`` changed (the install it was changed for failed)."""
    if update.before is not None:
        _write_atomic(constraints_path(prefix), update.before)


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
