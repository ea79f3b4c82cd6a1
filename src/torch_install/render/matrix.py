"""The formats of ``torch-install matrix``: the releases and variants a platform and Python have, as text or JSON.
``FORMATS`` names them; ``render(listing, name)`` writes one."""

from __future__ import annotations

import json

from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..machine import Machine
    from ..resolver.matrix import Matrix

ASSUMED_MARK = "*"


class Listing(Record):
    """The releases shown for a machine (``rows``), newest first, and where they come from."""

    machine: Machine
    rows: list[dict[str, Any]]
    source: str  # "embedded matrix", "index https://…"


def rows(matrix: Matrix, machine: Machine) -> list[dict[str, Any]]:
    """One row per release with wheels for the machine's platform (and Python, when known), newest first."""
    platform = machine.platform or ""
    provenance = matrix.provenance or {}
    out = []
    for release in matrix.releases:
        variants = release.variants(platform)
        pythons = release.python_tags(platform)
        if not variants or (machine.python and pythons and machine.python not in pythons):
            continue
        out.append({"torch": release.version, "date": release.date, "variants": variants,
                    "assumed": [v for v in variants if f"{release.version}+{v}" in provenance],
                    "python": list(pythons)})
    return out


def render_text(listing: Listing) -> str:
    table, machine, source = listing.rows, listing.machine, listing.source
    python = f"Python {machine.python}" if machine.python else "any Python"
    lines = [f"torch releases for {machine.platform}, {python} ({source})"]
    if not table:
        return "\n".join([*lines, "  none"])
    width = max(len("torch"), *(len(r["torch"]) for r in table))
    lines.append(f"{'torch':<{width}}  {'released':<10}  variants")
    for row in table:
        names = " ".join(v + (ASSUMED_MARK if v in row["assumed"] else "") for v in row["variants"])
        lines.append(f"{row['torch']:<{width}}  {row['date'] or '-':<10}  {names}")
    if any(r["assumed"] for r in table):
        lines.append(f"{ASSUMED_MARK} found on the index, not in the embedded matrix: rules assumed")
    return "\n".join(lines)


def render_json(listing: Listing) -> str:
    return json.dumps({"platform": listing.machine.platform, "python": listing.machine.python,
                       "source": listing.source, "releases": listing.rows}, indent=2)


_RENDERERS: dict[str, Callable[[Listing], str]] = {"text": render_text, "json": render_json}
FORMATS = tuple(_RENDERERS)


def render(listing: Listing, name: str) -> str:
    """``listing`` in format ``name`` (one of FORMATS)."""
    return _RENDERERS[name](listing)
