"""The build stays installed: a constraints file pinning the torch family to the chosen build (local labels
included), kept inside the environment and named by the environment's own pip configuration, so a later
``pip install torchvision`` (or any package that depends on torch) keeps the chosen build instead of taking a
plain torch from the default index.

Where it lives: ``{prefix}/torch-install-constraints.txt``; ``{prefix}/pip.conf`` (``pip.ini`` on Windows), the
configuration pip reads for that environment only, gets ``[install] constraint = …`` (its other settings are
kept). uv does not read pip's configuration: ``UV_CONSTRAINT`` names the same file. A container image sets
``PIP_CONSTRAINT``/``UV_CONSTRAINT`` instead (``render/container.py``).
"""

from __future__ import annotations

import configparser
import os
import tempfile
from collections.abc import Mapping

from ..errors import EnvironmentFailure
from ..resolver.plan import Plan

CONSTRAINTS_FILE = "torch-install-constraints.txt"
IMAGE_CONSTRAINTS = "/etc/torch-install-constraints.txt"  # in a container image


def constraint_lines(plan: Plan) -> list[str]:
    """``name==version`` for each package of the plan whose version is chosen (an open one is left out)."""
    if plan.choice is None:
        return []
    return [f"{name}=={version}" for name, version in plan.choice.packages.items() if version]


def render_constraints(plan: Plan) -> str:
    """A pip/uv constraints file keeping the chosen build: a comment, then one pin per line."""
    lines = constraint_lines(plan)
    if not lines or plan.choice is None:
        return ""
    head = (f"# torch-install: keeps torch {plan.choice.torch} ({plan.choice.variant}) installed; use with "
            "pip -c FILE, PIP_CONSTRAINT or UV_CONSTRAINT")
    return "\n".join([head, *lines]) + "\n"


def config_path(prefix: str, windows: bool = os.name == "nt") -> str:
    return os.path.join(prefix, "pip.ini" if windows else "pip.conf")


def constraints_path(prefix: str) -> str:
    return os.path.join(prefix, CONSTRAINTS_FILE)


def _write_atomic(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".torch-install-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _read_config(path: str) -> configparser.RawConfigParser:
    config = configparser.RawConfigParser()
    config.optionxform = str  # type: ignore[assignment,method-assign]  # keep the user's keys as written
    try:
        config.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as exc:
        raise EnvironmentFailure(f"{path}: not a pip configuration file this can safely add to ({exc})") from None
    return config


def _inherited_constraints(prefix: str, environ: Mapping[str, str]) -> list[str]:
    """Constraint files pip's other configuration files set (site-wide, user): the environment's own setting
    replaces theirs, so it lists them too."""
    from .pip_config import configured, pip_config_files

    others = [f for f in pip_config_files(environ, prefix) if str(f) != config_path(prefix)
              and not (environ.get("PIP_CONFIG_FILE") and str(f) == environ["PIP_CONFIG_FILE"])]
    return (configured("constraint", environ, others) or "").split()


def write_pin(prefix: str, plan: Plan, environ: Mapping[str, str] | None = None) -> list[str]:
    """Write the constraints file and name it in the environment's pip configuration (keeping every constraint
    file already in force); what was done, as lines."""
    environ = os.environ if environ is None else environ
    text = render_constraints(plan)
    if not text:
        return []
    target = constraints_path(prefix)
    conf = config_path(prefix)
    config = _read_config(conf)
    if not config.has_section("install"):
        config.add_section("install")
    own = config.get("install", "constraint", fallback="").split()
    listed = own or [c for c in _inherited_constraints(prefix, environ) if c != target]
    if target not in listed:
        config.set("install", "constraint", " ".join([*listed, target]))
    try:
        _write_atomic(target, text)
        from io import StringIO

        rendered = StringIO()
        config.write(rendered)
        _write_atomic(conf, rendered.getvalue())
    except OSError as exc:
        raise EnvironmentFailure(f"cannot write the pin into {prefix} ({exc.strerror or exc})") from None
    pins = ", ".join(constraint_lines(plan))
    lines = [f"pinned {pins}: later pip installs in this environment keep them ({target}, named by {conf})",
             f"uv does not read pip's configuration: export UV_CONSTRAINT={target}"]
    if environ.get("PIP_CONSTRAINT"):
        lines.append(f"$PIP_CONSTRAINT is set and replaces the configured constraints; add {target} to it")
    return lines


def pinned_versions(prefix: str) -> dict[str, str] | None:
    """The versions the environment's constraints file pins (None: there is none)."""
    from ..probe import read_regular

    try:
        text = read_regular(constraints_path(prefix), 64 * 1024).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError:
        return {}
    pins: dict[str, str] = {}
    for line in text.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and name and not name.startswith("#"):
            pins[name.strip().lower()] = version.strip()
    return pins


def pin_active(prefix: str) -> bool:
    """Whether the environment's pip configuration names its constraints file."""
    try:
        config = _read_config(config_path(prefix))
    except EnvironmentFailure:
        return False
    return constraints_path(prefix) in config.get("install", "constraint", fallback="").split()


def stale_pins(pins: Mapping[str, str], installed: Mapping[str, str]) -> list[str]:
    """Pins that disagree with what is installed: ``torch==2.9.1+cu128 (installed: 2.10.0+cu130)``."""
    return [f"{name}=={version} (installed: {installed[name]})" for name, version in sorted(pins.items())
            if name in installed and installed[name] != version]
