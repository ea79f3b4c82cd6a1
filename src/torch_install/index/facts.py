"""What an index offers a target: its torch releases, and per release the variants, Pythons and platform floors
of the wheels that match the target's tags. The cache stores this small form, so a warm lookup never re-reads
a large listing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..profile_tags import TargetTags
from ..records import Record
from ..resolver.variants import variant_of_label, variant_order
from ..wheel_tags import python_of_tag, python_sort_key, target_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:  # the page module (urllib.parse) is not imported on a warm lookup
    from ..machine import Machine
    from .pages import IndexFile, PageWheels

FACTS_FORMAT = 1


class ReleaseFacts(Record):
    """What the index lists of one release for the target: variants, and per-platform facts of their wheels."""

    version: str
    variants: tuple[str, ...]  # variant ids whose wheels match the target's tags (no match: those of other Pythons)
    python: tuple[str, ...]  # Pythons with a wheel for the target's platform (any variant)
    requires_python: str | None = None
    glibc: str | None = None  # lowest manylinux glibc among the matching wheels
    macos: str | None = None  # lowest macOS among the matching wheels
    default_build: str | None = None  # the default index's wheel for the target: cu130, cpu (its CUDA pins)
    wheel_url: str | None = None  # one wheel of it matching the target's tags


class IndexFacts(Record):
    """Releases the index offers the target (newest first) and where that knowledge came from."""

    base: str
    releases: tuple[ReleaseFacts, ...]
    fetched_at: float
    stale_error: str | None = None  # set when a refresh failed and cached pages were used
    pages: tuple[str, ...] = ()

    def release(self, version: str) -> ReleaseFacts | None:
        return next((r for r in self.releases if r.version == version), None)


def facts_from_pages(pages: Iterable[PageWheels], target: TargetTags, platform: str, base: str,
                     fetched_at: float, pre_releases: bool = False, unlabelled: str | None = None) -> IndexFacts:
    """Group the wheels of ``pages`` matching the target's tags by release; pre-/dev releases only when asked for.

    A release with wheels for the platform but none for the target's Python is kept with the variants and
    Pythons it does have (so the resolver can say "no wheels for Python 3.11 (has 3.12)"); its Python list
    lacks the target's, so it is never chosen. ``unlabelled``: the variant of wheels without a local label (the
    default index's: "default"), else those are skipped off macOS. A file's record is read only for the first
    wheels of a release that match the target (its URL, and its requires-python)."""
    from packaging.version import InvalidVersion, Version  # only when pages are parsed, not on a warm lookup

    from .pages import Memo

    def build(release: tuple[str, str]) -> _Build | None:
        """The build of a (version, label), or None when it is not learnt (a pre-release, no variant)."""
        version, label = release
        try:
            if Version(version).is_prerelease and not pre_releases:
                return None
        except InvalidVersion:
            return None
        variant = unlabelled if unlabelled and not label else variant_of_label(label, platform)
        if variant is None:
            return None
        entry = found.get(version)
        if entry is None:
            entry = found[version] = _Release()
        made = _Build(entry, variant)
        entry.builds.append(made)
        return made

    found: dict[str, _Release] = {}
    wanted = {python_of_tag(t) for t in target.tags if t.split("-")[1].startswith("cp")} if target.tags else set()
    # a page repeats a few releases and tag sets over its thousands of files: each is read once
    builds = Memo(build)
    tag_sets = Memo(lambda tags: _tag_facts(tags, target))  # None: not of the target's platforms
    for page in pages:
        file_of = page.file
        if isinstance(page.rows, list):  # a large page has more releases (which its rows hold anyway)
            builds.limit = max(builds.limit, len(page.rows))
        for release, tags, ref in page.rows:
            said = tag_sets[tags]
            if said is None:
                continue
            made = builds[release]
            if made is None:
                continue
            made.tags.add(said)
            if said.matches and made.release.wants_file:
                made.release.read(file_of(ref))
    facts = []
    for version in sorted(found, key=Version, reverse=True):
        facts += [entry] if (entry := found[version].facts(version, wanted)) else []
    return IndexFacts(base, tuple(facts), fetched_at)


class _Release:
    """What the wheels of one release read so far say: its builds, and the URL and requires-python of the first
    of its wheels that match the target."""

    __slots__ = ("builds", "requires_python", "url", "wants_file")

    def __init__(self) -> None:
        self.builds: list[_Build] = []
        self.requires_python: str | None = None
        self.url: str | None = None
        self.wants_file = True  # until both are known

    def read(self, file: IndexFile) -> None:
        self.url = self.url or file.url
        self.requires_python = self.requires_python or file.requires_python
        self.wants_file = self.url is None or self.requires_python is None

    def facts(self, version: str, wanted: set[str | None]) -> ReleaseFacts | None:
        """The release's facts, or None when none of its wheels is for the target (nor only for another Python)."""
        tags = {said for build in self.builds for said in build.tags}
        pythons = {python for said in tags for python in said.pythons}
        variants = {build.variant for build in self.builds if any(said.matches for said in build.tags)}
        if not variants:
            if not wanted or not pythons or pythons & wanted:
                return None
            variants = {build.variant for build in self.builds if build.tags}  # gated out by Python: for its message
        glibc = [floor for said in tags for kind, floor in said.floors if kind == "glibc"]
        macos = [floor for said in tags for kind, floor in said.floors if kind == "macos"]
        return ReleaseFacts(version, tuple(sorted(variants, key=variant_order)),
                            tuple(sorted(pythons, key=python_sort_key)), self.requires_python,
                            "{}.{}".format(*min(glibc)) if glibc else None,
                            "{}.{}".format(*min(macos)) if macos else None, wheel_url=self.url)


class _Build:
    """One (version, label) of a release: its variant, and the tag sets of its wheels for the target's platforms."""

    __slots__ = ("release", "variant", "tags")

    def __init__(self, release: _Release, variant: str) -> None:
        self.release, self.variant = release, variant
        self.tags: set[_TagFacts] = set()


class _TagFacts(Record):
    """What one wheel's tag set says for the target: its Pythons, its platform floors, whether it installs there."""

    pythons: tuple[str, ...]
    floors: tuple[tuple[str, tuple[int, int]], ...]  # ("glibc", (2, 28)), ("macos", (11, 0))
    matches: bool  # one of the tags is the target's (or the target has no tags)


def _tag_facts(tags: frozenset[str], target: TargetTags) -> _TagFacts | None:
    """What ``tags`` say for the target, or None when none of them is of the target's platforms."""
    if not any(t.rsplit("-", 1)[-1] in target.platforms for t in tags):
        return None
    pythons = tuple(python for python in map(python_of_tag, tags) if python)
    floors = tuple(floor for floor in (_platform_floor(t.rsplit("-", 1)[-1]) for t in tags) if floor[0])
    return _TagFacts(pythons, floors, target.tags is None or not tags.isdisjoint(target.tags))


def _platform_floor(platform: str) -> tuple[str, tuple[int, int]]:
    """("glibc", (2, 28)) for a manylinux_2_28 tag, ("macos", (11, 0)) for a macosx_11_0 one, else ("", (0, 0))."""
    if m := re.match(r"manylinux_([0-9]+)_([0-9]+)_", platform):
        return "glibc", (int(m[1]), int(m[2]))
    if m := re.match(r"macosx_([0-9]+)_([0-9]+)_", platform):
        return "macos", (int(m[1]), int(m[2]))
    return "", (0, 0)


def latest_key(root: str, pre: bool, machine: Machine) -> str:
    return f"latest|{root}|{pre}|{machine.platform}|{target_key(machine)}"


def facts_to_json(facts: IndexFacts) -> dict[str, Any]:
    return {"format": FACTS_FORMAT, "base": facts.base, "fetched_at": facts.fetched_at,
            "releases": [[r.version, list(r.variants), list(r.python), r.requires_python, r.glibc, r.macos,
                          r.default_build, r.wheel_url] for r in facts.releases]}


def _release_from_json(row: Any) -> ReleaseFacts | None:
    """One release row of ``facts_to_json``, or None when any field has the wrong type."""
    if not (isinstance(row, list) and len(row) == 8 and isinstance(row[0], str)
            and all(isinstance(x, list) and all(isinstance(v, str) for v in x) for x in row[1:3])
            and all(x is None or isinstance(x, str) for x in row[3:8])):
        return None
    return ReleaseFacts(row[0], tuple(row[1]), tuple(row[2]), *row[3:8])


def facts_from_json(data: Any) -> IndexFacts | None:
    """The facts ``facts_to_json`` stored, or None when they are of another format or of the wrong shape (the facts
    of the last object read are kept: a revalidation checks a stored record's shape, then uses its facts)."""
    last = _LAST_READ[0]
    if last is not None and last[0] is data:
        return last[1]
    facts = _facts_from_json(data)
    _LAST_READ[0] = (data, facts)
    return facts


_LAST_READ: list[tuple[Any, IndexFacts | None] | None] = [None]  # the object (kept alive: its identity names it)


def _facts_from_json(data: Any) -> IndexFacts | None:
    if not (isinstance(data, dict) and data.get("format") == FACTS_FORMAT and isinstance(data.get("base"), str)
            and isinstance(data.get("releases"), list) and isinstance(data.get("fetched_at"), (int, float))):
        return None
    releases = [_release_from_json(row) for row in data["releases"]]
    if any(r is None for r in releases):
        return None
    return IndexFacts(data["base"], tuple(r for r in releases if r is not None), float(data["fetched_at"]))


def is_learnt_record(stored: Any) -> bool:
    """Whether a stored derived value has the shape ``learn`` writes: ``{"pages": {url: content}, "facts": …}``."""
    return (isinstance(stored, dict) and isinstance(stored.get("pages"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in stored["pages"].items())
            and facts_from_json(stored.get("facts")) is not None)


def facts_learnt_from(stored: Any, pages: dict[str, str | None], **same: object) -> IndexFacts | None:
    """The facts of a stored ``{"pages": {url: content}, "facts": …}`` when they were learnt from exactly these
    pages' contents (and with the ``same`` settings), else None: a page revalidated unchanged reuses them."""
    if (not isinstance(stored, dict) or not all(pages.values()) or stored.get("pages") != pages
            or any(stored.get(k) != v for k, v in same.items())):
        return None
    return facts_from_json(stored.get("facts"))
