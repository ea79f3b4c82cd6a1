"""The plan being written: what the search found and said, accumulated until it becomes a :class:`Plan`.

The search (``choose.py``) decides; this builder only records: warnings (each once, its code checked), reasons,
notes, rejected builds, the environment the user must set, and what would get the newest matching release (its
needs, or why no change here would). ``finish`` turns it into the Plan, with the choice's packages and index URL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..machine import Machine
from .matrix import Matrix, Release
from .plan import Choice, FileOption, Need, Plan, PlanWarning, Rejection, Request, Upgrade, check_code
from .request import COMPANIONS
from .rules import WEAK_CONFIDENCE, Blocker, companion_blocker, companion_candidates

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

    from .companion_facts import Pick
    from .companions import Bound


# options of a requirements file that name where packages come from
URL_OPTIONS = ("--index-url", "--extra-index-url", "--find-links")


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

    def leave_out(self, bound: Bound, why: str, build: str) -> Pick:
        """A requested package that cannot be installed with the build (``2.14.0+cu126``): the warning naming it
        and why, and its pick (it is left out of the commands, and changes nothing of the build)."""
        self.warn("constrained-by", f"{bound.text} ({bound.origin}): {why}; it is left out of the commands (it "
                                    f"cannot be installed with torch {build})")
        return bound.left_out()

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
        request = self.request
        if choice is not None and request.options and choice.distribution == "pytorch-index":
            request = request._replace(options=self.options_of_the_build(choice))
        return Plan(machine=self.machine, request=request, choice=choice, gpu_accelerated=bool(choice and gpu),
                    reasons=tuple(self.reasons), warnings=tuple(self.warnings), rejected=tuple(self.rejected),
                    notes=tuple(self.notes), upgrade=self.upgrade(release, bool(choice and gpu)))

    def options_of_the_build(self, choice: Choice) -> tuple[FileOption, ...]:
        """The requirements files' options, less those naming another build's packages (a PyG page for
        ``torch-2.7.0+cu118`` next to a chosen 2.7.1+cpu, the PyTorch index's cu118 next to cpu): they would let
        the installer take that build's wheels in a later step; a note names each one left out."""
        from .companions import build_of_url

        kept = []
        packages = self.matrix.packages
        minor = ".".join(choice.torch.split(".")[:2])
        variant = "cpu" if choice.variant == "default" else choice.variant
        for option in self.request.options:
            named = build_of_url(option.value, packages, self.request.index_base) \
                if option.value and option.option in URL_OPTIONS else None
            if named is not None and (named.torch or minor) == minor and named.variant in (None, variant):
                named = None
            if named is None:
                kept.append(option)
                continue
            self.note(f"{option.origin}: {option.option} {option.value} is where the builds for {named.words()} "
                      f"are, not those for torch {choice.torch}+{choice.variant}: left out of the commands")
        return tuple(kept)

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
        needed: dict[str, str] = {}
        for p in picks:
            for name, pinned in self.family_needs(p, release, variant).items():
                needed.setdefault(name, pinned)
                if pinned != release.companions.get(name):
                    self.note(f"{name} {pinned}, not {release.companions.get(name)}: {p.name} {p.version} "
                              f"requires {name}{self.family_of(p).get(name, '')}")
        for name in (*self.companions, *(n for n in COMPANIONS if n in needed and n not in self.companions)):
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
        spec = self.specs.get(name)
        if spec is not None and str(spec) and not self.matrix.knows_companion(name, spec):
            self.warn("release-unknown", f"{name}{spec}: no {name} release of the table matches it, so which torch "
                                         "it goes with is not checked here; it is installed as asked (the installer "
                                         "finds it)")
            return None
        fitting = companion_candidates(self.matrix, release, name, spec)
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

    def family_of(self, picked: Pick) -> Mapping[str, str]:
        """What a picked package's release requires of torchvision/torchaudio (its Requires-Dist): name -> its
        specifier ("==0.29.0", ">=2.5", "" for a bare name)."""
        package = self.matrix.packages.get(picked.name) if picked.version else None
        facts = next((r for r in package.releases if r.version == picked.version), None) if package else None
        return facts.family if facts is not None else {}

    def family_needs(self, picked: Pick, release: Release, variant: str) -> dict[str, str]:
        """The torch family members a picked package requires, each at the version installed with the build
        (``variant`` of ``release``), from its index: the version it pins (``==X``), else the newest its specifier
        allows of those that go with the release, one with a build of the variant here first."""
        out: dict[str, str] = {}
        platform = self.machine.platform or ""
        for name, spec in self.family_of(picked).items():
            if spec.startswith("==") and "*" not in spec and "," not in spec:
                out[name] = spec[2:]
                continue
            fitting = [v for v in companion_candidates(self.matrix, release, name, self.specs.get(name))
                       if _allows(spec, v)]
            usable = [v for v in fitting
                      if not companion_blocker(self.matrix, release, name, v, platform, self.machine, variant)]
            chosen = next(iter((*usable, *fitting)), None)
            if chosen is not None:
                out[name] = chosen
        return out

    def family_without(self, picked: Pick, release: Release, variant: str) -> str | None:
        """Why a family member a picked package requires has no build to install with ``variant`` of ``release``
        here ("vllm 0.34.0 requires torchaudio==2.11.0, which has no cu132 build …"), or None."""
        platform = self.machine.platform or ""
        for name, version in self.family_needs(picked, release, variant).items():
            blocker = companion_blocker(self.matrix, release, name, version, platform, self.machine, variant)
            if blocker is not None:
                return f"{picked.name} {picked.version} requires {name}=={version}: {blocker.reason}"
        return None


def _allows(spec: str, version: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return not spec or SpecifierSet(spec).contains(version, prereleases=True)
