"""What an index offers a target: its torch releases, and per release the variants, Pythons and platform floors
of the wheels that match the target's tags. The cache stores this small form, so a warm lookup never re-reads
a large listing.
"""

# NamedTuple value types, and no `from __future__ import annotations`: see docs/architecture.md, "Value types".
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..resolver.variants import variant_of_label, variant_order
from ..wheel_tags import TargetTags, python_of_tag, python_sort_key, target_key

if TYPE_CHECKING:  # the page module (dataclasses, urllib.parse) is not imported on a warm lookup
    from ..machine import Machine
    from .pages import Wheel

FACTS_FORMAT = 1


class ReleaseFacts(NamedTuple):
    """What the index lists of one release for the target: variants, and per-platform facts of their wheels."""

    version: str
    variants: tuple[str, ...]  # variant ids whose wheels match the target's tags (no match: those of other Pythons)
    python: tuple[str, ...]  # Pythons with a wheel for the target's platform (any variant)
    requires_python: str | None = None
    glibc: str | None = None  # lowest manylinux glibc among the matching wheels
    macos: str | None = None  # lowest macOS among the matching wheels
    default_build: str | None = None  # the default index's wheel for the target: cu130, cpu (its CUDA pins)
    wheel_url: str | None = None  # one wheel of it matching the target's tags


class IndexFacts(NamedTuple):
    """Releases the index offers the target (newest first) and where that knowledge came from."""

    base: str
    releases: tuple[ReleaseFacts, ...]
    fetched_at: float
    stale_error: str | None = None  # set when a refresh failed and cached pages were used
    pages: tuple[str, ...] = ()

    def release(self, version: str) -> ReleaseFacts | None:
        return next((r for r in self.releases if r.version == version), None)


def facts_from_wheels(wheels: "Iterable[Wheel]", target: TargetTags, platform: str, base: str, fetched_at: float,
                      pre_releases: bool = False, unlabelled: str | None = None) -> IndexFacts:
    """Group the wheels matching the target's tags by release; pre-/dev releases only when asked for.

    A release with wheels for the platform but none for the target's Python is kept with the variants and
    Pythons it does have (so the resolver can say "no wheels for Python 3.11 (has 3.12)"); its Python list
    lacks the target's, so it is never chosen. ``unlabelled``: the variant of wheels without a local label (the
    default index's: "default"), else those are skipped off macOS."""
    from packaging.version import InvalidVersion, Version  # only when pages are parsed, not on a warm lookup

    found: dict[str, dict[str, Any]] = {}
    wanted = {python_of_tag(t) for t in target.tags if t.split("-")[1].startswith("cp")} if target.tags else set()
    for wheel in wheels:
        if not any(t.rsplit("-", 1)[-1] in target.platforms for t in wheel.tags):
            continue
        try:
            parsed = Version(wheel.version)
        except InvalidVersion:
            continue
        if parsed.is_prerelease and not pre_releases:
            continue
        variant = unlabelled if unlabelled and not wheel.label else variant_of_label(wheel.label, platform)
        if variant is None:
            continue
        entry = found.setdefault(wheel.version, {"variants": set(), "python": set(), "rp": None, "glibc": [],
                                                 "macos": [], "any_python": set()})
        entry["any_python"].add(variant)
        for tag in wheel.tags:
            python = python_of_tag(tag)
            if python:
                entry["python"].add(python)
            plat = tag.rsplit("-", 1)[-1]
            if m := re.match(r"manylinux_([0-9]+)_([0-9]+)_", plat):
                entry["glibc"].append((int(m[1]), int(m[2])))
            elif m := re.match(r"macosx_([0-9]+)_([0-9]+)_", plat):
                entry["macos"].append((int(m[1]), int(m[2])))
        if target.tags is None or wheel.tags & target.tags:
            entry["variants"].add(variant)
            entry["rp"] = entry["rp"] or wheel.file.requires_python
            entry["url"] = entry.get("url") or wheel.file.url
    releases = []
    for version in sorted(found, key=Version, reverse=True):
        entry = found[version]
        if not entry["variants"]:
            if not wanted or not entry["python"] or entry["python"] & wanted:
                continue
            entry["variants"] = entry["any_python"]  # gated out by Python: only its message uses them
        glibc = "{}.{}".format(*min(entry["glibc"])) if entry["glibc"] else None
        macos = "{}.{}".format(*min(entry["macos"])) if entry["macos"] else None
        pythons = tuple(sorted(entry["python"], key=python_sort_key))
        releases.append(ReleaseFacts(version, tuple(sorted(entry["variants"], key=variant_order)), pythons,
                                     entry["rp"], glibc, macos, wheel_url=entry.get("url")))
    return IndexFacts(base, tuple(releases), fetched_at)


def latest_key(root: str, pre: bool, machine: "Machine") -> str:
    return f"latest|{root}|{pre}|{machine.platform}|{target_key(machine)}"


def facts_to_json(facts: IndexFacts) -> dict[str, Any]:
    return {"format": FACTS_FORMAT, "base": facts.base, "fetched_at": facts.fetched_at,
            "releases": [[r.version, list(r.variants), list(r.python), r.requires_python, r.glibc, r.macos,
                          r.default_build, r.wheel_url] for r in facts.releases]}


def facts_from_json(data: Any) -> IndexFacts | None:
    try:
        if data["format"] != FACTS_FORMAT:
            return None
        releases = tuple(ReleaseFacts(r[0], tuple(r[1]), tuple(r[2]), r[3], r[4], r[5], *r[6:8])
                         for r in data["releases"])
        return IndexFacts(data["base"], releases, float(data["fetched_at"]))
    except (KeyError, TypeError, IndexError, ValueError):
        return None
