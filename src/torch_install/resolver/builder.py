"""The plan being written: what the search found and said, accumulated until it becomes a :class:`Plan`.

The search (``choose.py``) decides; this builder only records: warnings (each once, its code checked), reasons,
notes, rejected builds, the environment the user must set, and what would get the newest matching release (its
needs, or why no change here would). ``finish`` turns it into the Plan, with the choice's packages and index URL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..machine import Machine
from .matrix import Matrix, Release
from .plan import Choice, Need, Plan, PlanWarning, Rejection, Request, Upgrade, check_code
from .rules import WEAK_CONFIDENCE, Blocker, companion_blocker, companion_candidates

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .companion_facts import Pick


class PlanBuilder:
    """One plan, written step by step."""

    __slots__ = ("machine", "request", "matrix", "companions", "warnings", "reasons", "notes", "rejected", "env",
                 "newest", "needs", "why_not", "gpu_wanted", "quiet", "picker", "specs")

    def __init__(self, machine: Machine, request: Request, matrix: Matrix, companions: Mapping[str, object]) -> None:
        self.machine = machine  # the machine as given (the search may compare a changed copy)
        self.request, self.matrix = request, matrix
        self.companions = tuple(companions)  # the requested companions (torchvision, torchaudio)
        self.specs: dict[str, Any] = dict(companions)  # their specifiers (SpecifierSet or AnyVersion)
        self.warnings: list[PlanWarning] = []
        self.reasons: list[str] = []
        self.notes: list[str] = []
        self.rejected: list[Rejection] = []
        self.env: dict[str, str] = {}
        self.newest: Release | None = None  # the newest release matching the request
        self.needs: list[Need] = []  # what would get the newest on the GPU
        self.why_not: str | None = None  # why no change would
        self.gpu_wanted = False  # the machine has a GPU of a vendor with builds
        self.quiet: set[str] = set()  # starts of rule notes another note already explains
        self.picker: Callable[[Release, str], tuple[Pick, ...]] | None = None  # the requested packages' builds
        for note in request.notes:
            self.note(note)

    def warn(self, code: str, message: str, about: str = "choice") -> None:
        """Add a warning (once); its code must be one of the plan's warning codes. ``about`` "newest": a reason the
        newest matching release was passed over, not a problem of the chosen build."""
        check_code(code)
        if not any(w.code == code and w.message == message for w in self.warnings):
            self.warnings.append(PlanWarning(code, message, about))

    def note(self, text: str) -> None:
        if text not in self.notes and not any(text.startswith(q) for q in self.quiet):
            self.notes.append(text)

    def need(self, need: Need | None) -> None:
        if need is not None and all(n.what != need.what for n in self.needs):
            self.needs.append(need)

    def block(self, blocker: Blocker, suffix: str = "") -> None:
        """A reason the newest release is out: its warning, and the change it asks for."""
        self.warn(blocker.code, blocker.reason + suffix, "newest")
        self.need(blocker.need)

    def reject(self, variant: str, torch: str, reason: str) -> None:
        self.rejected.append(Rejection(variant, torch, reason))

    def finish(self, release: Release | None, variant: str | None, gpu: bool, choice: Choice | None = None) -> Plan:
        """The plan: ``variant`` of ``release`` (None: no build fits), GPU-accelerated or not; ``choice``: a
        choice made elsewhere (a vendor index's build), taken as it is."""
        if choice is None:
            picks = self.picker(release, variant) if self.picker and release and variant else ()
            choice = self.choice(release, variant, picks) if release and variant else None
        if choice and release and variant:
            self.reasons.insert(0, f"torch {release.version}, variant {variant}"
                                + (f" from {choice.index_url}" if choice.index_url else " from the default index"))
            if choice.distribution == "pytorch-index":
                self.note_existence(release, variant)
            if self.request.channel != "stable":
                self.note(f"{self.request.channel} channel: versions are not in the matrix; the variant follows the "
                          f"rules of torch {release.version} and the installer picks the newest build")
        for key, value in self.env.items():
            self.reasons.append(f"set {key}={value} before importing torch")
        return Plan(machine=self.machine, request=self.request, choice=choice, gpu_accelerated=bool(choice and gpu),
                    reasons=tuple(self.reasons), warnings=tuple(self.warnings), rejected=tuple(self.rejected),
                    notes=tuple(self.notes), upgrade=self.upgrade(release, bool(choice and gpu)))

    def upgrade(self, release: Release | None, gpu: bool) -> Upgrade | None:
        """What would get the newest matching release (on the GPU), when the choice is not that."""
        newest = self.newest
        if newest is None or self.request.channel != "stable":
            return None
        if release is not None and release.version == newest.version and (gpu or not self.gpu_wanted):
            return None
        if not self.needs and not self.why_not:
            return None
        return Upgrade(newest.version, self.gpu_wanted and not self.why_not, tuple(self.needs), self.why_not)

    def note_existence(self, release: Release, variant: str) -> None:
        """Say when the chosen wheel's existence (not just its facts) rests on weak data. A live index confirms
        what it lists, and the default index's macOS wheels are read from the default index itself."""
        if variant in ("default", "cpu") or self.matrix.provenance is not None:
            return  # every release has a cpu build: nothing a user could check or act on
        build = f"torch {release.version}+{variant}"
        if variant in release.secondary:
            self.note(f"that {build} wheels exist rests on a secondary or inferred source only, not on PyTorch's "
                      "release matrix: the index may not have them")
        elif release.variants_confidence in ("inferred", "unverified", "assumed"):
            self.note(f"that {build} wheels exist is {release.variants_confidence}: the variant set of torch "
                      f"{release.version} is {release.variants_confidence}")

    def index_url(self, variant: str) -> str | None:
        base = self.request.index_base.rstrip("/")
        channel = self.matrix.channels.get(self.request.channel, self.request.channel)
        if variant == "default":
            if self.request.channel == "stable":
                return None
            variant = "cpu"  # pre-release macOS wheels live on the cpu index of the channel
        return "/".join(p for p in (base, channel, variant) if p)

    def choice(self, release: Release, variant: str, picks: tuple[Pick, ...] = ()) -> Choice:
        stable = self.request.channel == "stable"
        label = "" if variant == "default" else f"+{variant}"
        packages = {"torch": f"{release.version}{label}" if stable else ""}
        needed = {name: spec for p in picks for name, spec in self.family_needs(p, release).items()}
        for name in self.companions:
            version = needed.get(name) or self.companion_version(name, release, variant)
            if not stable or not version:
                packages[name] = ""
            else:
                packages[name] = version + (label if label and self.matrix.companion_labelled(name, version) else "")
        url = self.index_url(variant)
        return Choice(variant=variant, torch=release.version, index_url=url, packages=packages, companions=picks,
                      distribution="pytorch-index" if url else "default-index")

    def companion_version(self, name: str, release: Release, variant: str) -> str | None:
        """The companion version installed with ``variant`` of ``release``: its own match, unless the request rules
        that out, or it has no wheel here, and a decoupled release of the companion fits (a note says so)."""
        versions = self.matrix.companion_versions(name, release)
        fitting = companion_candidates(self.matrix, release, name, self.specs.get(name))
        platform = self.machine.platform or ""
        usable = [v for v in fitting if not companion_blocker(self.matrix, release, name, v, platform, self.machine,
                                                              variant)]
        chosen = next(iter((*usable, *fitting, *versions)), None)
        if chosen is not None and versions and chosen != versions[0]:
            facts = self.matrix.decoupled_companions.get(name, {}).get(chosen)
            why = "as asked" if fitting and chosen == fitting[0] else f"{name} {versions[0]} has no wheel here"
            self.note(f"{name} {chosen}, not {versions[0]}: {why}; {name} {chosen} pins no one torch (its metadata), "
                      f"and its wheels go with torch {release.version}"
                      + (f" (that it goes with torch from {facts.torch_from} is {facts.confidence})"
                         if facts and facts.confidence in WEAK_CONFIDENCE else ""))
        return chosen

    def family_needs(self, picked: Pick, release: Release) -> dict[str, str]:
        """The torchvision/torchaudio version a picked package pins (``==X``) where it differs from the release's
        own companion: the version it needs is the one installed (a note says so)."""
        package = self.matrix.packages.get(picked.name)
        facts = next((r for r in package.releases if r.version == picked.version), None) if package else None
        out: dict[str, str] = {}
        for name, spec in (facts.family.items() if facts else ()):
            if spec.startswith("==") and name in self.companions and spec[2:] != release.companions.get(name):
                out[name] = spec[2:]
                self.note(f"{name} {spec[2:]}, not {release.companions.get(name)}: {picked.name} {picked.version} "
                          f"requires {name}{spec}")
        return out
