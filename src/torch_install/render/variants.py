"""The formats of ``torch-install variants``: the labels of a ``*-variants.json`` in the order a variant-aware
installer takes them for a machine, and why, as text or JSON. ``FORMATS`` names them; ``render(ranked, name)``
writes one."""

from __future__ import annotations

import json

from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..machine import Machine
    from ..wheelnext import LabelVerdict, Ranking, VariantsFile


class Ranked(Record):
    """A variants file's labels ranked for a machine, with the notes of reading its properties."""

    vfile: VariantsFile
    ranking: Ranking
    machine: Machine
    notes: tuple[str, ...]


def render_text(ranked: Ranked) -> str:
    from ..wheelnext import DIALECTS, INSTALLERS, index_variant, why_first
    from .plan import gpu_description

    vfile, ranking, machine, notes = ranked

    gpus = ", ".join(gpu_description(g) for g in machine.gpus) or "no GPU"
    driver = f"; CUDA driver {machine.cuda_driver_api}" if machine.cuda_driver_api else ""
    rocm = f"; ROCm {machine.rocm}" if machine.rocm else ""
    lines = [f"Metadata: {vfile.origin}: {DIALECTS[vfile.dialect]}",
             f"Installers: {INSTALLERS[vfile.dialect]}",
             f"Target:   {machine.os or '?'} {machine.arch or '?'}; {gpus}{driver}{rocm}"]
    choice = ranking.choice
    if choice is None:
        lines.append("Choice:   none: no label is compatible and there is no null variant")
    else:
        legacy = index_variant(choice.label, vfile.variants[choice.label])
        extra = f" (classic index variant: {legacy})" if legacy else ""
        lines.append(f"Choice:   {choice.label}{extra}")
    lines.append("Order (PEP 825: namespace, feature, value index of each property; null last):")
    for n, verdict in enumerate(ranking.ranked, 1):
        props = "; ".join(f"{m} [{','.join(map(str, m.key))}]" for m in verdict.matches) or "no properties"
        lines.append(f"  {n}. {verdict.label}: {props}")
    for a, b in zip(ranking.ranked, ranking.ranked[1:], strict=False):
        lines.append(f"  {a.label} before {b.label}: {why_first(a, b, vfile)}")
    if ranking.incompatible:
        lines.append("Not compatible:")
        for verdict in ranking.incompatible:
            lines.append(f"  {verdict.label}: {'; '.join(verdict.reasons)}")
    lines.append("Providers:")
    lines += [f"  {ns}: {how}" for ns, how in ranking.providers.items()]
    lines += [f"Note:     {note}" for note in notes]
    return "\n".join(lines)


def render_json(ranked: Ranked) -> str:
    from ..wheelnext import index_variant

    vfile, ranking, machine, notes = ranked

    def verdict(v: LabelVerdict) -> dict[str, object]:
        return {"label": v.label, "index_variant": index_variant(v.label, vfile.variants[v.label]),
                "properties": [{"property": str(m), "key": list(m.key)} for m in v.matches],
                "reasons": list(v.reasons)}

    data = {"source": vfile.origin, "schema": vfile.schema, "dialect": vfile.dialect,
            "choice": ranking.choice.label if ranking.choice else None,
            "ranked": [verdict(v) for v in ranking.ranked],
            "incompatible": [verdict(v) for v in ranking.incompatible],
            "providers": dict(ranking.providers), "notes": list(notes), "machine": machine.to_dict()}
    return json.dumps(data, indent=2)


_RENDERERS: dict[str, Callable[[Ranked], str]] = {"text": render_text, "json": render_json}
FORMATS = tuple(_RENDERERS)


def render(ranked: Ranked, name: str) -> str:
    """``ranked`` in format ``name`` (one of FORMATS)."""
    return _RENDERERS[name](ranked)
