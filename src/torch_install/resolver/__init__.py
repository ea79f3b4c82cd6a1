"""The resolver: machine profile + request + compatibility matrix -> Plan, as a pure function (no I/O).

Entry points: ``resolve(machine, request, matrix)`` and ``load_matrix()``. Modules: ``matrix`` (the embedded
compatibility matrix and variant helpers), ``rules`` (per-vendor usability checks), ``choose`` (the search and
its warnings), ``plan`` (Request, Plan, warning codes), ``render`` (a plan in each output format).
"""

from __future__ import annotations

from .choose import resolve
from .matrix import Matrix, load_matrix
from .plan import Plan, Request

__all__ = ["Matrix", "Plan", "Request", "load_matrix", "resolve"]
