"""``doctor --fix``: which of the report's fixes are commands to run for the inspected environment.

Only commands the doctor itself built for that environment's interpreter run: the install fix (``Fix.command``)
and the uninstall of orphaned or stale packages (``fix.uninstall_command``); instructions (export a variable,
update a driver) are left to the user. They run through ``install.run_installer``: an interrupt is passed on,
never a kill, and a torch pip moved aside is put back.
"""

from __future__ import annotations

import shlex

from . import Report


def runnable_commands(report: Report) -> list[str]:
    """The report's fix commands for its interpreter, uninstalls first, each once."""
    executable = report.installed.interpreter.executable
    uninstall_prefixes = tuple(shlex.join(p) for p in ([executable, "-m", "pip", "uninstall"],
                                                         ["uv", "pip", "uninstall", "--python", executable]))
    commands = [f.fix for f in report.findings if f.fix and f.fix.startswith(uninstall_prefixes)]
    if report.fix is not None and report.fix.plan.choice is not None and any(
            f.fix and report.fix.command in f.fix for f in report.findings):
        commands.append(report.fix.command)
    return list(dict.fromkeys(commands))
