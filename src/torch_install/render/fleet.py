"""A fleet's answer (``resolver.fleet_plan.FleetPlan``) in every format (docs/fleet.md): ``text`` and ``json`` give
each target's own plan and the build they share; ``pip``, ``uv``, ``url`` and ``variant-env`` one block per target;
``dockerfile`` (one image for them all) the shared build. (``requirements``, ``constraints`` and ``pyproject`` hold
the targets under platform markers: ``fleet.per_platform``, then ``render/project.py``.)

The JSON answer grows with the distinct targets, not with their number: a target whose plan is an earlier one's
(the same profile) is ``{"same_as": N}`` (that earlier target's index), and so is its problem with a candidate
(``{"machine": M, "same_as": N}``); the answer is one line unless an indent is asked for.
"""

from __future__ import annotations

import json

from . import render as render_plan
from .plan import gpu_description, plan_document

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from ..machine import Machine
    from ..resolver.fleet_plan import Candidate, FleetPlan
    from ..resolver.plan import Plan


def machine_name(machine: Machine, index: int) -> str:
    gpus = ", ".join(gpu_description(g) for g in machine.gpus) or "no GPU"
    driver = f", driver {machine.nvidia_driver}" if machine.nvidia_driver else ""
    return f"machine {index + 1} ({gpus}{driver})"


def render_fleet(result: FleetPlan, fmt: str, indent: int | None = None) -> str:
    """Every target answered in format ``fmt`` (``indent``: the JSON's, None for one line)."""
    if fmt == "json":
        if indent is None:
            return json.dumps(fleet_document(result))  # one line
        from .json_text import indented

        return indented(fleet_document(result), indent)
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
    return _text(result, own)


def _text(result: FleetPlan, own: tuple[Plan, ...]) -> str:
    from ..resolver.steps import command_lines
    from .plan import render_text

    lines = [f"Targets:  {len(result.machines)}"]
    texts: dict[int, list[str]] = {}  # a plan's text, by the plan: one profile's targets share it
    for i, plan in enumerate(own):
        text = texts.get(id(plan))
        if text is None:
            text = texts[id(plan)] = [f"  {line}" for line in render_text(plan).splitlines()]
        lines += ["", f"Target {i + 1}: {machine_name(plan.machine, i)}", *text]
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


def _breaks(result: FleetPlan) -> list[str]:
    return [f"Breaks:   torch {cand.torch} {cand.variant} on {problem.name}: {problem.reason}"
            for cand in result.candidates for problem in cand.problems]


def fleet_document(result: FleetPlan) -> dict[str, Any]:
    """The fleet JSON (docs/fleet.md) as a dict."""
    own = result.own or result.plans

    def cand(c: Candidate) -> dict[str, Any]:
        first: dict[int, int] = {}  # id(a target's own plan) -> the first target of it that the candidate breaks
        problems = []
        for p in c.problems:
            earlier = first.setdefault(id(own[p.machine]), p.machine)
            problems.append({"machine": p.machine, "name": p.name, "reason": p.reason} if earlier == p.machine
                            else {"machine": p.machine, "same_as": earlier})
        return {"torch": c.torch, "variant": c.variant, "problems": problems}

    return {"choice": cand(result.choice) if result.choice else None,
            "candidates": [cand(c) for c in result.candidates],
            "plans": _documents(result.plans),
            "targets": _documents(own)}


def _documents(plans: tuple[Plan, ...]) -> list[dict[str, Any]]:
    """Each target's plan document; a target whose plan is an earlier target's (the one plan of their shared
    profile) is ``{"same_as": that target's index}``."""
    first: dict[int, int] = {}  # id(plan) -> the first target of it
    out: list[dict[str, Any]] = []
    for i, plan in enumerate(plans):
        earlier = first.setdefault(id(plan), i)
        out.append(plan_document(plan) if earlier == i else {"same_as": earlier})
    return out
