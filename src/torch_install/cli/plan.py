"""`torch-install plan` (the default command) and `torch-install install`."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ..errors import EXIT_NO_BUILD, EXIT_OK, EXIT_WARNINGS, InputError
from ..resolver.request import CHANNELS, PACKAGES
from . import common, targets

if TYPE_CHECKING:
    from ..environment.interpreter import Interpreter
    from ..machine import Machine
    from ..resolver.matrix import Matrix
    from ..resolver.plan import Plan, Request

def _add_request_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("packages", nargs="*", metavar="PKG",
                        help='requirements like pip\'s: "torch>=2.7" torchvision torchaudio (default: torch); other '
                             'packages ("numpy<2", xformers, transformers) are planned with it; installer options '
                             'go after "--"')
    parser.add_argument("-r", "--requirement", metavar="FILE", action="append", default=[],
                        help="a requirements file in pip's format (a compiled lock too): its torch lines are "
                             "resolved, the rest planned with them")
    parser.add_argument("-c", "--constraint", metavar="FILE", action="append", default=[],
                        help="a constraints file in pip's format: it limits versions, torch's included")
    parser.add_argument("--project", metavar="DIR", nargs="?", const=".",
                        help="the project in DIR (default: here): its pyproject.toml's dependencies")
    parser.add_argument("--extra", metavar="NAME", action="append", default=[],
                        help="with --project: add an extra's optional dependencies")
    parser.add_argument("--group", metavar="NAME", action="append", default=[],
                        help="with --project: add a dependency group (PEP 735)")
    parser.add_argument("--variant", metavar="ID", help="force a variant: cu128, rocm6.4, xpu, cpu …")
    parser.add_argument("--channel", choices=CHANNELS, default="stable", help="release channel (default stable)")
    common.add_index_options(parser)


def register(sub: argparse._SubParsersAction) -> None:
    plan = sub.add_parser("plan", help="print the PyTorch build for this (or a target) machine, and why",
                          description="Resolve the newest PyTorch build that runs on the machine and explain the "
                                      "choice. Exit code 0 when a build is chosen (warnings too, unless --strict), "
                                      "4 when no build fits.")
    _add_request_options(plan)
    plan.add_argument("--format", default="text", metavar="FORMAT", help=f"output format: {_format_names()}")
    plan.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    plan.add_argument("--strict", action="store_true", help="exit 1 when the plan has warnings")
    plan.add_argument("--hashes", action="store_true",
                      help="with --format requirements: add --hash=sha256: options read from the index")
    targets.add_target_options(plan)
    targets.add_sysroot_option(plan)
    plan.add_argument("--for-container", action=argparse.BooleanOptionalAction, default=None,
                      help="resolve for a container image: never use build-host hardware; target from --target/"
                           "flags or base-image hints (default: on in a container with no GPU device)")
    plan.set_defaults(func=run)

    install = sub.add_parser("install", help="resolve for this machine and run pip (or uv)",
                             description="Resolve for this machine and install the pinned packages with pip (or uv). "
                                         "An interrupt is passed on to the installer, never a kill; afterwards a "
                                         "torch it left gone or half-installed is put back from pip's stash, and a "
                                         "failed run says what it changed and how to go back.")
    _add_request_options(install)
    install.add_argument("--installer", choices=("pip", "uv"),
                         help="installer to run (default pip; uv for an environment without pip, when uv is on PATH)")
    install.add_argument("--python", metavar="PATH", type=targets.non_empty,
                         help="interpreter to install into (default, as uv: $VIRTUAL_ENV, $CONDA_PREFIX, ./.venv, "
                              "else this one unless it is a pipx or uv tool environment)")
    install.add_argument("--dry-run", action="store_true", help="print the command and exit")
    install.add_argument("--pin", action="store_true",
                         help="after installing, keep the build: write torch-install-constraints.txt into the "
                              "environment and name it in its pip.conf (and uv's configuration beside ./.venv)")
    install.add_argument("--lock-timeout", metavar="SECONDS", type=common.seconds, default=None,
                         help="how long to wait for another torch-install installing into the same environment "
                              "(default 600; 0: refuse at once)")
    install.set_defaults(func=run_install)


def request_from_args(args: argparse.Namespace) -> Request:
    """The Request: every requirement the command line, the -r/-c files and the project name, checked (an
    InputError names the file and line), with the variant, channel and index base."""
    from ..index.urls import index_base_from
    from ..project.gather import gather, request_of
    from ..resolver.variants import is_variant

    found = gather(args.packages, args.requirement, args.constraint, args.project, args.extra, args.group)
    if args.variant is not None and not is_variant(args.variant):
        raise InputError(f"--variant {args.variant!r}: not a variant id like cu128, rocm6.4, xpu or cpu")
    base = index_base_from(args.index_base, allow_insecure=args.allow_insecure_index)
    return request_of(found, args.variant, args.channel, base, getattr(args, "installer_options", ()) or ())


def _format_names() -> str:
    from ..render import FORMATS

    return ", ".join(f"{name} (default)" if name == "text" else name for name in FORMATS)


def resolve_plan(machine: Machine, request: Request, matrix: Matrix) -> Plan:
    from ..resolver.choose import resolve

    return resolve(machine, request, matrix)


def run(args: argparse.Namespace) -> int:
    from ..render import FORMATS, render

    if args.format not in FORMATS:
        raise InputError(f"--format {args.format}: not one of {', '.join(FORMATS)}")
    request = request_from_args(args)
    targets.target_flag_values(args)  # malformed flags are errors whichever way the target is built
    machines = targets.machines(args, request.variant, container=True)
    if len(machines) > 1:
        return _run_fleet(args, machines, request)
    machine = machines[0]
    if args.hashes and args.format != "requirements":
        raise InputError("--hashes goes with --format requirements")
    matrix = common.matrix_for(args, machine, request)
    plan = resolve_plan(machine, request, matrix)
    if matrix.provenance is not None:  # learnt from a live index: say what its choice rests on
        from ..index.merge import with_index_notes

        plan = with_index_notes(plan, matrix)
    if args.hashes:
        from ..index.hashes import plan_hashes
        from ..render.plan import render_requirements

        common.write(render_requirements(plan, plan_hashes(plan, machine, offline=args.offline,
                                                           allow_insecure=args.allow_insecure_index)))
    elif args.format == "text":  # the summary on stdout; warnings on stderr, where a script or a RUN step shows them
        from ..render.plan import render_text, warning_lines

        common.write(render_text(plan, with_warnings=False, every_rejection=args.verbose))
        for line in warning_lines(plan):
            common.warn(line)
    else:
        common.write(render(plan, args.format))
    return exit_code(plan.choice is not None, bool(plan.warnings), args.strict)


def exit_code(chosen: bool, warnings: bool, strict: bool) -> int:
    """0 for a choice (with warnings too, unless ``strict``: then 1), 4 when no build fits."""
    if not chosen:
        return EXIT_NO_BUILD
    return EXIT_WARNINGS if strict and warnings else EXIT_OK


def _run_fleet(args: argparse.Namespace, machines: list[Machine], request: Request) -> int:
    """Several --target profiles: torch_install.fleet resolves (``resolve_fleet``), renders (``render``) and
    picks the exit code (``exit_code``); with --format pyproject, each platform gets its own build instead."""
    if args.format == "pyproject":
        return _run_platforms(args, machines, request)
    from .. import fleet
    result = fleet.resolve_fleet(machines, request, common.matrix_for(args, machines[0], request))
    common.write(fleet.render(result, args.format))
    return int(fleet.exit_code(result, getattr(args, "strict", False)))


def _run_platforms(args: argparse.Namespace, machines: list[Machine], request: Request) -> int:
    """A uv project for several platforms: each target resolved alone, rendered as one pyproject fragment."""
    from ..render.plan import render_pyproject_platforms, warning_lines
    from ..wheel_tags import python_sort_key

    plans = []
    floors = []
    for machine in machines:
        matrix = common.matrix_for(args, machine, request)
        plan = resolve_plan(machine, request, matrix)
        plans.append(plan)
        release = matrix.release(plan.choice.torch) if plan.choice else None
        pythons = release.python_tags(machine.platform or "") if release else ()
        if pythons:
            floors.append(min((p for p in pythons if not p.endswith("t")), key=python_sort_key, default=pythons[0]))
        for line in warning_lines(plan):
            common.warn(f"{machine.platform}: {line}")
    floor = max(floors, key=python_sort_key) if floors else None
    common.write(render_pyproject_platforms(plans, floor))
    if any(p.choice is None for p in plans):
        return EXIT_NO_BUILD
    return exit_code(True, any(p.warnings for p in plans), args.strict)


def run_install(args: argparse.Namespace) -> int:
    import shlex

    from ..environment import install
    from ..machine_completion import complete_machine

    request = request_from_args(args)
    interpreter = common.target_interpreter(args.python)
    machine = complete_machine(targets.detect_here(args)._replace(python=interpreter.python))
    matrix = common.matrix_for(args, machine, request)
    plan = resolve_plan(machine, request, matrix)
    if plan.choice is None:  # nothing to install: say every reason, then stop (exit 4)
        for warning in plan.warnings:
            common.warn(f"[{warning.code}] {warning.message}")
    installer = install.choose_installer(args.installer, interpreter, dry_run=args.dry_run)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="torch-install-") as scratch:  # files a command line cannot carry
        steps = install.plan_steps_with_files(plan, interpreter, installer, scratch, need_uv=not args.dry_run)
        install.check_installable(plan, interpreter, installer)
        from ..render.plan import choice_lines, warning_lines

        for line in choice_lines(plan):  # what is about to be installed, and why, before the installer runs
            common.say(line)
        for line in warning_lines(plan):
            common.warn(line)
        for argv in steps:
            common.write(shlex.join(argv))
        if any(scratch in arg for argv in steps for arg in argv):
            for name in sorted(os.listdir(scratch)):
                with open(os.path.join(scratch, name), encoding="utf-8") as file:
                    common.say(f"torch-install: {name}, which the command reads:\n" + file.read().rstrip())
        if args.dry_run:
            return EXIT_OK
        from ..environment.lock import DEFAULT_TIMEOUT, environment_lock

        timeout = DEFAULT_TIMEOUT if args.lock_timeout is None else args.lock_timeout
        with environment_lock(interpreter.prefix or os.path.dirname(interpreter.executable), timeout, common.say):
            return _install_locked(args, plan, interpreter, steps, request, matrix)


def _install_locked(args: argparse.Namespace, plan: Plan, interpreter: Interpreter, steps: list[list[str]],
                    request: Request, matrix: Matrix) -> int:
    """The install transaction, the environment's lock held: the pin updated for the new build, each installer
    step (guarded), the pin written from what is installed now (or put back when a step failed)."""
    from ..environment import guard, install, pin

    prefix = interpreter.prefix
    update = pin.prepare_update(prefix, plan) if prefix else None
    guarded = (*request.packages, *(w.text for w in request.requirements if w.name and not w.constraint))
    try:
        for i, argv in enumerate(steps):  # the chosen build first; what rides along cannot replace it (pinned there)
            code = install.run_installer(argv, interpreter, guarded, request.index_base,
                                         own_index=i == 0 and plan.choice is not None and bool(plan.choice.index_url))
            if code != EXIT_OK:
                if update is not None:
                    pin.restore(prefix, update)
                return code
    except BaseException:
        if update is not None:
            pin.restore(prefix, update)
        raise
    if not prefix or not (args.pin or update is not None):
        return EXIT_OK
    present = guard.snapshot(interpreter.site_packages, set(PACKAGES))
    pins = pin.pins_for(plan, {name: dist.version for name, dist in present.items()}, matrix)
    if not pins:
        common.say(f"torch-install: not pinned: torch {plan.choice.packages.get('torch') if plan.choice else ''} is "
                   "not what is installed now (the installer installed nothing?)")
        return EXIT_OK
    written = pin.write_pin(prefix, pins)
    if update is not None:
        common.say("torch-install: the pin follows the new build: " + ", ".join(update.changed))
    for line in written.lines:
        common.say(f"torch-install: {line}")
    return EXIT_OK
