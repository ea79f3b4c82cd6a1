"""The resolver: machine profile + request + compatibility matrix -> Plan (pure; rules in resolve.py)."""

from __future__ import annotations

from .matrix import Matrix, load_matrix
from .plan import Plan, Request
from .resolve import resolve  # binds the function over the submodule of the same name

__all__ = ["Matrix", "Plan", "Request", "load_matrix", "resolve"]
