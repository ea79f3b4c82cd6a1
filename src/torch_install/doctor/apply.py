"""``doctor --fix``: which of the report's fixes are commands to run for the inspected environment, as the steps of
an install transaction.

Only commands the doctor itself built for that environment's interpreter run: the install fix (``Fix.command``)
and the uninstall of orphaned or stale packages (``fix.uninstall_command``); instructions (export a variable,
update a driver) are left to the user. They run as one install transaction (``environment/transaction.py``): the
environment's lock, an interrupt passed on (never a kill), a torch pip moved aside put back, and the pin of an
environment that has one following the fix's build.
"""

from __future__ import annotations

import shlex

from . import Report

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..environment.transaction import Step
    from ..resolver.plan import Plan


def runnable_commands(report: Report) -> list[str]:
    """The report's fix commands for its interpreter, uninstalls first, each once."""
    commands = [f.uninstall for f in report.findings if f.uninstall]
    if report.fix is not None and report.fix.plan.choice is not None and any(
            f.fix and report.fix.command in f.fix for f in report.findings):
        commands.append(report.fix.command)
    return list(dict.fromkeys(commands))


def fix_steps(report: Report) -> tuple[Plan | None, list[Step]]:
    """The build the fix installs (None: it installs none, only uninstalls) and the transaction's steps."""
    from ..environment.transaction import Step

    commands = runnable_commands(report)
    fix = report.fix if report.fix is not None and report.fix.command in commands else None
    own = fix is not None and fix.plan.choice is not None and bool(fix.plan.choice.index_url)
    steps = [Step(tuple(shlex.split(command)), own_index=own and fix is not None and command == fix.command,
                  installs_build=fix is not None and command == fix.command, label=f"running {command}")
             for command in commands]
    return (fix.plan if fix is not None else None), steps
