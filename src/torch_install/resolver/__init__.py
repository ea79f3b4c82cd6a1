"""The resolver: machine profile + request + compatibility matrix -> Plan (pure; see resolve.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .matrix import Matrix, load_matrix
from .plan import Plan, Request

if TYPE_CHECKING:
    from ..machine import Machine


def resolve(machine: Machine, request: Request, matrix: Matrix) -> Plan:
    """Choose the torch release and wheel variant for ``machine`` (no I/O). See resolver/resolve.py."""
    from .resolve import resolve as _resolve

    globals()["resolve"] = _entry  # importing the submodule rebinds the package's ``resolve`` to the module
    return _resolve(machine, request, matrix)


_entry = resolve


__all__ = ["Matrix", "Plan", "Request", "load_matrix", "resolve"]
