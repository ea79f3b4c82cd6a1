"""Several targets: each one's own plan, and what they share.

``resolve_fleet(machines, request, matrix)`` resolves every machine (its own best build) and the one torch build
that runs on every machine (the newest such, GPU builds first), or says which machine breaks which candidate.
``per_platform`` gives the plans a project file with platform markers holds, never two builds under one marker.
Targets of one profile share their work: ``SharedResolves`` resolves each distinct (machine, request) once, and
every format (``render/fleet.py``) writes their plan once. Node Feature Discovery labels are ``render/nfd.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .errors import EXIT_NO_BUILD, EXIT_OK, EXIT_WARNINGS
from .machine import Machine
from .render.fleet import machine_name
from .resolver.choose import resolve as resolve_plan
from .resolver.fleet_plan import Candidate, FleetPlan, NodeProblem
from .resolver.matrix import Matrix, version_key
from .resolver.plan import Plan, Request

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Hashable


class SharedResolves:
    """``resolve`` (the resolver's, by default) worked out once for each distinct (machine, request, matrix): the
    targets of one profile get one plan, the same object. A machine or request that cannot be a key (it holds
    something unhashable) is resolved each time."""

    def __init__(self, resolve: Callable[[Machine, Request, Matrix], Plan] = resolve_plan) -> None:
        self._resolve = resolve
        self._plans: dict[Hashable, Plan] = {}
        self._matrices: dict[Hashable, Matrix] = {}
        self._kept: dict[int, Matrix] = {}  # every matrix of a key, kept alive: its id names no other

    def __call__(self, machine: Machine, request: Request, matrix: Matrix) -> Plan:
        key = (_key(machine), request, id(matrix))
        try:
            plan = self._plans.get(key)
        except TypeError:  # unhashable
            return self._resolve(machine, request, matrix)
        if plan is None:
            plan = self._plans[key] = self._resolve(machine, request, matrix)
            self._kept[id(matrix)] = matrix
        return plan

    def matrix(self, machine: Machine, request: Request, matrix_for: Callable[[], Matrix]) -> Matrix:
        """The matrix for a target (``matrix_for()``, worked out once for the targets of one profile)."""
        key = (_key(machine), request)
        try:
            found = self._matrices.get(key)
        except TypeError:
            return matrix_for()
        if found is None:
            found = self._matrices[key] = matrix_for()
        return found


def _key(machine: Machine) -> tuple[object, ...]:
    """A machine's fields, its sources as a tuple: a dictionary key."""
    return (*(value for field, value in zip(Machine._fields, machine, strict=True) if field != "sources"),
            tuple(machine.sources.items()))


def _blocking(plan: Plan, torch: str, variant: str) -> str | None:
    """Why ``plan`` (resolved with ``variant`` forced) does not give a working ``torch`` build, or None."""
    if plan.choice is None:
        return "; ".join(w.message for w in plan.warnings) or "no build fits"
    if plan.choice.variant != variant:
        return f"gets {plan.choice.variant} instead of {variant}"
    if plan.choice.torch.split("+")[0] != torch:
        return f"the newest {variant} build it can use is torch {plan.choice.torch}"
    return "; ".join(f"[{w.code}] {w.message}" for w in plan.blocking_warnings()) or None


def _resolving(resolve: Callable[[Machine, Request, Matrix], Plan]) -> Callable[[Machine, Request, Matrix], Plan]:
    """``resolve``, with a forced variant a machine's platform does not have (a Mac's "default" for a Linux box)
    answered as no build rather than an input error: in a fleet that is one machine the candidate breaks."""
    from .errors import InputError

    def run(machine: Machine, request: Request, matrix: Matrix) -> Plan:
        try:
            return resolve(machine, request, matrix)
        except InputError as exc:
            if request.variant is None:
                raise
            from .resolver.plan import PlanWarning

            return Plan(machine, request, None, False, warnings=(PlanWarning("platform-unsupported", str(exc)),))

    return run


def resolve_fleet(machines: Sequence[Machine], request: Request, matrix: Matrix,
                  resolve: Callable[[Machine, Request, Matrix], Plan] | None = None,
                  own: Sequence[Plan] | None = None) -> FleetPlan:
    """Each machine's own plan (``own``, if already resolved) and the newest build that runs on every machine;
    candidates are each machine's own best build, GPU first. ``resolve``: the resolves to share (a
    ``SharedResolves`` of its own by default)."""
    resolve = _resolving(resolve or SharedResolves())
    machines = tuple(machines)
    own = list(own) if own is not None else [resolve(m, request, matrix) for m in machines]
    seeds: list[tuple[str, str]] = []
    for plan in own:
        if plan.choice and (key := (plan.choice.torch.split("+")[0], plan.choice.variant)) not in seeds:
            seeds.append(key)
    seeds.sort(key=lambda k: (k[1] != "cpu", version_key(k[0])), reverse=True)
    candidates: list[Candidate] = []
    tried: set[tuple[str, str]] = set()
    queue = list(seeds)
    while queue:
        torch, variant = queue.pop(0)
        if (torch, variant) in tried:
            continue
        tried.add((torch, variant))
        forced = request._replace(variant=variant)
        plans = [resolve(m, forced, matrix) for m in machines]
        why_not: dict[int, str | None] = {}  # by plan: the targets of one profile share theirs
        problems = tuple(NodeProblem(i, machine_name(m, i), why) for i, (m, p) in enumerate(zip(machines, plans,
                                                                                                strict=True))
                         if (why := why_not[id(p)] if id(p) in why_not else
                             why_not.setdefault(id(p), _blocking(p, torch, variant))))
        if not problems:
            candidates.append(Candidate(torch, variant))
            return FleetPlan(machines, tuple(plans), candidates[-1], tuple(candidates), tuple(own))
        candidates.append(Candidate(torch, variant, problems))
        # an older release of the same variant may run everywhere: try the oldest version any machine got
        older = {p.choice.torch.split("+")[0] for p in plans if p.choice and p.choice.variant == variant}
        for version in sorted(older, key=version_key):
            if version_key(version) < version_key(torch) and (version, variant) not in tried:
                queue.insert(0, (version, variant))
                break
    return FleetPlan(machines, tuple(own), None, tuple(candidates), tuple(own))


def _build(plan: Plan) -> tuple[str, str] | None:
    return (plan.choice.torch, plan.choice.variant) if plan.choice else None


def per_platform(result: FleetPlan, request: Request, matrix: Matrix,
                 resolve: Callable[[Machine, Request, Matrix], Plan] | None = None) -> tuple[list[Plan], list[str]]:
    """The plans a project file with platform markers holds, one per target, and the warning lines: targets that
    share a platform (the same marker) but need different builds get their shared build, the newest that runs on
    each of them (an InputError when none does) -- never two builds under one marker."""
    from .errors import InputError
    from .markers import platform_markers

    own = list(result.own or result.plans)
    groups: dict[str, list[int]] = {}
    for i, marker in enumerate(platform_markers([plan.machine for plan in own])):
        groups.setdefault(marker, []).append(i)
    warnings: list[str] = []
    for marker, members in groups.items():
        builds = {_build(own[i]) for i in members}
        if len(builds) < 2:
            continue
        shared = resolve_fleet([own[i].machine for i in members], request, matrix, resolve)
        names = " and ".join(f"target {i + 1}" for i in members)
        if shared.choice is None:
            raise InputError(f"{names} share one platform ({marker}) but no build runs on all of them, and a project "
                             "file holds one build per platform: give each its own environment (one --target each)")
        mine = ", ".join(f"target {i + 1}: {'+'.join(_build(own[i]) or ('none',))}" for i in members)
        warnings.append(f"{names} share one platform ({marker}) but their own builds differ ({mine}): the project "
                        f"file holds their shared build, torch {shared.choice.torch}+{shared.choice.variant}; for "
                        "each its own, give each its own environment (one --target each)")
        for i, plan in zip(members, shared.plans, strict=True):
            own[i] = plan
    return own, warnings


def exit_code(result: FleetPlan, strict: bool = False, shared: bool = False) -> int:
    """4 when a target has no build (with ``shared``, for the formats that need one build for all: when no single
    build runs on every target); else 0, or 1 with ``strict`` when a target's plan warns or the shared build is CPU
    on targets with GPUs."""
    own = result.own or result.plans
    if (shared and result.choice is None) or any(p.choice is None for p in own):
        return EXIT_NO_BUILD
    cpu_for_gpus = result.choice is not None and result.choice.variant == "cpu" and any(m.gpus for m in
                                                                                        result.machines)
    warned = cpu_for_gpus or any(p.warnings for p in own)
    return EXIT_WARNINGS if strict and warned else EXIT_OK
