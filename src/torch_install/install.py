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

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .child_process import run_captured
from .errors import EnvironmentFailure, InputError
from .resolver.plan import Plan
from .resolver.render import install_args

INSTALLERS = ("pip", "uv")
QUERY_TIMEOUT = 30.0
MARKER = "EXTERNALLY-MANAGED"

# Printed by the target interpreter: what we need to know about it, as one JSON object.
_QUERY = (
    "import json, sys, sysconfig\n"
    "print(json.dumps({'executable': sys.executable, 'version': '%d.%d' % sys.version_info[:2],\n"
    "  'free_threaded': bool(sysconfig.get_config_var('Py_GIL_DISABLED')),\n"
    "  'stdlib': sysconfig.get_path('stdlib'), 'in_venv': sys.prefix != sys.base_prefix}))\n"
)


@dataclass(frozen=True)
class Interpreter:
    """The Python environment to install into."""

    executable: str
    python: str  # "3.12", free-threaded "3.13t"
    stdlib: str  # directory that holds the EXTERNALLY-MANAGED marker, if any
    in_venv: bool


def _interpreter_from(data: dict[str, object]) -> Interpreter:
    suffix = "t" if data["free_threaded"] else ""
    return Interpreter(executable=str(data["executable"]), python=f"{data['version']}{suffix}",
                       stdlib=str(data["stdlib"]), in_venv=bool(data["in_venv"]))


def this_interpreter() -> Interpreter:
    """The interpreter running torch-install."""
    import sysconfig

    suffix = "t" if sysconfig.get_config_var("Py_GIL_DISABLED") else ""
    return Interpreter(executable=sys.executable, python=f"{sys.version_info[0]}.{sys.version_info[1]}{suffix}",
                       stdlib=sysconfig.get_path("stdlib"), in_venv=sys.prefix != sys.base_prefix)


def query_interpreter(path: str) -> Interpreter:
    """Ask the interpreter at ``path`` (``--python PATH``) about itself; a bad path is an InputError."""
    if not Path(path).is_file():
        raise InputError(f"--python {path}: no such file")
    try:
        done = run_captured([path, "-I", "-c", _QUERY], QUERY_TIMEOUT)  # stdin at EOF: a wrapper reading it won't wait
    except OSError as exc:
        raise InputError(f"--python {path}: cannot run it ({exc.strerror or exc})") from None
    if done.timed_out:
        raise InputError(f"--python {path}: did not answer within {QUERY_TIMEOUT:.0f} s")
    try:
        return _interpreter_from(json.loads(done.stdout.strip().splitlines()[-1]))
    except (IndexError, ValueError, KeyError, TypeError):
        raise InputError(f"--python {path}: not a Python 3 interpreter (exit code {done.returncode})") from None


def externally_managed(interpreter: Interpreter) -> bool:
    """PEP 668: the stdlib directory holds EXTERNALLY-MANAGED and the interpreter is not in a venv."""
    return not interpreter.in_venv and (Path(interpreter.stdlib) / MARKER).is_file()


def venv_advice(plan: Plan, installer: str = "pip") -> list[str]:
    """The commands to use instead of installing into an externally managed Python."""
    if installer == "uv":
        install = shlex.join(["uv", "pip", "install", "--python", ".venv", *install_args(plan, "uv")])
        return ["uv venv .venv", install]
    return ["python3 -m venv .venv",
            shlex.join([".venv/bin/python", "-m", "pip", "install", *install_args(plan, "pip")]),
            "(on Windows the interpreter is .venv\\Scripts\\python.exe)"]


def installer_argv(plan: Plan, interpreter: Interpreter, installer: str = "pip", need_uv: bool = True) -> list[str]:
    """The exact argv that installs the plan's pinned packages into ``interpreter``.

    uv is looked up on PATH; without ``need_uv`` (a dry run) a missing uv is written as plain ``uv``.
    """
    if plan.choice is None:
        raise EnvironmentFailure("nothing to install: no build fits this machine (see 'torch-install plan')")
    if installer == "pip":
        return [interpreter.executable, "-m", "pip", "install", *install_args(plan, "pip")]
    if installer == "uv":
        import shutil

        uv = shutil.which("uv") or (None if need_uv else "uv")
        if uv is None:
            raise EnvironmentFailure("uv not found on PATH; install it or use --installer pip")
        return [uv, "pip", "install", "--python", interpreter.executable, *install_args(plan, "uv")]
    raise InputError(f"--installer {installer}: not one of {', '.join(INSTALLERS)}")


def check_installable(plan: Plan, interpreter: Interpreter, installer: str = "pip") -> None:
    """Refuse an externally managed Python, naming the commands to use instead."""
    if externally_managed(interpreter):
        marker = Path(interpreter.stdlib) / MARKER
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
        if Path(argv[0]).name.startswith("uv"):
            raise EnvironmentFailure(f"uv failed (exit code {returncode})")
        raise EnvironmentFailure(f"pip failed (exit code {returncode}); pip rolled its transaction back, "
                                 "so the packages installed before are unchanged")
    return 0
