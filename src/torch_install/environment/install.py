"""Carry out a plan: run pip (or uv) for one Python interpreter, safely.

Safety rules:
- the installer runs without a shell, its argv built from the plan; its own progress goes straight to
  the terminal (its input is not the terminal: credentials come from netrc or a keyring, as in CI);
- one installer run installs every pinned package (``torch==2.9.1+cu128`` …) with its dependencies, and
  nothing is uninstalled first;
- an interrupt (Ctrl-C, SIGINT or SIGTERM to torch-install) is passed on to the installer once, as SIGINT,
  and torch-install waits for it to stop: it is never killed, since a killed pip leaves torch half-installed;
- afterwards the guarded distributions (``guard``: the torch family and every package requested) are
  compared with what was there before: one that is gone or incomplete is put back from pip's stash, and a
  failed run says exactly what it changed and the commands that return to the previous versions;
- an externally managed Python (PEP 668) is refused, with the virtual-environment commands to use instead.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Sequence

from ..errors import EXIT_INTERRUPTED, EnvironmentFailure, InputError, NoBuild
from ..records import Record
from ..resolver.commands import INSTALLERS, installer_argv
from ..resolver.plan import Plan
from ..resolver.steps import (
    BUILD_STEP_OPTIONS,
    Inexpressible,
    family_extras,
    file_options,
    install_args,
    install_steps,
    named_lines,
    passthrough,
    pins_for_ride_along,
    requirement_lines,
    ride_along_args,
    source_build_args,
    torch_step_options,
    unhashed,
)
from .dists import Dist
from .interpreter import MARKER, Interpreter

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from threading import Thread
    from typing import IO, TextIO

    from .lock import Lock


class Resolved(Record):
    """One distribution an installer's resolver chose (``verify.build_packages``): its canonical name, version and
    the sha256 digests of its file (``sha256:…``)."""

    name: str
    version: str
    hashes: tuple[str, ...] = ()


def venv_advice(plan: Plan, installer: str = "pip") -> list[str]:
    """The commands to use instead of installing into an externally managed Python."""
    if installer == "uv":
        return ["uv venv .venv", shlex.join(installer_argv("uv", "install", install_args(plan, "uv"), ".venv"))]
    return ["python3 -m venv .venv",
            shlex.join(installer_argv("pip", "install", install_args(plan, "pip"), ".venv/bin/python")),
            "(on Windows the interpreter is .venv\\Scripts\\python.exe)"]


def choose_installer(asked: str | None, interpreter: Interpreter, dry_run: bool = False) -> str:
    """The installer: the one asked for; else pip, or uv when the environment has no pip (a venv made by uv) and
    uv is on PATH. pip (asked for, or the default) without pip in the environment is an EnvironmentFailure saying
    how to add it; a dry run prints the pip command with that advice as a warning."""
    import shutil

    if asked == "uv" or interpreter.has_pip:
        return asked or "pip"
    if asked is None and shutil.which("uv"):
        sys.stderr.write(f"torch-install: note: {interpreter.executable} has no pip; installing with uv\n")
        return "uv"
    advice = (f"{interpreter.executable} has no pip: add it with "
              f"`{shlex.join([interpreter.executable, '-m', 'ensurepip'])}`, or use --installer uv")
    if dry_run:
        sys.stderr.write(f"torch-install: warning: {advice}\n")
        return "pip"
    raise EnvironmentFailure(advice)


def ride_along_files(plan: Plan) -> tuple[str, str]:
    """What rides along as files an installer reads, for where a command line cannot carry it (``--hash``
    options): (a requirements file: every line written out with its hashes and its file's options, the files given
    as they are (``-r``/``-c`` with absolute paths), the requested packages from elsewhere (with the lock's hashes of
    the version chosen); a constraints file: the chosen build's pins, which need no hash there)."""
    if plan.choice is None:
        return "", ""
    request = plan.request
    given = {f.path for f in passthrough(plan)}
    taken = {p.name for p in plan.choice.companions}
    lines = [f"{option.option}{f' {option.value}' if option.value is not None else ''}" for option in request.options
             if option.file not in given]
    hashed = {}
    for wanted in request.requirements:
        if wanted.name in taken and wanted.hashes:
            hashed[wanted.name] = wanted
        if wanted.file in given or wanted.constraint or wanted.name in taken:
            continue
        text = f"-e {wanted.text}" if wanted.editable else wanted.text
        lines.append(" ".join([text, *(f"--hash={h}" for h in wanted.hashes)]))
    lines += [f"{'-c' if f.constraint else '-r'} {os.path.abspath(f.path)}" for f in passthrough(plan)]
    for picked in plan.choice.companions:
        if picked.kind in ("default", "find-links", "url"):
            locked = hashed.get(picked.name)
            same = locked is not None and picked.version is not None and f"=={picked.version}" in locked.text
            lines.append(" ".join([picked.requirement, *(f"--hash={h}" for h in (locked.hashes if same and locked
                                                                                  else ()))]))
            if picked.url:
                lines.append(f"--find-links {picked.url}")
    lines += [f"{name}{extras}" for name, extras in family_extras(plan).items()]  # versions: the constraints
    return "\n".join(lines) + "\n", "\n".join(pins_for_ride_along(plan, with_extras=False)) + "\n"


def hashed(plan: Plan) -> bool:
    """Whether what rides along has ``--hash`` options (a hashed lock): then it installs from files, each package
    with its hash (``hashed_steps``)."""
    try:
        ride_along_args(plan)
    except Inexpressible:
        return True
    return False


def write_step_file(directory: str, name: str, text: str) -> str:
    """Write what a step (or the check before the steps) reads into its temporary ``directory``; its path."""
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    return path


def plan_steps_with_files(plan: Plan, interpreter: Interpreter, installer: str, directory: str,
                          need_uv: bool = True, build: Sequence[Resolved] | None = None) -> list[list[str]]:
    """``plan_steps``; where a command line cannot carry what rides along (its ``--hash`` options), the steps of
    ``hashed_steps``, which read files written into ``directory``."""
    if not hashed(plan):
        return plan_steps(plan, interpreter, installer, need_uv)
    return hashed_steps(plan, interpreter, installer, directory, need_uv, build)


def hashed_steps(plan: Plan, interpreter: Interpreter, installer: str, directory: str, need_uv: bool = True,
                 build: Sequence[Resolved] | None = None) -> list[list[str]]:
    """The steps of a plan whose other packages carry hashes (a hashed lock), so that no package of the lock is
    installed without its hash:

    1. the build's own step, ``--no-deps``: with ``build`` (what the installer's resolver says the build brings,
       ``verify.build_packages``), the family and what it needs that the lock does not pin, each with the index's
       own hash (``--require-hashes``); without it, the family alone, unhashed;
    2. the lock's other packages, torch's own dependencies included, with their hashes (``--require-hashes``), the
       chosen build as constraints (``ride_along_files``; for uv with the index's hashes of ``build``, since uv wants
       one for the installed torch a lock's package depends on; without them uv checks the lock's hashes without
       requiring one of every package);
    3. without ``build`` only: the build again with its dependencies, the lock's versions as constraints, so that
       what the build needs and the lock does not pin (another CUDA's libraries) comes from the build's index;
    4. what builds from source."""
    assert plan.choice is not None
    program = installer_program(installer, need_uv)
    requirements, constraints = ride_along_files(plan)
    if installer == "uv" and build is not None:  # uv wants a trusted hash for the installed build a lock's package
        # depends on (vLLM: torch), and reads one in a constraints file
        digests = {f"{r.name}=={r.version}": r.hashes for r in build}
        constraints = "".join(" ".join([pin, *(f"--hash={h}" for h in digests.get(pin, ()))]) + "\n"
                              for pin in constraints.splitlines())
    lock = write_step_file(directory, "requirements.txt", requirements)
    chosen = write_step_file(directory, "chosen-build.txt", constraints)
    pins = requirement_lines(plan)
    index = install_args(plan, installer)[len(pins):]  # the pre-release switch and the build's index
    options = plan.request.installer_options
    own = [*index, *file_options(plan, BUILD_STEP_OPTIONS), *(torch_step_options(options) if plan.choice.index_url
                                                              else options)]
    locked = {w.name: w for w in plan.request.requirements if w.name and not w.constraint and not w.editable}
    steps: list[list[str]] = []
    if build is not None:
        ours = dict.fromkeys([*plan.choice.packages, *(p.name for p in plan.choice.from_index())])
        order = list(ours)  # the family and the build's packages first, then what they need, as resolved
        chosen_files = sorted((r for r in build if r.name in ours or r.name not in locked),
                              key=lambda r: order.index(r.name) if r.name in order else len(order))
        files = [" ".join([f"{r.name}=={r.version}", *(f"--hash={h}" for h in r.hashes)]) for r in chosen_files]
        steps.append(["-r", write_step_file(directory, "build-files.txt", "\n".join(files) + "\n"), "--no-deps",
                      "--require-hashes", *own])
    else:
        steps.append([*pins, "--no-deps", *own])
    # uv checks the hashes a file gives in any case; it requires one of the installed build too, which a lock's
    # package that depends on torch reaches, and only the resolved build has (in the constraints, above)
    required = ["--require-hashes"] if installer == "pip" or build is not None else []
    steps.append(["-r", lock, "-c", chosen, *required, *options])
    if build is None:
        versions = [w.text for w in plan.request.requirements if w.name in locked and "==" in w.text]
        steps.append([*pins, *own, "-c", write_step_file(directory, "locked-versions.txt",
                                                         "\n".join(versions) + "\n")])
    if source_build_args(plan):
        steps.append(source_build_args(plan))
    return [installer_argv(installer, "install", step, interpreter.executable, uv=program) for step in steps]


def installer_program(installer: str, need_uv: bool = True) -> str:
    """The uv to run (found on PATH; without ``need_uv``, a dry run, plain ``uv`` when there is none); "uv" for pip,
    which runs as ``python -m pip``."""
    if installer != "uv":
        return "uv"
    import shutil

    found = shutil.which("uv")
    if found is None and need_uv:
        raise EnvironmentFailure("uv not found on PATH; install it or use --installer pip")
    return found or "uv"


def plan_steps(plan: Plan, interpreter: Interpreter, installer: str = "pip", need_uv: bool = True
               ) -> list[list[str]]:
    """The exact argv of each step that installs the plan into ``interpreter`` (``resolver.steps.install_steps``:
    the chosen build from its index, then what rides along from the user's own index).

    uv is looked up on PATH; without ``need_uv`` (a dry run) a missing uv is written as plain ``uv``.
    """
    if plan.choice is None:
        raise NoBuild("nothing to install: no build fits this machine (see 'torch-install plan')")
    if installer not in INSTALLERS:
        raise InputError(f"--installer {installer}: not one of {', '.join(INSTALLERS)}")
    uv = installer_program(installer, need_uv)
    return [installer_argv(installer, "install", step, interpreter.executable, uv=uv)
            for step in install_steps(plan, installer)]


def check_installable(plan: Plan, interpreter: Interpreter, installer: str = "pip") -> None:
    """Refuse, before anything runs, what the installer would refuse: a hashed lock with a line without a hash
    (pip's hash-checking mode refuses the whole file), an externally managed Python (naming the commands to use
    instead)."""
    missing = unhashed(plan.request.requirements)
    if missing:
        raise InputError(f"the hashed lock has {len(missing)} line{'s' if len(missing) > 1 else ''} without --hash "
                         f"({named_lines(missing)}): pip's hash-checking mode refuses it; nothing was installed")
    if interpreter.externally_managed:
        marker = os.path.join(interpreter.stdlib, MARKER)
        lines = [f"{interpreter.executable} is externally managed ({marker} exists, PEP 668); "
                 "install into a virtual environment instead:"]
        raise EnvironmentFailure("\n".join(lines + [f"  {line}" for line in venv_advice(plan, installer)]))


# uv's own index variables: an index they name is searched before the command's --default-index, so the step
# that installs the chosen build from its index runs without them
UV_INDEX_VARIABLES = ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX")


def run_installer(argv: list[str], interpreter: Interpreter | None = None, packages: Sequence[str] = ("torch",),
                  index_base: str = "", own_index: bool = False, lock: Lock | None = None) -> int:
    """Run the installer (its progress on this terminal) and check the guarded distributions afterwards: 0, 130
    when interrupted, or EnvironmentFailure saying what changed and how to go back. ``lock``: the environment's
    lock, which the installer holds too while it runs (so that it outlives a torch-install that is killed)."""
    from . import guard

    names = guard.guarded_names(packages)
    site = interpreter.site_packages if interpreter else ()
    before = guard.snapshot(site, names)
    stale = guard.stale_stashes(site, names)
    if stale:
        sys.stderr.write("torch-install: warning: pip's stash from an earlier install that was stopped is still "
                         f"there: {', '.join(stale)}; 'torch-install doctor' says whether what is installed is "
                         "whole (the stash is safe to delete once it is)\n")
    sys.stdout.flush()
    sys.stderr.flush()
    environ = None
    if own_index and os.path.basename(argv[0]).startswith("uv"):
        environ = {k: v for k, v in os.environ.items() if k not in UV_INDEX_VARIABLES}
    returncode, interrupted = _run_passing_on_interrupts(argv, environ, lock)
    outcome = guard.compare(before, site, names)
    restored: list[tuple[Dist, str]] = []
    unrestored: list[tuple[Dist, str]] = []
    for dist in outcome.lost:
        done, what = guard.restore(dist)
        (restored if done else unrestored).append((dist, what))
    if restored:
        outcome = guard.compare(before, site, names)
    installer = "uv" if os.path.basename(argv[0]).startswith("uv") else "pip"
    python = interpreter.executable if interpreter else "python"
    lines = [what for _, what in restored]
    if unrestored:
        lines += [f"{dist.name} {dist.version} is gone or incomplete: {why}" for dist, why in unrestored]
        lines += ["to install it again: " + cmd for cmd in guard.reinstall_commands(
            (d for d, _ in unrestored), python, index_base)]
    if outcome.changes and (returncode != 0 or interrupted):
        lines.append("changed: " + ", ".join(f"{c.name} {c.before or '(none)'} -> {c.after or '(removed)'}"
                                             for c in outcome.changes))
        back = [before[c.name] for c in outcome.changes if c.name in before]
        lines += ["to return to what was installed before: " + cmd
                  for cmd in guard.reinstall_commands(back, python, index_base)]
    if outcome.leftovers and not unrestored:
        lines.append("pip's stash of the old files is left at " + ", ".join(outcome.leftovers)
                     + " (safe to delete)")
    if interrupted:
        head = f"interrupted; {installer} stopped (exit code {returncode})"
        if not outcome.changes and not unrestored:
            head += "; the packages installed before it ran are unchanged"
        sys.stderr.write("torch-install: " + "\n  ".join([head, *lines]) + "\n")
        return EXIT_INTERRUPTED
    if returncode != 0:
        head = f"{installer} failed (exit code {returncode})"
        if not outcome.changes and not unrestored:
            head += "; the packages installed before it ran are unchanged"
        raise EnvironmentFailure("\n  ".join([head, *lines]))
    for line in lines:
        sys.stderr.write(f"torch-install: note: {line}\n")
    return 0


def _run_passing_on_interrupts(argv: list[str], environ: dict[str, str] | None = None,
                               lock: Lock | None = None) -> tuple[int, bool]:
    """Run ``argv`` to its end: (exit code, whether torch-install was interrupted). On POSIX the installer runs
    in its own process group, so the terminal's Ctrl-C reaches torch-install alone, which passes one SIGINT on.
    It inherits the lock's descriptor, and is named in the lock file as its holder."""
    import signal
    import subprocess

    posix = os.name == "posix"
    group: dict[str, object] = {}
    if posix:
        group = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}
    sys.stdout.flush()  # what torch-install printed comes before the installer's output
    sys.stderr.flush()
    # an installer given a credential may print it (pip's "Collecting torch@ https://user:pass@…"): its output is
    # then read through a pipe and written on redacted, line by line; else it has this terminal, progress bars too
    piped = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE} if carries_secret(argv) else {}
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL if posix else None, env=environ,  # type: ignore[call-overload]
                                 pass_fds=lock.fds if lock is not None else (), **group, **piped)
    except OSError as exc:
        raise EnvironmentFailure(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    passing = [_pass_on_redacted(child.stdout, sys.stdout), _pass_on_redacted(child.stderr, sys.stderr)] \
        if piped else []
    if lock is not None:
        lock.holder("installer", child.pid)
    received: list[int] = []

    def on_interrupt(signum: int, _frame: object) -> None:
        received.append(signum)
        if len(received) == 1:
            sys.stderr.write("torch-install: interrupted: asking the installer to stop, and waiting for it "
                             "(torch is checked afterwards)\n")
            if posix:
                with contextlib.suppress(OSError):  # already gone
                    os.killpg(child.pid, signal.SIGINT)
        else:
            sys.stderr.write("torch-install: still waiting for the installer to stop (it is never killed: a killed "
                             "installer leaves torch half-installed)\n")

    previous = {s: signal.signal(s, on_interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        returncode = child.wait()
        for thread in passing:
            thread.join()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return returncode, bool(received)


STEP_FILE_LIMIT = 1 << 20  # a file a step reads that is larger is not searched for credentials (it is no step file)


def carries_secret(argv: Sequence[str]) -> bool:
    """Whether a credential is on the command line or in a small file it names (a step's requirements or
    constraints file): what the installer may print back."""
    from ..display import redact

    for arg in argv:
        if redact(arg) != arg:
            return True
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if os.path.isfile(arg) and os.path.getsize(arg) <= STEP_FILE_LIMIT:
                with open(arg, encoding="utf-8") as file:
                    text = file.read()
                if redact(text) != text:
                    return True
    return False


def _pass_on_redacted(source: IO[bytes] | None, target: TextIO) -> Thread:
    """A thread writing each line of the child's pipe ``source`` on to ``target`` with its credentials masked."""
    import threading

    from ..display import redact

    def pass_on() -> None:
        writing = True
        for raw in source or ():  # read to the end, even where the output is gone: the child never blocks
            if writing:
                try:
                    target.write(redact(raw.decode("utf-8", "replace")))
                    target.flush()
                except (OSError, ValueError):  # a full disk, a closed stream: what the product prints says so
                    writing = False

    thread = threading.Thread(target=pass_on, daemon=True)
    thread.start()
    return thread
