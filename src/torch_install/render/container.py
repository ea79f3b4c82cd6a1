"""A Plan as container-build text: a commented Dockerfile ``RUN`` step, and the WheelNext provider override
variables for a GPU-less build. Every comment stays one line: a line break would start a Dockerfile instruction.
"""

from __future__ import annotations

import shlex

from ..display import one_line
from ..machine import Machine
from ..resolver.commands import installer_argv
from ..resolver.matrix import version_key
from ..resolver.pins import build_pins
from ..resolver.plan import Plan
from .plan import machine_line

IMAGE_CONSTRAINTS = "/etc/torch-install-constraints.txt"  # the build's pins in an image, named by PIP_CONSTRAINT


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


def image_platform(machine: Machine) -> bool:
    """Whether a container image can be the machine: its ``RUN`` lines run on Linux (an OS left open is taken as
    the image's)."""
    return machine.os in (None, "linux")


def render_dockerfile(plan: Plan) -> str:
    """A commented ``RUN`` step: pinned versions with local labels, the index URL, ``--no-cache-dir``. A plan for
    macOS or Windows is an input error: the image's python3 runs on Linux."""
    if not image_platform(plan.machine):
        from ..errors import InputError

        raise InputError(f"--format dockerfile: the plan is for {plan.machine.os} {plan.machine.arch or ''}".rstrip()
                         + ", and a Dockerfile's RUN lines run in a Linux image: plan for the image's platform "
                         "(--os linux --arch x86_64 or aarch64; --for-container where the build runs)")
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
    steps = [*_copies_and_runs(plan)]
    pins = build_pins(plan)
    if pins:  # later RUN lines (pip or uv) keep the chosen build
        steps += ["# Keep this build: later pip/uv installs in the image honour these constraints",
                  f"RUN printf '%s\\n' {' '.join(shlex.quote(p) for p in pins)} > {IMAGE_CONSTRAINTS}",
                  f"ENV PIP_CONSTRAINT={IMAGE_CONSTRAINTS} UV_CONSTRAINT={IMAGE_CONSTRAINTS}"]
    return "\n".join([*(one_line(line) for line in lines), *steps])


def _copies_and_runs(plan: Plan) -> list[str]:
    """A ``RUN`` per install step (python3: Debian/Ubuntu-based CUDA and ROCm images have no plain ``python``;
    every Linux image has python3), after a ``COPY`` of each file or directory of the build context a step reads
    (``-r FILE``, ``-e ./pkg``, a local path), at the same place under /tmp/torch-install in the image."""
    from ..errors import InputError
    from ..resolver.steps import Inexpressible, install_steps

    try:
        steps = install_steps(plan, "pip")
    except Inexpressible as exc:
        raise InputError(f"--format dockerfile: {exc}: write a requirements file with --format requirements "
                         "--hashes, COPY it and pip install -r it") from None
    copies: dict[str, str] = {}
    out: list[str] = []
    for step in steps:
        args = list(step)
        for i, arg in enumerate(args):
            follows = args[i - 1] if i else ""
            local = follows in ("-r", "-c", "-e") or arg.startswith(("./", "../"))
            if local and not arg.startswith("-") and "://" not in arg:
                image = copies.setdefault(arg, "/tmp/torch-install/" + arg.lstrip("./").replace("../", ""))
                args[i] = image
        out.append(f"RUN {shlex.join(installer_argv('pip', 'install', ['--no-cache-dir', *args], 'python3'))}")
    return [f"COPY {shlex.quote(source)} {shlex.quote(image)}" for source, image in copies.items()] + out


def render_variant_env(plan: Plan) -> str:
    """Provider override variables (``NAME=value``) that make a variant-aware installer pick for the target."""
    from ..wheelnext import override_env

    variant = plan.choice.variant if plan.choice else None
    env = override_env(plan.machine, variant)
    lines = [f"# WheelNext variant-provider overrides for: {machine_line(plan)}"]
    if plan.choice:
        lines.append(f"# resolved build: torch {plan.choice.torch} {plan.choice.variant}")
    lines += [f"# {note}" for note in env.notes]
    packages = [*plan.request.packages, *(w.text for w in plan.request.requirements if not w.constraint)]
    if plan.choice is not None and packages != ["torch"]:  # the project beyond the bare torch it is for
        from ..resolver.steps import ride_along_args

        lines.append(f"# then install the project with the variant-aware installer: {shlex.join(packages)}")
        if ride_along_args(plan):
            lines.append("# (or without one, pip: torch-install plan ... --format pip)")
    if not env.variables:
        lines.append("# no provider override applies: a variant-aware installer picks the null (CPU) variant")
    lines = [one_line(line) for line in lines]  # a comment stays a comment
    lines += [f"{name}={shlex.quote(value)}" for name, value in env.variables.items()]
    return "\n".join(lines)
