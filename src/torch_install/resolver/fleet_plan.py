"""What a fleet's resolve found (``fleet.resolve_fleet``): each target's plan, the build that runs on every target,
and the candidates tried with the targets each breaks. ``render/fleet.py`` writes it in every format."""

from __future__ import annotations

from ..records import Record

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from .plan import Plan


class NodeProblem(Record):
    """Why a candidate build does not run on one target."""

    machine: int  # index into the fleet
    name: str  # the machine's description (its GPUs and driver)
    reason: str


class Candidate(Record):
    """A (torch, variant) build tried on the whole fleet, and the targets it breaks on."""

    torch: str
    variant: str
    problems: tuple[NodeProblem, ...] = ()


class FleetPlan(Record):
    machines: tuple[Machine, ...]
    plans: tuple[Plan, ...]  # per machine, for the chosen build (or each machine's own best when none fits)
    choice: Candidate | None  # the build that runs on all machines
    candidates: tuple[Candidate, ...]  # everything tried, best first
    own: tuple[Plan, ...] = ()  # per machine, its own best build

    @property
    def plan(self) -> Plan | None:
        """A representative plan for the common build (the first machine's), for pip/uv/dockerfile output."""
        return self.plans[0] if self.choice and self.plans else None
