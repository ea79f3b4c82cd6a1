"""The doctor's human report: what is installed, then findings grouped by severity, each with evidence and fix."""

from __future__ import annotations

import json

from ..display import one_line
from ..resolver.request import COMPANIONS
from . import Report

_HEADINGS = {"error": "Errors", "warning": "Warnings", "info": "Notes"}


def _machine_line(report: Report) -> str:
    m = report.machine
    parts = [p for p in (m.os, m.arch) if p]
    gpus = ", ".join(g.label + (f" ×{g.count}" if g.count > 1 else "") for g in m.gpus)
    parts.append(gpus or ("no GPU found" if report.hardware_known else "GPUs not stated in the profile"))
    if m.nvidia_driver:
        parts.append(f"NVIDIA driver {m.nvidia_driver}")
    if m.rocm:
        parts.append(f"ROCm {m.rocm}")
    return ", ".join(parts)


def render_text(report: Report) -> str:
    interp = report.installed.interpreter
    rows = [("Python", f"{interp.version} {interp.executable}")]
    if report.torch is not None:
        dist = report.installed.dist("torch")
        how = f", installed by {dist.installer}" if dist and dist.installer else ""
        rows.append(("torch", f"{report.torch.version} ({report.torch.variant}){how}"))
    else:
        rows.append(("torch", "not installed"))
    for name in COMPANIONS:
        dist = report.installed.dist(name)
        if dist is not None:
            rows.append((name, dist.version))
    rows.append(("machine", _machine_line(report)))
    if report.runtime is not None:
        facts = report.runtime.facts
        backend = facts.get("backend") or "none"
        rows.append(("runtime", f"import torch: {'ok' if report.runtime.ok else 'failed'}; GPU backend: {backend}"))
        devices = facts.get("devices")
        for device in devices if isinstance(devices, list) else []:
            rows.append(("", f"{device.get('name')} (capability {device.get('capability')})"))
    width = max(len(label) for label, _ in rows) + 2  # one column for the values, however long a name
    lines = [f"{label:<{width}}{value}" for label, value in rows]
    lines.append("")
    if report.healthy:
        lines.append("Healthy: this PyTorch install fits this machine.")
    for severity in ("error", "warning", "info"):
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        lines.append(f"{_HEADINGS[severity]} ({len(group)})")
        for finding in group:
            lines.append(f"  [{finding.code}] {finding.title}")
            lines += [f"      - {line}" for line in finding.evidence]
            if finding.fix:
                lines.append(f"      fix: {finding.fix}")
        lines.append("")
    if report.fix is not None and not report.healthy:
        lines.append(f"Fix ({report.fix.reason}):")
        lines.append(f"  {report.fix.command}")
        if report.fix.space_free_gb is not None:
            lines.append(f"  ({report.fix.space_free_gb:.1f} GB free where packages go)")
    return "\n".join(one_line(line) for line in lines).rstrip() + "\n"  # nothing from the machine forges a line


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2)
