"""A Plan as text: the human summary, ready pip/uv commands, requirements, pyproject entries, JSON.

Every argument is shell-quoted (POSIX rules) and every value from a machine, profile or index is kept on one
line (``display.one_line``). Commands come from ``resolver.commands``, the plan's own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..display import one_line
from ..hosts import insecure_host
from ..machine import DRIVER_FROM_CUDA_VERSION, Gpu
from ..markers import platform_marker as machine_marker
from ..resolver.commands import PRE_RELEASE_CHANNEL
from ..resolver.plan import Plan, requirement_lines
from ..resolver.platforms import musl_of


def render_url(plan: Plan) -> str:
    """The index URL to install from; empty for the default index (or no choice)."""
    return plan.choice.index_url or "" if plan.choice else ""


def render_pip(plan: Plan) -> str:
    return _command(plan, "pip")


def render_uv(plan: Plan) -> str:
    return _command(plan, "uv")


def _command(plan: Plan, installer: str) -> str:
    """The plan's command line; an InputError when a command line cannot carry the project."""
    if plan.choice is not None and not plan.commands:
        from ..errors import InputError
        from ..resolver.plan import Inexpressible, install_steps

        try:
            install_steps(plan, installer)
        except Inexpressible as exc:
            raise InputError(f"--format {installer}: {exc}; 'torch-install install' installs it with them, "
                             "and --format requirements --hashes writes a file that keeps them") from None
    return plan.commands.get(installer, "")


def render_requirements(plan: Plan, hashes: Mapping[str, Sequence[str]] | None = None) -> str:
    """A requirements file: the index and pre-release options, then one pinned line per package
    (followed by its ``--hash=sha256:`` options when ``hashes`` maps the package name to digests)."""
    if plan.choice is None:
        return ""
    lines = [f"# {plan.choice.variant} build of torch {plan.choice.torch} for {machine_line(plan)}"]
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        lines.append("--pre")
    if plan.choice.index_url:
        lines.append(f"--index-url {plan.choice.index_url}")
        trusted = insecure_host(plan.choice.index_url)
        if trusted:
            lines.append(f"--trusted-host {trusted}")
    pins = requirement_lines(plan)
    if hashes:
        lines += HASHES_LIMIT
        pins = [" \\\n    ".join([pin, *(f"--hash=sha256:{h}" for h in hashes.get(name, ()))])
                for pin, name in zip(pins, plan.choice.packages, strict=True)]
    return "\n".join(lines + pins)


# pip's --require-hashes mode wants every package of the install pinned and hashed, dependencies included; the
# plan pins the torch family only (its dependencies are the installer's to resolve)
HASHES_LIMIT = ["# The hashes cover the torch family's own wheels. pip --require-hashes also wants each dependency",
                "# (filelock, sympy, nvidia-* ...) pinned and hashed: for a complete locked file, run",
                "#   uv pip compile --generate-hashes THIS_FILE -o requirements.lock"]


def render_constraints(plan: Plan) -> str:
    """A constraints file pinning the chosen build (``pin.py``): later installs keep it."""
    from ..environment.pin import render_constraints as constraints

    return constraints(plan)


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
    if plan.request.channel == PRE_RELEASE_CHANNEL:
        lines += ["", "[tool.uv]", 'prerelease = "allow"']
    if plan.choice.index_url:
        name = index_name(plan)
        lines += ["", "[[tool.uv.index]]", f"name = {json.dumps(name)}", f"url = {json.dumps(plan.choice.index_url)}",
                  "explicit = true", "", "[tool.uv.sources]"]
        lines += [f"{package} = {{ index = {json.dumps(name)} }}" for package in plan.choice.packages]
    return "\n".join(lines)


def render_pyproject_platforms(plans: Sequence[Plan], requires_python: str | None) -> str:
    """pyproject.toml entries for a uv project that runs on several platforms: each platform's build, chosen for
    it, through ``[tool.uv.sources]`` entries with ``sys_platform``/``platform_machine`` markers and one explicit
    ``[[tool.uv.index]]`` per index (a platform whose build is the default index's has no source entry), and the
    ``requires-python`` floor of the chosen releases (a wider range makes ``uv lock`` fail for the Pythons they
    have no wheels for)."""
    chosen = [p for p in plans if p.choice is not None]
    if not chosen:
        return ""
    lines = ["# Merge into pyproject.toml: one build per platform"]
    if requires_python:
        lines += ["[project]", f"requires-python = {json.dumps('>=' + requires_python)}", "dependencies = ["]
    else:
        lines += ["[project]", "dependencies = ["]
    names = list(dict.fromkeys(name for p in chosen for name in p.choice.packages))  # type: ignore[union-attr]
    for name in names:
        versions = {(p.choice.packages.get(name) or "").split("+")[0] for p in chosen}  # type: ignore[union-attr]
        if len(versions) == 1 and "" not in versions:
            lines.append(f"  {json.dumps(f'{name}=={versions.pop()}')},")
            continue
        for p in chosen:
            version = (p.choice.packages.get(name) or "").split("+")[0]  # type: ignore[union-attr]
            lines.append(f"  {json.dumps(f'{name}=={version}; {machine_marker(p.machine)}' if version else name)},")
    lines.append("]")
    indexes = {index_name(p): p.choice.index_url for p in chosen if p.choice and p.choice.index_url}
    for name, url in indexes.items():
        lines += ["", "[[tool.uv.index]]", f"name = {json.dumps(name)}", f"url = {json.dumps(url)}", "explicit = true"]
    if indexes:
        lines += ["", "[tool.uv.sources]"]
        for package in names:
            entries = [f"{{ index = {json.dumps(index_name(p))}, marker = {json.dumps(machine_marker(p.machine))} }}"
                       for p in chosen if p.choice and p.choice.index_url and package in p.choice.packages]
            if entries:
                lines.append(f"{package} = [\n  " + ",\n  ".join(entries) + ",\n]")
    return "\n".join(lines)


def render_json(plan: Plan) -> str:
    """The documented Plan JSON (docs/plan-json.md)."""
    return json.dumps(plan.to_dict(), indent=2)


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
    parts.append(f"Python {m.python}" if m.python else "Python unknown")
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
        lines = [f"Choice:   none: no build of {', '.join(plan.request.packages)} fits this machine"]
    else:
        where = choice.index_url or "the default index"
        kind = "GPU" if plan.gpu_accelerated else "CPU only"
        lines = [f"Choice:   torch {choice.torch}, variant {choice.variant} ({kind}), from {where}"]
    restated = f"torch {choice.torch}, variant {choice.variant} from {where}" if choice else None
    lines += [f"Why:      {reason}" for reason in plan.reasons if reason != restated]  # the Choice line says it
    return [one_line(line) for line in lines]


def warning_lines(plan: Plan) -> list[str]:
    """The plan's warnings as stderr lines: ``[code] message``, each kept on one line."""
    return [one_line(f"[{w.code}] {w.message}") for w in plan.warnings]


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
    lines += [f"Note:     {note}" for note in plan.notes]
    command = render_pip(plan)
    if command:
        lines.append(f"Command:  {command}")
    if plan.upgrade is not None:
        lines.append(f"Newest:   {plan.upgrade.text()}")
    return "\n".join(one_line(line) for line in lines)
