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

from ..child_process import run_captured
from ..errors import InputError
from ..records import Record

FACTS_TIMEOUT = 10.0
MARKER = "EXTERNALLY-MANAGED"  # PEP 668


class Interpreter(Record):
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
    def python_full(self) -> str | None:
        """The patch release ("3.12.4"; None when the version is not one)."""
        from ..machine import python_patch_release

        return python_patch_release(self.version)

    @property
    def in_venv(self) -> bool:
        return self.prefix != self.base_prefix

    @property
    def has_pip(self) -> bool:
        """Whether pip is installed in the environment (a venv made by uv has none)."""
        return any(os.path.isfile(os.path.join(site, "pip", "__init__.py")) for site in self.site_packages)

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


# ---- which environment a command acts on ------------------------------------------------------------------------

TOOL_MARKERS = ("pipx_metadata.json", "uv-receipt.toml")  # what pipx and `uv tool install` leave in their venvs


def environment_python(prefix: str) -> str:
    """The interpreter of an environment directory (a venv or a conda env), POSIX or Windows layout."""
    for candidate in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        path = os.path.join(prefix, *candidate.split("/"))
        if os.path.isfile(path):
            return path
    return os.path.join(prefix, "bin", "python")


def isolated_tool_environment(prefix: str) -> str | None:
    """The tool (pipx, uv tool) whose own environment ``prefix`` is, or None."""
    for marker, tool in zip(TOOL_MARKERS, ("pipx", "uv tool"), strict=True):
        if os.path.isfile(os.path.join(prefix, marker)):
            return tool
    return None


def _same_prefix(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def target_environment(python: str | None, environ: Mapping[str, str], cwd: str, running_prefix: str
                       ) -> tuple[str | None, str]:
    """Which interpreter ``install`` and ``doctor`` act on, as uv chooses: ``--python``, else the active virtual
    environment (``$VIRTUAL_ENV``), else an active conda environment (``$CONDA_PREFIX``), else ``./.venv``, else
    the interpreter running torch-install unless that is a tool's own isolated environment (then an InputError
    naming the flags). Returns (the interpreter, None for the running one; where the choice came from)."""
    if python is not None:
        return python, "--python"
    for name, prefix in (("$VIRTUAL_ENV", environ.get("VIRTUAL_ENV")), ("$CONDA_PREFIX", environ.get("CONDA_PREFIX")),
                         ("./.venv", os.path.join(cwd, ".venv"))):
        if not prefix or not os.path.isdir(prefix):
            if prefix and name != "./.venv":
                raise InputError(f"{name}={prefix}: no such environment (deactivate it, or name one with --python)")
            continue
        if _same_prefix(prefix, running_prefix):
            return None, name
        found = environment_python(prefix)
        if not os.path.isfile(found):
            if name == "./.venv":
                continue
            raise InputError(f"{name}={prefix}: no Python interpreter in it (name one with --python)")
        return found, name
    tool = isolated_tool_environment(running_prefix)
    if tool:
        raise InputError(f"torch-install runs in its own {tool} environment ({running_prefix}), which is not where "
                         "torch belongs: name the environment with --python PATH, activate it, or run where "
                         "./.venv is")
    return None, "this interpreter"
