"""Several targets: each one's own plan, what they share, and Node Feature Discovery labels for a scheduler.

``resolve_fleet(machines, request, matrix)`` resolves every machine (its own best build) and the one torch build
that runs on every machine (the newest such, GPU builds first), or says which machine breaks which candidate.
``render(result, fmt)`` answers every target in every format (docs/fleet.md); ``per_platform`` gives the plans a
project file with platform markers holds, never two builds under one marker. Node Feature Discovery labels are
``render/nfd.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import EXIT_NO_BUILD, EXIT_OK, EXIT_WARNINGS
from .machine import Machine
from .render import render as render_plan
from .render.plan import gpu_description, plan_document
from .resolver.choose import resolve as resolve_plan
from .resolver.matrix import Matrix, version_key
from .resolver.plan import Plan, Request
from .resolver.steps import command_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any



@dataclass(frozen=True)
class NodeProblem:
    machine: int  # index into the fleet
    name: str  # the machine's description (profile origin or its GPUs)
    reason: str


@dataclass(frozen=True)
class Candidate:
    """A (torch, variant) build tried on the whole fleet, and the machines it fails on."""

    torch: str
    variant: str
    problems: tuple[NodeProblem, ...] = ()


@dataclass(frozen=True)
class FleetPlan:
    machines: tuple[Machine, ...]
    plans: tuple[Plan, ...]  # per machine, for the chosen build (or each machine's own best when none fits)
    choice: Candidate | None  # the build that runs on all machines
    candidates: tuple[Candidate, ...]  # everything tried, best first
    own: tuple[Plan, ...] = ()  # per machine, its own best build

    @property
    def plan(self) -> Plan | None:
        """A representative plan for the common build (the first machine's), for pip/uv/dockerfile output."""
        return self.plans[0] if self.choice and self.plans else None


def machine_name(machine: Machine, index: int) -> str:
    gpus = ", ".join(gpu_description(g) for g in machine.gpus) or "no GPU"
    driver = f", driver {machine.nvidia_driver}" if machine.nvidia_driver else ""
    return f"machine {index + 1} ({gpus}{driver})"


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
    candidates are each machine's own best build, GPU first."""
    resolve = _resolving(resolve or resolve_plan)
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
        problems = tuple(NodeProblem(i, machine_name(m, i), why) for i, (m, p) in enumerate(zip(machines, plans,
                                                                                                strict=True))
                         if (why := _blocking(p, torch, variant)))
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


def render(result: FleetPlan, fmt: str) -> str:
    """Every target answered: ``text`` and ``json`` give each target's own plan and the build they share; ``pip``,
    ``uv``, ``url`` and ``variant-env`` one block per target; ``dockerfile`` (one image for them all) the shared
    build. (``requirements``, ``constraints`` and ``pyproject`` hold the targets under platform markers:
    ``per_platform``.)"""
    if fmt == "json":
        return json.dumps(to_dict(result), indent=2)
    if fmt == "dockerfile":
        if result.plan is not None:
            return render_plan(image_plan(result), fmt)
        return "\n".join(["# torch-install: no single build runs on every target (one image needs one)",
                          *(f"# {line}" for line in _breaks(result))])
    own = result.own or result.plans
    if fmt != "text":
        blocks = []
        for i, plan in enumerate(own):
            body = render_plan(plan, fmt) if plan.choice is not None else "\n".join(
                f"# no build fits: [{w.code}] {w.message}" for w in plan.warnings) or "# no build fits"
            blocks.append(f"# target {i + 1}: {machine_name(plan.machine, i)}\n{body}")
        return "\n\n".join(blocks)
    from .render.plan import render_text

    lines = [f"Targets:  {len(result.machines)}"]
    for i, plan in enumerate(own):
        lines += ["", f"Target {i + 1}: {machine_name(plan.machine, i)}",
                  *(f"  {line}" for line in render_text(plan).splitlines())]
    lines.append("")
    if result.choice:
        common = result.plan
        where = common.choice.index_url if common and common.choice and common.choice.index_url else \
            "the default index"
        lines.append(f"Shared:   torch {result.choice.torch}, variant {result.choice.variant}, from {where}: "
                     "runs on every target (one image or environment for all)")
        command = command_lines(common).get("pip") if common is not None else None
        if command:
            lines.append(f"Command:  {command}")
        if result.choice.variant == "cpu" and any(p.gpu_accelerated for p in own):
            lines.append("Note:     the shared build is the CPU build: the GPU targets get their own build above")
    else:
        lines.append("Shared:   none: no single build runs on every target")
    lines += _breaks(result)
    return "\n".join(lines)


def image_plan(result: FleetPlan) -> Plan:
    """The shared build's plan for one image that serves every target: a vendor build with device extras
    (AMD's) carries each target's GPU's extra (the all-devices one where a target's GPU took it)."""
    plan = result.plan
    assert plan is not None and plan.choice is not None
    extras: dict[str, list[str]] = {}
    devices = []
    for each in result.plans:
        for name, names in (each.choice.extras.items() if each.choice else ()):
            extras.setdefault(name, [])
            extras[name] += [e for e in names if e not in extras[name]]
        devices += [d for d in (each.choice.devices if each.choice else ()) if d not in devices]
    if not extras:
        return plan
    index = plan.choice.vendor_index
    every = next((d.extra for d in devices if d.arch is None and d.extra), None)  # the all-devices extra
    merged = {name: (every,) if every else tuple(names) for name, names in extras.items()}
    reason = (f"one image for {len(result.plans)} targets: the device extras of each target's GPUs "
              f"({', '.join(sorted({e for names in merged.values() for e in names}))}) from {index.name}"
              if index else "one image for every target")
    return plan._replace(choice=plan.choice._replace(extras=merged, devices=tuple(devices)),
                         reasons=(*plan.reasons, reason))


def _build(plan: Plan) -> tuple[str, str] | None:
    return (plan.choice.torch, plan.choice.variant) if plan.choice else None


def _breaks(result: FleetPlan) -> list[str]:
    return [f"Breaks:   torch {cand.torch} {cand.variant} on {problem.name}: {problem.reason}"
            for cand in result.candidates for problem in cand.problems]


def per_platform(result: FleetPlan, request: Request, matrix: Matrix) -> tuple[list[Plan], list[str]]:
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
        shared = resolve_fleet([own[i].machine for i in members], request, matrix)
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


def to_dict(result: FleetPlan) -> dict[str, Any]:
    def cand(c: Candidate) -> dict[str, Any]:
        return {"torch": c.torch, "variant": c.variant,
                "problems": [{"machine": p.machine, "name": p.name, "reason": p.reason} for p in c.problems]}

    return {"choice": cand(result.choice) if result.choice else None,
            "candidates": [cand(c) for c in result.candidates],
            "plans": [plan_document(p) for p in result.plans],
            "targets": [plan_document(p) for p in (result.own or result.plans)]}


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
