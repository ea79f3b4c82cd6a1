"""The resolver: machine profile + request + compatibility matrix -> Plan, as a pure function (no I/O).

Entry points: ``resolve(machine, request, matrix)`` and ``load_matrix()``. Modules: ``variants`` (variant ids),
``request`` (the checked request), ``matrix`` (the embedded compatibility matrix), ``rules`` (per-vendor usability
checks and the vendor policy table), ``choose`` (the search and its warnings), ``plan`` (Request, Plan, warning
codes), ``steps`` (the plan as installer steps and command lines) and ``commands`` (the installer argv builder).

The entry points are loaded when first asked for (PEP 562), so that a front end importing one small module of
the package (the channel list, a variant id check) does not load the whole resolver: ``torch-install --version``
and ``--help`` run 20-30 % fewer instructions.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .choose import resolve
    from .matrix import Matrix, load_matrix
    from .plan import Plan, Request

__all__ = ["Matrix", "Plan", "Request", "load_matrix", "resolve"]
_HOME = {"resolve": "choose", "Matrix": "matrix", "load_matrix": "matrix", "Plan": "plan", "Request": "plan"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
