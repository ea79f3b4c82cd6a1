"""A Plan as container-build text: a commented Dockerfile ``RUN`` step, and the WheelNext provider override
variables for a GPU-less build. Every comment stays one line: a line break would start a Dockerfile instruction.
"""

from __future__ import annotations

import shlex

from ..display import one_line
from ..environment.pin import IMAGE_CONSTRAINTS, constraint_lines
from ..machine import Machine
from ..resolver.commands import installer_argv
from ..resolver.matrix import version_key
from ..resolver.plan import Plan, install_args
from .plan import machine_line


def target_source_lines(machine: Machine) -> list[str]:
    """Where the target's hardware facts came from (hint sources first), one line each."""
    keys = ("cuda_driver_api", "nvidia_driver", "rocm")
    return [f"{k}: {machine.sources[k]}" for k in keys if k in machine.sources]


def newest_release_lines(plan: Plan) -> list[str]:
    """Why the newest release considered is not the choice (from the plan's rejections)."""
    if plan.choice is None or not plan.rejected:
        return []

    newest = max((r.torch for r in plan.rejected), key=version_key)
    if version_key(newest) <= version_key(plan.choice.torch):
        return []
    return [f"torch {r.torch} {r.variant}: {r.reason}" for r in plan.rejected if r.torch == newest]


def render_dockerfile(plan: Plan) -> str:
    """A commented ``RUN`` step: pinned versions with local labels, the index URL, ``--no-cache-dir``."""
    if plan.choice is None:  # every comment is one line: a line break would start a Dockerfile instruction
        return "# torch-install: no build fits the target\n" + "".join(f"# {one_line(w.message)}\n"
                                                                        for w in plan.warnings)
    choice = plan.choice
    lines = [f"# torch-install: torch {choice.torch} ({choice.variant}) resolved for: {machine_line(plan)}"]
    lines += [f"#   {line}" for line in target_source_lines(plan.machine)]
    lines += [f"# Why: {reason}" for reason in plan.reasons]
    newest = newest_release_lines(plan)
    if newest:
        lines.append("# Not the newest release:")
        lines += [f"#   {line}" for line in newest]
    lines += [f"# Warning [{w.code}]: {w.message}" for w in plan.warnings]
    lines += [f"# Note: {n}" for n in (*plan.notes, *plan.machine.notes)]
    # python3: Debian/Ubuntu-based CUDA and ROCm images have no plain `python`; every Linux image has python3
    args = installer_argv("pip", "install", ["--no-cache-dir", *install_args(plan, "pip")], "python3")
    steps = [f"RUN {shlex.join(args)}"]
    pins = constraint_lines(plan)
    if pins:  # later RUN lines (pip or uv) keep the chosen build
        steps += ["# Keep this build: later pip/uv installs in the image honour these constraints",
                  f"RUN printf '%s\\n' {' '.join(shlex.quote(p) for p in pins)} > {IMAGE_CONSTRAINTS}",
                  f"ENV PIP_CONSTRAINT={IMAGE_CONSTRAINTS} UV_CONSTRAINT={IMAGE_CONSTRAINTS}"]
    return "\n".join([*(one_line(line) for line in lines), *steps])


def render_variant_env(plan: Plan) -> str:
    """Provider override variables (``NAME=value``) that make a variant-aware installer pick for the target."""
    from ..wheelnext import override_env

    variant = plan.choice.variant if plan.choice else None
    env = override_env(plan.machine, variant)
    lines = [f"# WheelNext variant-provider overrides for: {machine_line(plan)}"]
    if plan.choice:
        lines.append(f"# resolved build: torch {plan.choice.torch} {plan.choice.variant}")
    lines += [f"# {note}" for note in env.notes]
    if not env.variables:
        lines.append("# no provider override applies: a variant-aware installer picks the null (CPU) variant")
    lines = [one_line(line) for line in lines]  # a comment stays a comment
    lines += [f"{name}={shlex.quote(value)}" for name, value in env.variables.items()]
    return "\n".join(lines)
