"""`torch-install doctor`: does the installed PyTorch fit this machine; if not, why, and the command that fixes it."""

from __future__ import annotations

import argparse
import os

from . import common, targets

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..doctor import Report


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "doctor", help="check that the installed PyTorch fits this machine, and print the fix",
        description="Inspect an environment's PyTorch without importing it, compare it with the machine, and "
                    "print each problem with its evidence and the one command that fixes it. Exit code 0: "
                    "healthy; 1: problems found; 2: usage or input error.")
    parser.add_argument("--python", metavar="PATH", type=targets.non_empty,
                        help="inspect the environment of this interpreter (default, as uv: $VIRTUAL_ENV, "
                             "$CONDA_PREFIX, ./.venv, else the one running torch-install unless it is a pipx or uv "
                             "tool environment)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (docs/doctor-json.md)")
    parser.add_argument("--index-base", metavar="URL",
                        help="PyTorch wheel index base for the fix (mirrors); default $TORCH_INSTALL_INDEX_BASE or "
                             "PyTorch's")
    parser.add_argument("--allow-insecure-index", action="store_true",
                        help="allow a plain-http index base that is not loopback")
    parser.add_argument("--vendor-index", metavar="ID=URL", action="append", default=[],
                        help="a mirror of a vendor's index for the fix (amd-stable=URL …; also "
                             "$TORCH_INSTALL_VENDOR_INDEX)")
    parser.add_argument("--import-torch", action="store_true",
                        help="also import torch in a child process and run one tiny GPU kernel")
    parser.add_argument("--import-timeout", metavar="SECONDS", type=float, default=60.0,
                        help="time limit for --import-torch (default 60)")
    parser.add_argument("--fix", action="store_true",
                        help="run the fix commands for the inspected environment (asks first), then check again")
    parser.add_argument("--yes", action="store_true", help="with --fix: do not ask (for scripts)")
    common.add_lock_timeout_option(parser, "with --fix: ")
    parser.add_argument("--target", metavar="FILE", action="append",
                        help="machine profile JSON describing the hardware (a captured or remote machine)")
    targets.add_sysroot_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:

    from ..errors import InputError

    if not 0 < args.import_timeout <= 3600:  # nan and inf fail this too
        raise InputError("--import-timeout: must be a number of seconds from 0 to 3600")
    from ..doctor import diagnose
    from ..doctor.inspect import inspect_environment
    from ..resolver.matrix import load_matrix

    probe = None
    if args.target:
        # --python names the environment here, not the target's Python: only the profile describes the machine
        from ..resolver.request import check_consistent

        machine = targets.machine(argparse.Namespace(target=args.target, sysroot=args.sysroot))
        check_consistent(machine, None, load_matrix())  # the same input errors as plan
        environ = dict(os.environ)
    else:
        from ..detectors import detect
        from ..machine_completion import complete_machine

        probe = targets.probe_of(args)
        machine = complete_machine(detect(probe))
        environ = dict(probe.environ)
    installed = inspect_environment(common.target_interpreter(args.python))
    from ..index.urls import index_base_from, vendor_mirrors

    base = index_base_from(args.index_base, allow_insecure=args.allow_insecure_index)
    mirrors = vendor_mirrors(args.vendor_index, allow_insecure=args.allow_insecure_index)
    report = diagnose(machine, installed, load_matrix(), probe=probe, environ=environ,
                      import_torch_timeout=args.import_timeout if args.import_torch else None, index_base=base,
                      vendor_indexes=mirrors)
    from ..doctor.report import render_json, render_text

    common.write(render_json(report) if args.json else render_text(report))
    if not args.fix:
        return report.exit_code
    if not _apply_fixes(report, args.yes, args.lock_timeout):
        return report.exit_code
    again = diagnose(machine, inspect_environment(common.target_interpreter(args.python)), load_matrix(),
                     probe=probe, environ=environ, index_base=base, vendor_indexes=mirrors)
    common.write("\nAfter the fix:\n" + (render_json(again) if args.json else render_text(again)))
    for line in _unchanged(report, again):
        common.warn(line)
    return again.exit_code


def _unchanged(before: Report, after: Report) -> list[str]:
    """What the fix was run for and left as it was: each problem whose fix was a command that ran, found again with
    the same evidence, one line (none: every one changed)."""
    from ..doctor.apply import runnable_commands

    ran = runnable_commands(before)
    same = {(f.code, f.title, f.evidence) for f in before.problems if f.fix and any(c in f.fix for c in ran)}
    left = [f for f in after.problems if (f.code, f.title, f.evidence) in same]
    if not left:
        return []
    return [f"the fix changed nothing of this: [{f.code}] {f.title} ({'; '.join(f.evidence)})" for f in left]


def _apply_fixes(report: Report, yes: bool, lock_timeout: float | None = None) -> bool:
    """Run the report's fix commands (asking first unless ``yes``) as one install transaction; whether any ran.
    PEP 668 is refused."""
    import sys

    from ..doctor.apply import runnable_commands
    from ..errors import EnvironmentFailure, InputError

    commands = runnable_commands(report)
    if not commands:
        common.say("torch-install: nothing to run: " + ("healthy" if report.healthy else
                                                         "the fixes above are steps for you, not commands"))
        return False
    interpreter = report.installed.interpreter
    if interpreter.externally_managed:
        raise EnvironmentFailure(f"{interpreter.executable} is externally managed (PEP 668): --fix does not install "
                                 "into it; make a virtual environment (python3 -m venv .venv) and install there")
    if not yes:
        if not sys.stdin.isatty():
            raise InputError("--fix: not at a terminal to ask; give --yes to run the fix without asking")
        sys.stderr.write("".join(f"  {c}\n" for c in commands) + f"Run {'this' if len(commands) == 1 else 'these'}? "
                         "[y/N] ")
        sys.stderr.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            common.say("torch-install: not run")
            return False
    from ..doctor.apply import fix_steps
    from ..environment.transaction import run_transaction
    from ..resolver.matrix import load_matrix
    from ..resolver.request import PACKAGES

    plan, steps = fix_steps(report)
    outcome = run_transaction(interpreter, plan, steps, PACKAGES, matrix=load_matrix(),
                              lock_timeout=lock_timeout, say=common.say)
    for line in outcome.lines:
        common.say(f"torch-install: {line}")
    return True
