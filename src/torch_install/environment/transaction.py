"""One install transaction, for every command that installs into an environment: ``install``, ``doctor --fix``, and
each installing path added later. The command parses and prints; the transaction sequences:

1. **lock**: the environment's lock (``lock.py``), held until the end, and by each installer while it runs;
2. **snapshot**: the files a pin edits checked editable before anything is installed (``pin.check_writable``),
   and before each step what the guarded distributions are (``install.run_installer``, ``guard.py``);
3. **the pin follows the new build**: an existing pin of torch-install's that the new build would break is
   rewritten for it first (``pin.follow``), so the install is never blocked by its own pin;
4. **run** each installer step, guarded: an interrupt passed on to the installer, never a kill; a torch it left
   gone or half-installed put back from pip's stash; a failure says what changed and how to go back;
5. **verify**: what is installed afterwards, read from the environment's metadata (nothing is imported);
6. **commit or restore**: after every step succeeded, the pin written for what is installed (asked for, or the
   environment had one: ``pin.write_pin``); after a failure or an interrupt, the pin put back as it was.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ..errors import EXIT_OK, EnvironmentFailure
from ..records import Record
from ..resolver.plan import Plan

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..resolver.matrix import Matrix
    from .interpreter import Interpreter
    from .lock import Lock
    from .pin import Followed


class Step(Record):
    """One installer run of a transaction."""

    argv: tuple[str, ...]
    own_index: bool = False  # installs from the chosen build's own index (uv's index variables left out)
    installs_build: bool = False  # installs the plan's chosen build
    label: str = ""  # said before it runs ("running …"), when given


class Outcome(Record):
    """How a transaction ended: its exit code (0, or 130 when interrupted) and what its commit did, one line each."""

    code: int
    lines: tuple[str, ...] = ()


def plan_steps(plan: Plan, argvs: Sequence[Sequence[str]]) -> list[Step]:
    """The steps of a plan's installer commands (``install.plan_steps_with_files``): the first installs the chosen
    build from its index, the others what rides along."""
    own = plan.choice is not None and bool(plan.choice.index_url)
    return [Step(tuple(argv), own_index=own and i == 0, installs_build=i == 0) for i, argv in enumerate(argvs)]


def run_transaction(interpreter: Interpreter, plan: Plan | None, steps: Sequence[Step], guarded: Sequence[str] = (),
                    index_base: str = "", pin: bool = False, matrix: Matrix | None = None,
                    lock_timeout: float | None = None, say: Callable[[str], None] | None = None) -> Outcome:
    """Install ``steps`` into ``interpreter``'s environment as one transaction (above); ``plan``: the build they
    install (None: they install no build, and the pin stays as it is). ``guarded``: requirements
    whose distributions are checked and put back besides the torch family; ``pin``: write the pin afterwards (a pin
    the environment has is kept up to date in any case); ``say``: where the lock's waiting line goes. Raises what a
    failed step raises (an EnvironmentFailure saying what changed), after the pin is put back."""
    import os

    from . import pin as pins
    from .lock import DEFAULT_TIMEOUT, environment_lock

    prefix = interpreter.prefix
    timeout = DEFAULT_TIMEOUT if lock_timeout is None else lock_timeout
    with environment_lock(prefix or os.path.dirname(interpreter.executable), timeout, say) as lock:
        if prefix and (pin or pins.pinned_versions(prefix) is not None):
            pins.check_writable(prefix)
        followed = pins.follow(prefix, plan) if prefix and plan is not None else None
        try:
            code = _run_steps(interpreter, plan, steps, guarded, index_base, lock, say)
        except BaseException:
            if followed is not None:
                pins.put_back(prefix, followed)
            raise
        if code != EXIT_OK:
            if followed is not None:
                pins.put_back(prefix, followed)
            return Outcome(code)
        if not prefix or plan is None or not (pin or followed is not None):
            return Outcome(EXIT_OK)
        return Outcome(EXIT_OK, tuple(_commit(interpreter, plan, matrix, followed)))


def _run_steps(interpreter: Interpreter, plan: Plan | None, steps: Sequence[Step], guarded: Sequence[str],
               index_base: str, lock: Lock, say: Callable[[str], None] | None) -> int:
    from .install import run_installer

    for i, step in enumerate(steps):
        if step.label and say is not None:
            say(f"torch-install: {step.label}")
        try:
            code = run_installer(list(step.argv), interpreter, guarded, index_base, own_index=step.own_index,
                                 lock=lock)
        except EnvironmentFailure as failure:
            raise EnvironmentFailure(f"{failure}{_done_before(plan, steps, i)}") from None
        if code != EXIT_OK:
            if note := _done_before(plan, steps, i):
                sys.stderr.write(f"torch-install: warning: {note.strip()}\n")
            return code
    return EXIT_OK


def _done_before(plan: Plan | None, steps: Sequence[Step], failed: int) -> str:
    """What the steps before a failed one left installed: the chosen build, when an earlier step installed it."""
    built = next((i for i, step in enumerate(steps[:failed]) if step.installs_build), None)
    if built is None or plan is None or plan.choice is None:
        return ""
    build = ", ".join(f"{name} {version}" for name, version in plan.choice.packages.items())
    return (f"\n  step {failed + 1} of {len(steps)} failed; step {built + 1} had installed the chosen build ({build}): "
            "running the same command again, once the cause is fixed, finishes it")


def _commit(interpreter: Interpreter, plan: Plan, matrix: Matrix | None, followed: Followed | None) -> list[str]:
    """Verify what is installed and write the pin for it; the lines to say."""
    from ..resolver.companion_facts import table_names
    from ..resolver.pins import kept_pins, unguarded
    from ..resolver.request import PACKAGES
    from . import guard
    from . import pin as pins

    present = guard.snapshot(interpreter.site_packages, {*PACKAGES, *table_names()})
    wanted = kept_pins(plan, {name: dist.version for name, dist in present.items()}, matrix)
    if not wanted:
        torch = plan.choice.packages.get("torch") if plan.choice else ""
        return [f"not pinned: torch {torch} is not what is installed now (the installer installed nothing?)"]
    written = pins.write_pin(interpreter.prefix, wanted, plan=plan, unguarded=unguarded(plan, wanted, matrix))
    lines = ["the pin follows the new build: " + ", ".join(followed.changed)] if followed is not None else []
    return lines + list(written.lines)
