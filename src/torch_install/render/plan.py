"""A Plan as text: the human summary, ready pip/uv commands, requirements, pyproject entries, JSON.

Every argument is shell-quoted (POSIX rules) and every value from a machine, profile or index is kept on one
line (``display.one_line``). Commands come from ``resolver.commands``, the plan's own.
"""

from __future__ import annotations

from ..display import one_line
from ..machine import DRIVER_FROM_CUDA_VERSION, Gpu
from ..resolver.plan import Plan
from ..resolver.platforms import musl_of
from ..resolver.steps import command_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def render_url(plan: Plan) -> str:
    """The index URL to install from; empty for the default index (or no choice)."""
    return plan.choice.index_url or "" if plan.choice else ""


def render_pip(plan: Plan) -> str:
    return _command(plan, "pip")


def render_uv(plan: Plan) -> str:
    return _command(plan, "uv")


def _command(plan: Plan, installer: str) -> str:
    """The plan's command line; an InputError when a command line cannot carry the project."""
    commands = command_lines(plan)
    if plan.choice is not None and not commands:
        from ..errors import InputError
        from ..resolver.steps import Inexpressible, install_steps

        try:
            install_steps(plan, installer)
        except Inexpressible as exc:
            raise InputError(f"--format {installer}: {exc}; 'torch-install install' installs it with them, "
                             "and --format requirements --hashes writes a file that keeps them") from None
    return commands.get(installer, "")


def render_json(plan: Plan) -> str:
    """The documented Plan JSON (docs/plan-json.md), indented by 2."""
    from .json_text import indented

    return indented(plan_document(plan))


def plan_document(plan: Plan) -> dict[str, Any]:
    """The Plan JSON as a dict: the plan's fields, then its ready command lines (``{"pip": ..., "uv": ...}``)."""
    return {**plan.to_dict(), "commands": command_lines(plan)}


def gpu_description(gpu: Gpu) -> str:
    """``NVIDIA GeForce RTX 4090 x2 (sm 8.9)``: label, count, architecture, flags."""
    label = gpu.label
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
    libc = musl_of(m)
    if libc or m.glibc:
        parts[0] += f" ({libc or f'glibc {m.glibc}'})"
    python = f"{m.python_full}t" if m.python_full and (m.python or "").endswith("t") else m.python_full or m.python
    parts.append(f"Python {python}" if python else "Python unknown")
    if m.gpus:
        parts.append(", ".join(gpu_description(g) for g in m.gpus))
    else:  # a driver without a listed GPU: the resolver chooses for an NVIDIA GPU of unknown model
        parts.append("NVIDIA GPU (model unknown)" if m.nvidia_driver else "no GPU")
    if m.nvidia_driver and m.sources.get("nvidia_driver", "").startswith(DRIVER_FROM_CUDA_VERSION):
        parts.append(f"NVIDIA driver ≥ {m.nvidia_driver} (CUDA {m.cuda_driver_api} reported)")
    elif m.nvidia_driver:
        parts.append(f"NVIDIA driver {m.nvidia_driver}")
    if m.rocm:
        parts.append(f"ROCm {m.rocm}")
    line = "; ".join(parts)
    if m.assumed:
        line += f" [assumed from this machine: {', '.join(m.assumed)}]"
    return one_line(line)


def choice_lines(plan: Plan) -> list[str]:
    """The summary's Choice line and its Why lines (also what ``install`` says before it runs the installer)."""
    choice = plan.choice
    if choice is None:
        from ..resolver.references import shown_requirements

        lines = [f"Choice:   none: no build of {', '.join(shown_requirements(plan.request.packages))} fits this "
                 "machine"]
    else:
        where = choice.index_url or "the default index"
        kind = "GPU" if plan.gpu_accelerated else "CPU only"
        source = f"{choice.vendor_index.name}, " if choice.vendor_index else ""
        torch = choice.torch or "nightly"
        lines = [f"Choice:   torch {torch}, variant {choice.variant} ({kind}), from {source}{where}"]
    restated = f"torch {choice.torch or 'nightly'}, variant {choice.variant} from {where}" if choice else None
    lines += [f"Why:      {reason}" for reason in plan.reasons if reason != restated]  # the Choice line says it
    return [one_line(line) for line in lines]


def warning_lines(plan: Plan) -> list[str]:
    """The plan's warnings as stderr lines: ``[code] message``, each kept on one line."""
    return [one_line(f"[{w.code}] {w.message}") for w in plan.warnings]


def note_lines(plan: Plan) -> list[str]:
    """The plan's notes as lines of the summary: ``Note:     …``, each kept on one line."""
    return [one_line(f"Note:     {note}") for note in plan.notes]


def render_text(plan: Plan, with_warnings: bool = True, every_rejection: bool = False) -> str:
    """The human summary: machine, choice, why, the best rejected alternative, warnings, notes, command. The
    command line leaves the warnings out (``with_warnings``) and writes them on stderr (``warning_lines``)."""
    lines = [f"Machine:  {machine_line(plan)}", *choice_lines(plan)]
    if every_rejection:
        lines += [f"Rejected: {r.variant} torch {r.torch}: {r.reason.removeprefix(f'{r.variant} rejected: ')}"
                  for r in plan.rejected]
    elif plan.rejected:
        best = plan.rejected[0]
        more = f" (+{len(plan.rejected) - 1} more, see --format json)" if len(plan.rejected) > 1 else ""
        reason = best.reason.removeprefix(f"{best.variant} rejected: ")
        if more or not any(reason in w.message for w in plan.warnings):  # else a warning already says it
            lines.append(f"Rejected: {best.variant} torch {best.torch}: {reason}{more}")
    if with_warnings:
        lines += [f"Warning:  [{w.code}] {w.message}" for w in plan.warnings]
    lines += note_lines(plan)
    command = command_lines(plan).get("pip", "")
    if command:
        lines.append(f"Command:  {command}")
    elif plan.choice is not None:
        lines.append("Command:  none on one line: the project's --hash options cannot go on a command line (see the "
                     "note)")
    if plan.upgrade is not None:
        lines.append(f"Newest:   {plan.upgrade.text()}")
    return "\n".join(one_line(line) for line in lines)
