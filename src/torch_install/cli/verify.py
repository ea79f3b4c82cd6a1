"""``install`` (and ``plan --verify``): the plan checked by the installer's own resolver before anything runs
(``environment/verify.py``), and where it fails, the next candidate build: the one the conflict's torch-family
requirements allow (``sglang 0.5.23 depends on torch==2.14.1``: torch 2.14.1), else the plan without the release
that failed; a conflict that names none of the family, or that no candidate clears, is one line and exit 4."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import InputError, NoBuild
from ..resolver.request import PACKAGES
from . import common

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..environment.verify import Checked
    from ..machine import Machine
    from ..resolver.matrix import Matrix
    from ..resolver.plan import Plan

CANDIDATES = 4  # builds tried in all, the first plan included


def verified_plan(plan: Plan, machine: Machine, matrix: Matrix, installer: str,
                  check: Callable[[Plan], Checked]) -> Plan:
    """``plan`` when the installer's resolver (``check``) can install it; else the first candidate it can, each
    move said in one line; a NoBuild naming the conflict when none can."""
    from ..resolver.choose import resolve

    for _ in range(CANDIDATES):
        if plan.choice is None:
            return plan
        found = check(plan)
        if found.skipped:
            common.warn(f"the plan was not checked with {installer}'s resolver: {found.skipped}")
            return plan
        if found.ok:
            return plan
        build = f"torch {plan.choice.torch}+{plan.choice.variant}"
        asks = _narrowing(plan, found)
        if asks is None:
            raise NoBuild(f"{installer}'s resolver cannot install the plan ({build}): {found.conflict}")
        request = plan.request._replace(constraints=(*plan.request.constraints, *asks))
        try:
            following = resolve(machine, request, matrix)
        except InputError as exc:
            raise NoBuild(f"{installer}'s resolver cannot install the plan ({build}): {found.conflict}; and no "
                          f"other build fits ({exc})") from None
        if following.choice is None or (following.choice.torch, following.choice.variant) == \
                (plan.choice.torch, plan.choice.variant):
            raise NoBuild(f"{installer}'s resolver cannot install the plan ({build}): {found.conflict}")
        common.warn(f"{installer}'s resolver cannot install {build}: {found.conflict}; the next candidate: torch "
                    f"{following.choice.torch}+{following.choice.variant} ({', '.join(asks)})")
        plan = following
    raise NoBuild(f"{installer}'s resolver cannot install any of the {CANDIDATES} builds tried; the last: "
                  f"{found.conflict}")


def _narrowing(plan: Plan, found: Checked) -> tuple[str, ...] | None:
    """The constraints that take the next candidate: the family requirements the conflict names (each member's
    first), else the chosen release left out when the conflict names a family member; None: it names none."""
    assert plan.choice is not None
    firsts: dict[str, str] = {}
    for ask in found.asks:
        firsts.setdefault(re.split(r"[<>=!~]", ask, maxsplit=1)[0], ask)
    if firsts:
        return tuple(firsts.values())
    if re.search(rf"\b({'|'.join(PACKAGES)})\b", found.conflict):
        return (f"torch!={plan.choice.torch}",)
    return None
