"""The resolver: machine profile + request + compatibility matrix -> Plan (pure; rules in choose.py)."""

from __future__ import annotations

from .choose import resolve
from .matrix import Matrix, load_matrix
from .plan import Plan, Request

__all__ = ["Matrix", "Plan", "Request", "load_matrix", "resolve"]
