"""Carry out a plan: run pip (or uv) for one Python interpreter, safely.

Safety rules:
- the installer runs without a shell, its argv built from the plan; its own progress goes straight to
  the terminal;
- one installer transaction installs every pinned package (``torch==2.9.1+cu128`` …) with its
  dependencies, and nothing is uninstalled first: if the install fails, pip rolls back and the torch that
  was installed before is still there;
- an externally managed Python (PEP 668) is refused, with the virtual-environment commands to use instead.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from .errors import EnvironmentFailure, InputError, NoBuild
from .interpreter import MARKER, Interpreter
from .resolver.commands import INSTALLERS, installer_argv
from .resolver.plan import Plan, install_args


def venv_advice(plan: Plan, installer: str = "pip") -> list[str]:
    """The commands to use instead of installing into an externally managed Python."""
    if installer == "uv":
        return ["uv venv .venv", shlex.join(installer_argv("uv", "install", install_args(plan, "uv"), ".venv"))]
    return ["python3 -m venv .venv",
            shlex.join(installer_argv("pip", "install", install_args(plan, "pip"), ".venv/bin/python")),
            "(on Windows the interpreter is .venv\\Scripts\\python.exe)"]


def plan_argv(plan: Plan, interpreter: Interpreter, installer: str = "pip", need_uv: bool = True) -> list[str]:
    """The exact argv that installs the plan's pinned packages into ``interpreter``.

    uv is looked up on PATH; without ``need_uv`` (a dry run) a missing uv is written as plain ``uv``.
    """
    if plan.choice is None:
        raise NoBuild("nothing to install: no build fits this machine (see 'torch-install plan')")
    if installer not in INSTALLERS:
        raise InputError(f"--installer {installer}: not one of {', '.join(INSTALLERS)}")
    uv = "uv"
    if installer == "uv":
        import shutil

        found = shutil.which("uv")
        if found is None and need_uv:
            raise EnvironmentFailure("uv not found on PATH; install it or use --installer pip")
        uv = found or "uv"
    return installer_argv(installer, "install", install_args(plan, installer), interpreter.executable, uv=uv)


def check_installable(plan: Plan, interpreter: Interpreter, installer: str = "pip") -> None:
    """Refuse an externally managed Python, naming the commands to use instead."""
    if interpreter.externally_managed:
        marker = os.path.join(interpreter.stdlib, MARKER)
        lines = [f"{interpreter.executable} is externally managed ({marker} exists, PEP 668); "
                 "install into a virtual environment instead:"]
        raise EnvironmentFailure("\n".join(lines + [f"  {line}" for line in venv_advice(plan, installer)]))


def run_installer(argv: list[str]) -> int:
    """Run the installer with this terminal's stdout/stderr (its own progress shows); 0 or EnvironmentFailure."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        returncode = subprocess.run(argv, check=False).returncode
    except OSError as exc:
        raise EnvironmentFailure(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if returncode != 0:
        if os.path.basename(argv[0]).startswith("uv"):
            raise EnvironmentFailure(f"uv failed (exit code {returncode})")
        raise EnvironmentFailure(f"pip failed (exit code {returncode}); pip rolled its transaction back, "
                                 "so the packages installed before are unchanged")
    return 0
