"""What the rules outside the search (``platforms.py``, ``vendor_rules.py``) may use of it: the search's state
and the steps they build on, as a protocol that ``choose.Search`` fulfils. Only type checkers import it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..machine import Gpu, Machine
from .builder import PlanBuilder
from .companions import Bound
from .matrix import Matrix, Release
from .plan import Plan, Request
from .request import ParsedRequest
from .rules import Blocker, VendorPolicy, Verdict


class Search(Protocol):
    """One resolve in progress (``choose.Search``)."""

    plan: PlanBuilder  # the plan being written
    machine: Machine  # the machine the rules compare (a Jetson's driver is compared by its branch)
    matrix: Matrix
    request: Request
    req: ParsedRequest
    bound: list[Bound]  # requested packages built against one torch
    platform: str
    os: str
    variant: str | None  # --variant, or the build the pins' local labels name

    def pinned(self) -> str: ...

    def would_run(self) -> str: ...

    def candidates(self) -> list[Release]: ...

    def wanted(self) -> list[Release]: ...

    def matches(self, release: Release) -> bool: ...

    def decline(self, blocker: Blocker) -> Plan: ...

    def gates(self, release: Release) -> list[Blocker]: ...

    def cpu(self, release: Release) -> Plan: ...

    def verdicts(self, release: Release, policy: VendorPolicy, gpus: Sequence[Gpu]) -> list[Verdict]: ...

    def newest_with_code(self, policy: VendorPolicy, gpus: Sequence[Gpu]) -> tuple[Release, list[Verdict]] | None:
        ...
