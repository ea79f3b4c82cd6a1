"""Installer command lines, built in one place: a plan's pinned requirements and index options, and the argv of
pip or uv for an interpreter. The plan's ``commands`` (part of the plan JSON), ``install``, the doctor's fixes and
the Dockerfile step all build their commands here.

Every command pins the exact version with its local label (``torch==2.9.1+cu128``), so an installer can neither
keep an installed build of another flavour nor pull one from another index.
"""

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # plan.py imports this module for Plan.commands
    from .plan import Plan

PRE_RELEASE_CHANNEL = "nightly"  # the channel whose builds are pre-releases: pip --pre, uv --prerelease allow
INSTALLERS = ("pip", "uv")


def requirement_lines(plan: "Plan") -> list[str]:
    """One pinned requirement per chosen package: ``name==version`` (bare name when the version is open)."""
    if plan.choice is None:
        return []
    return [f"{name}=={version}" if version else name for name, version in plan.choice.packages.items()]


def install_args(plan: "Plan", installer: str = "pip") -> list[str]:
    """Arguments after ``pip install`` / ``uv pip install``: pins, pre-release switch, index."""
    args = requirement_lines(plan)
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        args += ["--pre"] if installer == "pip" else ["--prerelease", "allow"]
    if plan.choice is not None and plan.choice.index_url:
        args += ["--index-url", plan.choice.index_url]
    return args


def installer_argv(installer: str, action: str, args: Sequence[str], python: str | None = None,
                   uv: str = "uv") -> list[str]:
    """``python -m pip ACTION ARGS`` for pip (``python`` defaults to the bare name), ``uv pip ACTION --python
    PYTHON ARGS`` for uv (no ``--python`` when none is given: uv finds the environment itself)."""
    if installer == "uv":
        return [uv, "pip", action, *(["--python", python] if python else []), *args]
    return [python or "python", "-m", "pip", action, *args]


def command_lines(plan: "Plan") -> dict[str, str]:
    """Ready command lines ``{"pip": ..., "uv": ...}`` (shell-quoted, POSIX rules); empty without a choice."""
    if plan.choice is None:
        return {}
    return {installer: shlex.join(installer_argv(installer, "install", install_args(plan, installer)))
            for installer in INSTALLERS}
