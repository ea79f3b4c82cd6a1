"""Fleets: one build for many machines, and Node Feature Discovery labels for a cluster's scheduler.

``resolve_fleet(machines, request, matrix)`` returns the one torch build that runs on every machine (the
newest such, GPU builds first), or says which machine breaks which candidate. ``nfd_lines(machine, plan)``
writes the Kubernetes Node Feature Discovery feature-file lines for a node (docs/fleet.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import EXIT_NO_BUILD, EXIT_OK, EXIT_WARNINGS
from .machine import Machine
from .render import render as render_plan
from .render.plan import gpu_description
from .resolver.choose import resolve as resolve_plan
from .resolver.matrix import Matrix, version_key
from .resolver.plan import Plan, Request

LABEL_PREFIX = "torch-install.io"
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


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


def resolve_fleet(machines: Sequence[Machine], request: Request, matrix: Matrix,
                  resolve: Callable[[Machine, Request, Matrix], Plan] | None = None) -> FleetPlan:
    """The newest build that runs on every machine; candidates are each machine's own best build, GPU first."""
    if resolve is None:
        resolve = resolve_plan
    machines = tuple(machines)
    own = [resolve(m, request, matrix) for m in machines]
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
            return FleetPlan(machines, tuple(plans), candidates[-1], tuple(candidates))
        candidates.append(Candidate(torch, variant, problems))
        # an older release of the same variant may run everywhere: try the oldest version any machine got
        older = {p.choice.torch.split("+")[0] for p in plans if p.choice and p.choice.variant == variant}
        for version in sorted(older, key=version_key):
            if version_key(version) < version_key(torch) and (version, variant) not in tried:
                queue.insert(0, (version, variant))
                break
    return FleetPlan(machines, tuple(own), None, tuple(candidates))


def render(result: FleetPlan, fmt: str) -> str:
    """``text`` and ``json`` describe the fleet; every other plan format renders the common build."""
    if fmt == "json":
        return json.dumps(to_dict(result), indent=2)
    if fmt != "text" and result.plan is not None:
        return render_plan(result.plan, fmt)
    lines = [f"Fleet:    {len(result.machines)} machines"]
    lines += [f"  {machine_name(m, i)}" for i, m in enumerate(result.machines)]
    if result.choice:
        plan = result.plan
        where = plan.choice.index_url if plan and plan.choice and plan.choice.index_url else "the default index"
        lines.append(f"Choice:   torch {result.choice.torch}, variant {result.choice.variant}, from {where}: "
                     "runs on every machine")
        if plan is not None:
            lines.append(f"Command:  {plan.commands.get('pip', '')}")
    else:
        lines.append("Choice:   none: no single build runs on every machine")
    for cand in result.candidates:
        for problem in cand.problems:
            lines.append(f"Breaks:   torch {cand.torch} {cand.variant} on {problem.name}: {problem.reason}")
    return "\n".join(lines)


def to_dict(result: FleetPlan) -> dict[str, Any]:
    def cand(c: Candidate) -> dict[str, Any]:
        return {"torch": c.torch, "variant": c.variant,
                "problems": [{"machine": p.machine, "name": p.name, "reason": p.reason} for p in c.problems]}

    return {"choice": cand(result.choice) if result.choice else None,
            "candidates": [cand(c) for c in result.candidates],
            "plans": [p.to_dict() for p in result.plans]}


def exit_code(result: FleetPlan, strict: bool = False) -> int:
    """4 when no single build runs on every machine; else 0, or 1 with ``strict`` when a machine's plan warns or
    the common build is CPU on machines with GPUs."""
    if result.choice is None:
        return EXIT_NO_BUILD
    warned = result.choice.variant == "cpu" and any(m.gpus for m in result.machines) or any(p.warnings
                                                                                           for p in result.plans)
    return EXIT_WARNINGS if strict and warned else EXIT_OK


# --------------------------------------------------------------------------------------------------------------
# Node Feature Discovery
# --------------------------------------------------------------------------------------------------------------

def nfd_labels(machine: Machine, plan: Plan | None = None) -> dict[str, str]:
    """Label name -> value for a node: the resolved variant, driver CUDA, NVIDIA arch, AMD gfx target.

    A node with several GPU models gets the lowest NVIDIA architecture (a pod may land on any of its GPUs).
    """
    from .wheelnext.properties import driver_cuda

    labels: dict[str, str] = {}
    if plan is not None and plan.choice is not None:
        labels["variant"] = plan.choice.variant
        labels["torch"] = plan.choice.torch.split("+")[0]
    cuda = driver_cuda(machine)
    if cuda:
        labels["cuda-driver-max"] = f"{cuda[0]}.{cuda[1]}"
    if machine.nvidia_driver:
        labels["nvidia-driver"] = machine.nvidia_driver
    sms = sorted(g.sm for g in machine.visible_gpus if g.vendor == "nvidia" and g.sm is not None)
    if sms:
        labels["gpu-arch"] = f"sm_{sms[0]}"
    gfx = [g.gfx for g in machine.visible_gpus if g.vendor == "amd" and g.gfx]
    if gfx:
        labels["rocm-gfx"] = sorted(gfx)[0]
    if machine.rocm:
        labels["rocm"] = machine.rocm
    vendors = sorted({g.vendor for g in machine.visible_gpus})
    if vendors:
        labels["gpu-vendor"] = vendors[0] if len(vendors) == 1 else "mixed"
    return {k: v for k, v in labels.items() if _LABEL_VALUE.fullmatch(v) and len(v) <= 63}


def nfd_lines(machine: Machine, plan: Plan | None = None) -> str:
    """An NFD feature file (``/etc/kubernetes/node-feature-discovery/features.d/torch-install``)."""
    header = "# torch-install node labels (Node Feature Discovery feature file)"
    return "\n".join([header] + [f"{LABEL_PREFIX}/{k}={v}" for k, v in nfd_labels(machine, plan).items()])
