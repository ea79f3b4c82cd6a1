"""uv's project settings that change which torch a project installs, as ``uv lock`` and ``uv sync`` apply them:
``[tool.uv] constraint-dependencies`` (constraints on the resolution: on the torch family they bound the plan as
``-c`` lines do) and ``override-dependencies`` (a requirement that replaces every requirement on its package: the
project's own on it are replaced by it). What they say of other packages is uv's to apply; a note says so."""

from __future__ import annotations

from ..resolver.plan import Wanted
from ..resolver.request import PACKAGES
from .requirement_name import requirement_strings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


def apply_uv_settings(path: str, document: dict[str, Any], wanted: list[Wanted], notes: list[str]) -> list[Wanted]:
    """``wanted`` with the project's ``[tool.uv]`` constraints on the family added (as constraints) and its
    overrides in place of the requirements they override."""
    tool = document.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict):
        return wanted
    out = list(wanted)
    for key, constraint in (("constraint-dependencies", True), ("override-dependencies", False)):
        entries = requirement_strings(path, f"tool.uv.{key}", uv.get(key, []))
        family = [w for w in entries if w.name in PACKAGES]
        others = [w for w in entries if w.name not in PACKAGES]
        if constraint:
            out += [w._replace(constraint=True) for w in family]
        else:
            overridden = {w.name for w in entries}
            replaced = [w for w in out if w.name in overridden and not w.constraint]
            out = [w for w in out if w not in replaced] + [w for w in entries if w.name in
                                                           {r.name for r in replaced} | set(PACKAGES)]
            if family:
                notes.append(f"{path}: tool.uv.override-dependencies: {', '.join(w.text for w in family)} replace "
                             "every requirement on " + ", ".join(dict.fromkeys(str(w.name) for w in family)) +
                             " (uv's override): the project's own are left out; what another package declares "
                             "of torch still bounds the plan here")
        if others:
            notes.append(f"{path}: tool.uv.{key}: {', '.join(w.text for w in others[:3])}"
                         f"{', …' if len(others) > 3 else ''} {'are' if len(others) > 1 else 'is'} uv's to apply "
                         "(uv lock, uv sync)" + ("; a requirement of the project it overrides is replaced" if
                                                 not constraint else ""))
    return out

