"""`torch-install install`: resolve for this machine (as `plan` does), print the steps, then install them as one
transaction (``environment/transaction.py``: the lock, the guarded steps, the pin kept or put back)."""

from __future__ import annotations

import argparse
import os

from ..errors import EXIT_OK
from . import common, targets
from .plan import add_request_options, request_from_args, resolve_plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..environment.install import Resolved
    from ..environment.interpreter import Interpreter
    from ..machine import Machine
    from ..resolver.matrix import Matrix
    from ..resolver.plan import Plan, Request


def register(sub: argparse._SubParsersAction) -> None:
    install = sub.add_parser("install", help="resolve for this machine and run pip (or uv)",
                             description="Resolve for this machine and install the pinned packages with pip (or uv). "
                                         "An interrupt is passed on to the installer, never a kill; afterwards a "
                                         "torch it left gone or half-installed is put back from pip's stash, and a "
                                         "failed run says what it changed and how to go back.")
    add_request_options(install)
    install.add_argument("--installer", choices=("pip", "uv"),
                         help="installer to run (default pip; uv for an environment without pip, when uv is on PATH)")
    install.add_argument("--python", metavar="PATH", type=targets.non_empty,
                         help="interpreter to install into (default, as uv: $VIRTUAL_ENV, $CONDA_PREFIX, ./.venv, "
                              "else this one unless it is a pipx or uv tool environment)")
    install.add_argument("--dry-run", action="store_true", help="print the command and exit")
    install.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                         help="before anything runs, check the whole plan with the installer's own resolver against "
                              "your indexes (pip install --dry-run --report, uv pip compile): where it fails, take the "
                              "next candidate build, or stop naming the conflict (exit 4); a hashed lock's build step "
                              "then installs what the build needs with the index's own hashes (default: on, off "
                              "with --dry-run)")
    install.add_argument("--pin", action="store_true",
                         help="after installing, keep the build: write torch-install-constraints.txt into the "
                              "environment and name it in its pip.conf (and uv's configuration beside ./.venv)")
    common.add_lock_timeout_option(install)
    install.set_defaults(func=run_install)


def run_install(args: argparse.Namespace) -> int:
    import shlex

    from ..environment import install
    from ..machine_completion import complete_machine

    interpreter = common.target_interpreter(args.python)
    request = request_from_args(args, interpreter.prefix)  # pip's configuration as the target's own pip reads it
    machine = complete_machine(targets.detect_here(args)._replace(python=interpreter.python))
    if request.python is not None:  # the environment file's Python: the interpreter's is the fact, said if it differs
        from ..machine import environment_python

        note = environment_python(machine, request.python, stated=True)[1]
        request = request._replace(notes=(*request.notes, note)) if note else request
    matrix = common.matrix_for(args, machine, request, interpreter.prefix)
    plan = resolve_plan(machine, request, matrix)
    if plan.choice is None:  # nothing to install: say every reason, then stop (exit 4)
        for warning in plan.warnings:
            common.warn(f"[{warning.code}] {warning.message}")
    _conda_owns_torch(args, interpreter, machine, request)
    installer = install.choose_installer(args.installer, interpreter, dry_run=args.dry_run)
    if plan.choice is not None:  # an externally managed Python is refused before anything runs, the check too
        install.check_installable(plan, interpreter, installer)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="torch-install-") as scratch:  # files a command line cannot carry
        plan, build = _verified(args, plan, machine, matrix, interpreter, installer, scratch)
        steps = install.plan_steps_with_files(plan, interpreter, installer, scratch, need_uv=not args.dry_run,
                                              build=build)
        install.check_installable(plan, interpreter, installer)
        from ..render.plan import choice_lines, note_lines, warning_lines

        for line in choice_lines(plan):  # what is about to be installed, and why, before the installer runs
            common.say(line)
        for line in warning_lines(plan):
            common.warn(line)
        for line in note_lines(plan):  # what was left out of the commands, and why
            common.say(line)
        for argv in steps:
            common.write(shlex.join(argv))
        if any(scratch in arg for argv in steps for arg in argv):
            for name in sorted(n for n in os.listdir(scratch) if any(n in arg for argv in steps for arg in argv)):
                with open(os.path.join(scratch, name), encoding="utf-8") as file:
                    common.say(f"torch-install: {name}, which the command reads:\n" + file.read().rstrip())
        if args.dry_run:
            return EXIT_OK
        from ..environment.transaction import plan_steps, run_transaction

        request = plan.request
        guarded = (*request.packages, *(w.text for w in request.requirements if w.name and not w.constraint))
        outcome = run_transaction(interpreter, plan, plan_steps(plan, steps), guarded, request.index_base,
                                  pin=args.pin, matrix=matrix, lock_timeout=args.lock_timeout, say=common.say)
    for line in outcome.lines:
        common.say(f"torch-install: {line}")
    return outcome.code


def _verified(args: argparse.Namespace, plan: Plan, machine: Machine, matrix: Matrix, interpreter: Interpreter,
              installer: str, scratch: str) -> tuple[Plan, list[Resolved] | None]:
    """With the check (``--verify``; on unless a dry run): the plan the installer's resolver can install (the next
    candidate where it cannot: ``cli/verify.py``), and for a hashed lock what the build's step installs, with the
    index's hashes (None without the check, or when the resolver could not say: a line says so)."""
    from ..environment import install

    if not (args.verify if args.verify is not None else not args.dry_run) or plan.choice is None:
        return plan, None
    from ..environment import verify
    from .verify import verified_plan

    program = install.installer_program(installer, need_uv=not args.dry_run)
    plan = verified_plan(plan, machine, matrix, installer, lambda p: verify.check(
        p, interpreter.executable, installer, scratch, uv=program, prefix=interpreter.prefix))
    if not install.hashed(plan):
        return plan, None
    found = verify.build_packages(plan, interpreter.executable, installer, scratch, uv=program)
    if isinstance(found, str):
        common.warn(f"the build's step installs the family alone, unhashed, and what it needs after the lock: "
                    f"{installer}'s resolver could not say what the build brings ({found})")
        return plan, None
    return plan, found


def _conda_owns_torch(args: argparse.Namespace, interpreter: Interpreter, machine: Machine, request: Request
                      ) -> None:
    """In a conda environment whose torch conda installed, a pip torch is never put over it unasked: without
    --installer the install stops (a dry run warns) and names the conda command for this machine's conda-forge
    build, and --installer pip to replace it knowingly."""
    from ..environment.conda_meta import conda_torch, read_prefix
    from ..errors import EnvironmentFailure

    record = conda_torch(interpreter.prefix, interpreter.site_packages)
    if record is None or args.installer is not None:
        return
    from ..resolver.conda_forge import choose, conda_specs, install_command

    conda = read_prefix(interpreter.prefix or "")
    choice = choose(machine, request).choice
    specs = [s for s in conda_specs(choice) if not s.startswith("python=")] if choice else [record.name]
    command = install_command(specs, interpreter.prefix or "", conda.manager if conda else "conda",
                              conda.pixi_manifest if conda else None)
    message = (f"conda manages torch here: {record.name} {record.version} build {record.build} ({record.path}); a "
               f"pip torch over it would shadow it, and conda would change files under it later.\n"
               f"  conda-forge's build for this machine: {command}"
               + (" (mamba: the same arguments)" if conda is None or conda.manager != "pixi" else "") +
               "\n  to replace it with the PyTorch index's wheel anyway: add --installer pip")
    if args.dry_run:
        common.warn(message)
        return
    raise EnvironmentFailure(message)
