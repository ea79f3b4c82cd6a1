"""The Python environment a command acts on: its interpreter's version, import path, site directories and
whether it is a virtual environment, asked of that interpreter itself (``interpreter_facts.py``).

Another interpreter (``--python PATH``) is run as ``PATH -I -S interpreter_facts.py`` with a time limit and no
shell: ``-S`` keeps the inspected environment's ``.pth`` files and ``sitecustomize`` from running, so nothing
of its packages executes and nothing they print reaches the answer. The running interpreter answers in-process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from .child_process import run_captured
from .errors import InputError

FACTS_TIMEOUT = 10.0
MARKER = "EXTERNALLY-MANAGED"  # PEP 668


@dataclass(frozen=True)
class Interpreter:
    """A Python interpreter and its environment."""

    executable: str
    version: str  # "3.12.4"
    implementation: str = "cpython"
    free_threaded: bool = False
    system: str = ""  # Linux, Windows, Darwin
    machine: str = ""  # x86_64, aarch64, AMD64, arm64
    path: tuple[str, ...] = ()  # the import path as `import torch` would walk it
    site_packages: tuple[str, ...] = ()
    user_site: str | None = None
    user_site_active: bool = False
    prefix: str = ""
    base_prefix: str = ""
    stdlib: str = ""  # the standard library directory (where a PEP 668 marker lives)

    @property
    def python(self) -> str:
        """Profile form: "3.12", free-threaded "3.13t"."""
        major_minor = ".".join(self.version.split(".")[:2])
        return major_minor + ("t" if self.free_threaded else "")

    @property
    def in_venv(self) -> bool:
        return self.prefix != self.base_prefix

    @property
    def externally_managed(self) -> bool:
        """PEP 668: the stdlib directory holds EXTERNALLY-MANAGED and the interpreter is not in a venv."""
        return not self.in_venv and bool(self.stdlib) and os.path.isfile(os.path.join(self.stdlib, MARKER))


def this_interpreter(environ: Mapping[str, str] | None = None) -> Interpreter:
    """The running interpreter: its import path exactly as it is now."""
    from . import interpreter_facts

    return interpreter_from_facts(interpreter_facts.collect(), environ if environ is not None else os.environ)


def query_interpreter(python: str, environ: Mapping[str, str] | None = None,
                      timeout: float | None = None) -> Interpreter:
    """Ask another interpreter for its facts (``python -I -S script``); a bad one is an InputError naming it."""
    from . import interpreter_facts

    timeout = FACTS_TIMEOUT if timeout is None else timeout
    if not python:
        raise InputError("--python: empty path")
    if not os.path.exists(python):
        raise InputError(f"--python {python}: no such file")
    if os.path.isdir(python):
        raise InputError(f"--python {python}: is a directory, expected a Python interpreter (e.g. {python}/bin/python)")
    argv = [python, "-I", "-S", os.path.abspath(interpreter_facts.__file__)]
    try:
        done = run_captured(argv, timeout)
    except OSError as exc:
        raise InputError(f"--python {python}: cannot run it ({exc.strerror or exc})") from None
    if done.timed_out:
        raise InputError(f"--python {python}: did not answer within {timeout:g} s (killed)")
    try:
        facts = json.loads(done.stdout)
        if not isinstance(facts, dict) or not isinstance(facts.get("path"), list):
            raise ValueError("unexpected answer")
    except (ValueError, RecursionError):
        detail = done.stderr.strip().splitlines()
        why = f": {detail[-1][:160]}" if detail else f" (exit code {done.returncode})"
        raise InputError(f"--python {python}: not a Python 3 interpreter{why}") from None
    return interpreter_from_facts(facts, environ if environ is not None else os.environ)


def _strings(value: object) -> list[str]:
    return [str(p) for p in value if p] if isinstance(value, list) else []


def interpreter_from_facts(facts: Mapping[str, object], environ: Mapping[str, str]) -> Interpreter:
    """Turn the facts into the import path a normal (non ``-I``) run of that interpreter would have."""
    path = _strings(facts.get("path"))
    site_packages = tuple(_strings(facts.get("site_packages")))
    user_site = facts.get("user_site")
    user_site = str(user_site) if isinstance(user_site, str) and user_site else None
    user_active = bool(facts.get("user_site_allowed")) and not environ.get("PYTHONNOUSERSITE")
    if facts.get("isolated"):
        # -I left out PYTHONPATH and the user site; put them where a normal start would.
        extra = [p for p in (environ.get("PYTHONPATH") or "").split(os.pathsep) if p]
        path = extra + path
        if user_active and user_site and user_site not in path and os.path.isdir(user_site):
            first_site = next((i for i, p in enumerate(path) if p in site_packages), len(path))
            path.insert(first_site, user_site)
    else:
        user_active = bool(user_site and user_site in path)
    return Interpreter(
        executable=str(facts.get("executable") or ""),
        version=str(facts.get("version") or "0.0"),
        implementation=str(facts.get("implementation") or "cpython"),
        free_threaded=bool(facts.get("free_threaded")),
        system=str(facts.get("system") or ""),
        machine=str(facts.get("machine") or ""),
        path=tuple(dict.fromkeys(path)),
        site_packages=site_packages,
        user_site=user_site,
        user_site_active=user_active,
        prefix=str(facts.get("prefix") or ""),
        base_prefix=str(facts.get("base_prefix") or facts.get("prefix") or ""),
        stdlib=str(facts.get("stdlib") or ""),
    )
