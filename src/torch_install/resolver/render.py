"""Turn a Plan into text: ready pip/uv commands, requirements, pyproject entries, JSON, a human summary.

Every command pins the exact version with its local label (``torch==2.9.1+cu128``), so an installer can
neither keep an installed build of another flavour nor pull one from another index. Every argument is
shell-quoted (POSIX rules). ``FORMATS`` maps a ``--format`` name to its renderer.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence

from ..machine import Gpu
from .plan import Plan

NIGHTLY = "nightly"


def requirement_lines(plan: Plan) -> list[str]:
    """One pinned requirement per chosen package: ``name==version`` (bare name when the version is open)."""
    if plan.choice is None:
        return []
    return [f"{name}=={version}" if version else name for name, version in plan.choice.packages.items()]


def install_args(plan: Plan, installer: str = "pip") -> list[str]:
    """Arguments after ``pip install`` / ``uv pip install``: pins, pre-release switch, index."""
    args = requirement_lines(plan)
    if plan.request.channel == NIGHTLY:
        args += ["--pre"] if installer == "pip" else ["--prerelease", "allow"]
    if plan.choice is not None and plan.choice.index_url:
        args += ["--index-url", plan.choice.index_url]
    return args


def command_lines(plan: Plan) -> dict[str, str]:
    """Ready command lines ``{"pip": ..., "uv": ...}``; empty when the plan has no choice."""
    if plan.choice is None:
        return {}
    return {
        "pip": shlex.join(["python", "-m", "pip", "install", *install_args(plan, "pip")]),
        "uv": shlex.join(["uv", "pip", "install", *install_args(plan, "uv")]),
    }


def render_url(plan: Plan) -> str:
    """The index URL to install from; empty for the default index (or no choice)."""
    return plan.choice.index_url or "" if plan.choice else ""


def render_pip(plan: Plan) -> str:
    return command_lines(plan).get("pip", "")


def render_uv(plan: Plan) -> str:
    return command_lines(plan).get("uv", "")


def render_requirements(plan: Plan, hashes: Mapping[str, Sequence[str]] | None = None) -> str:
    """A requirements file: the index and pre-release options, then one pinned line per package
    (followed by its ``--hash=sha256:`` options when ``hashes`` maps the package name to digests)."""
    if plan.choice is None:
        return ""
    lines = [f"# {plan.choice.variant} build of torch {plan.choice.torch} for {machine_line(plan)}"]
    if plan.request.channel == NIGHTLY:
        lines.append("--pre")
    if plan.choice.index_url:
        lines.append(f"--index-url {plan.choice.index_url}")
    pins = requirement_lines(plan)
    if hashes:
        pins = [" \\\n    ".join([pin, *(f"--hash=sha256:{h}" for h in hashes.get(name, ()))])
                for pin, name in zip(pins, plan.choice.packages, strict=True)]
    return "\n".join(lines + pins)


def index_name(plan: Plan) -> str:
    """Name of the uv index entry: ``pytorch-cu128``, ``pytorch-nightly-cu128``."""
    assert plan.choice is not None
    channel = "" if plan.request.channel == "stable" else f"{plan.request.channel}-"
    return f"pytorch-{channel}{plan.choice.variant}"


def render_pyproject(plan: Plan) -> str:
    """pyproject.toml entries for a uv project: dependencies, an explicit index, and sources pinning to it."""
    if plan.choice is None:
        return ""
    lines = ["# Merge into pyproject.toml", "[project]", "dependencies = ["]
    lines += [f"  {json.dumps(req)}," for req in requirement_lines(plan)]
    lines.append("]")
    if plan.request.channel == NIGHTLY:
        lines += ["", "[tool.uv]", 'prerelease = "allow"']
    if plan.choice.index_url:
        name = index_name(plan)
        lines += ["", "[[tool.uv.index]]", f"name = {json.dumps(name)}", f"url = {json.dumps(plan.choice.index_url)}",
                  "explicit = true", "", "[tool.uv.sources]"]
        lines += [f"{package} = {{ index = {json.dumps(name)} }}" for package in plan.choice.packages]
    return "\n".join(lines)


def render_json(plan: Plan) -> str:
    """The documented Plan JSON (docs/plan-json.md)."""
    data = plan.to_dict()
    if not data["commands"]:
        data["commands"] = command_lines(plan)
    return json.dumps(data, indent=2)


def gpu_description(gpu: Gpu) -> str:
    """``NVIDIA GeForce RTX 4090 x2 (sm 8.9)``: name (or PCI id / vendor), count, architecture, flags."""
    label = gpu.name or (f"{gpu.vendor} GPU {gpu.pci_id}" if gpu.pci_id else f"{gpu.vendor} GPU")
    if gpu.count > 1:
        label += f" x{gpu.count}"
    details = [f"sm {gpu.compute_capability}" if gpu.compute_capability else "", gpu.gfx or "", gpu.family or "",
               "integrated" if gpu.integrated else "", "" if gpu.visible else "hidden"]
    details = [d for d in details if d]
    return f"{label} ({', '.join(details)})" if details else label


def machine_line(plan: Plan) -> str:
    """The machine in one line: platform, Python, GPUs, driver / ROCm, and what was assumed."""
    m = plan.machine
    parts = [" ".join(x for x in (m.os, m.arch) if x) or "unknown platform"]
    if m.glibc:
        parts[0] += f" (glibc {m.glibc})"
    parts.append(f"Python {m.python}" if m.python else "Python unknown")
    if m.gpus:
        parts.append(", ".join(gpu_description(g) for g in m.gpus))
    else:  # a driver without a listed GPU: the resolver chooses for an NVIDIA GPU of unknown model
        parts.append("NVIDIA GPU (model unknown)" if m.nvidia_driver else "no GPU")
    if m.nvidia_driver:
        parts.append(f"NVIDIA driver {m.nvidia_driver}")
    if m.rocm:
        parts.append(f"ROCm {m.rocm}")
    line = "; ".join(parts)
    if m.assumed:
        line += f" [assumed from this machine: {', '.join(m.assumed)}]"
    return one_line(line)


def one_line(text: str) -> str:
    """``text`` kept on one line of a rendered file or terminal: line breaks, escape sequences and other
    unprintable characters (from a GPU name, a profile note, an environment variable) written escaped."""
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def render_text(plan: Plan) -> str:
    """The human summary: machine, choice, why, the best rejected alternative, warnings, notes, command."""
    lines = [f"Machine:  {machine_line(plan)}"]
    choice = plan.choice
    if choice is None:
        lines.append(f"Choice:   none: no build of {', '.join(plan.request.packages)} fits this machine")
    else:
        where = choice.index_url or "the default index"
        kind = "GPU" if plan.gpu_accelerated else "CPU only"
        lines.append(f"Choice:   torch {choice.torch}, variant {choice.variant} ({kind}), from {where}")
    restated = f"torch {choice.torch}, variant {choice.variant} from {where}" if choice else None
    lines += [f"Why:      {reason}" for reason in plan.reasons if reason != restated]  # the Choice line says it
    if plan.rejected:
        best = plan.rejected[0]
        more = f" (+{len(plan.rejected) - 1} more, see --format json)" if len(plan.rejected) > 1 else ""
        reason = best.reason.removeprefix(f"{best.variant} rejected: ")
        if more or not any(reason in w.message for w in plan.warnings):  # else a warning already says it
            lines.append(f"Rejected: {best.variant} torch {best.torch}: {reason}{more}")
    lines += [f"Warning:  [{w.code}] {w.message}" for w in plan.warnings]
    lines += [f"Note:     {note}" for note in plan.notes]
    command = render_pip(plan)
    if command:
        lines.append(f"Command:  {command}")
    return "\n".join(one_line(line) for line in lines)


def render_dockerfile(plan: Plan) -> str:
    """A commented Dockerfile RUN step (torch_install.container)."""
    from ..container import render_dockerfile as render

    return render(plan)


def render_variant_env(plan: Plan) -> str:
    """WheelNext provider override variables for the plan's target (torch_install.container)."""
    from ..container import render_variant_env as render

    return render(plan)


FORMATS: dict[str, Callable[[Plan], str]] = {
    "text": render_text,
    "url": render_url,
    "pip": render_pip,
    "uv": render_uv,
    "requirements": render_requirements,
    "pyproject": render_pyproject,
    "json": render_json,
    "dockerfile": render_dockerfile,
    "variant-env": render_variant_env,
}
