"""What an installer run changed in an environment, and putting back a torch it took away.

pip replaces a package in steps: it moves the installed one aside (its "stash": ``torch/`` becomes ``~orch/``
and ``torch-2.8.0.dist-info`` becomes ``~orch-2.8.0.dist-info``, beside them), installs the new one, and only
then deletes the stash, or on an error moves it back. Interrupted (``KeyboardInterrupt`` is not rolled back),
it leaves the stash and a half-installed new package. And it commits each requirement alone, so when a later
one fails the earlier ones stay replaced.

``snapshot`` records the guarded distributions before the run, by their metadata only (nothing is imported).
``compare`` says afterwards what changed and which of them is gone or broken; ``restore`` moves the
half-installed files out of the way and renames pip's stash back, then checks the result.
"""

from __future__ import annotations

import itertools
import os
import shlex
import shutil
from collections.abc import Iterable, Sequence

from ..records import Record
from ..resolver.request import PACKAGES, canonical_name
from .dists import Dist, metadata_directory, read_dist

_STASH_FIRST = "-~.=%0123456789"  # the characters pip puts after "~" when "~orch" is taken (its AdjacentTempDirectory)


class Change(Record):
    name: str
    before: str | None
    after: str | None


class Outcome(Record):
    """What a run did to the guarded distributions: changes, and those gone or broken (with pip's stash)."""

    changes: tuple[Change, ...]
    lost: tuple[Dist, ...]  # there before, now absent or incomplete
    leftovers: tuple[str, ...]  # pip stashes still on disk


def guarded_names(packages: Iterable[str]) -> set[str]:
    """The torch family and every package a requirement names."""
    from packaging.requirements import InvalidRequirement, Requirement

    names = set(PACKAGES)
    for text in packages:
        try:
            names.add(canonical_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return names


def _installed(location: str, entry: str) -> Dist | None:
    """The distribution of a metadata directory with its footprint; None for anything else and pip's stashes."""
    found = metadata_directory(entry) if not entry.startswith("~") else None
    if found is None or found[2] != "dist-info":
        return None
    return read_dist(os.path.join(location, entry), location, canonical_name(found[0]), found[1], "dist-info",
                     footprint=True)


def snapshot(site_packages: Sequence[str], names: set[str]) -> dict[str, Dist]:
    """The distributions of ``names`` installed in these directories (the first one found of each name)."""
    found: dict[str, Dist] = {}
    for location, entry in _entries(site_packages):
        dist = _installed(location, entry) if entry.endswith(".dist-info") else None
        if dist and dist.name in names and dist.name not in found:
            found[dist.name] = dist
    return found


def _entries(site_packages: Sequence[str]) -> Iterable[tuple[str, str]]:
    """(directory, entry) of every entry of these directories, each directory sorted; one that cannot be listed
    is skipped."""
    for location in site_packages:
        try:
            entries = sorted(os.listdir(location))
        except OSError:
            continue
        for entry in entries:
            yield location, entry


def intact(dist: Dist) -> bool:
    """Its metadata and every top-level entry its RECORD lists are on disk (what ``import`` needs)."""
    return os.path.isfile(os.path.join(dist.path, "RECORD")) and all(
        os.path.lexists(os.path.join(dist.location, top)) for top in dist.tops)


def _stash_names(top: str) -> Iterable[str]:
    """The names pip gives the stash of ``top``, in the order it tries them ("~orch", "~-rch", …)."""
    for i in range(1, min(len(top), 4)):
        for middle in itertools.combinations_with_replacement(_STASH_FIRST, i - 1):
            yield "~" + "".join(middle) + top[i:]


def _stash_of(location: str, top: str, present: set[str]) -> str | None:
    """The newest stash of ``top`` in ``location``, if any."""
    found = [name for name in _stash_names(top) if name in present]
    if not found:
        return None
    return max(found, key=lambda n: os.lstat(os.path.join(location, n)).st_mtime)


def stale_stashes(site_packages: Sequence[str], names: set[str]) -> list[str]:
    """pip's stashes of ``names`` already in these directories before an install (``~orch``,
    ``~orch-2.8.0.dist-info``): left when pip and torch-install were stopped together, which no rollback can
    follow. A stash keeps the original's length and ends as it does, after ``~`` and pip's filler characters."""
    originals = {n.replace("-", "_").lower() for n in names}
    found = []
    for location, entry in _entries(site_packages):
        if not entry.startswith("~"):
            continue
        tail = entry[1:].lstrip(_STASH_FIRST).lower()
        project = tail[:-len(".dist-info")].rpartition("-")[0] if tail.endswith(".dist-info") else tail
        if project and any(o.endswith(project) and len(o) > len(project) for o in originals):
            found.append(os.path.join(location, entry))
    return found


def compare(before: dict[str, Dist], site_packages: Sequence[str], names: set[str]) -> Outcome:
    after = snapshot(site_packages, names)
    changes = tuple(Change(n, before[n].version if n in before else None, after[n].version if n in after else None)
                    for n in sorted(set(before) | set(after))
                    if (before[n].version if n in before else None) != (after[n].version if n in after else None))
    lost = tuple(dist for name, dist in sorted(before.items()) if name not in after or not intact(after[name]))
    leftovers = []
    for location in dict.fromkeys(d.location for d in before.values()):
        try:
            present = set(os.listdir(location))
        except OSError:
            continue
        for dist in before.values():
            if dist.location == location:
                stashes = (_stash_of(location, top, present) for top in dist.tops)
                leftovers += [os.path.join(location, s) for s in stashes if s]
    return Outcome(changes, lost, tuple(dict.fromkeys(leftovers)))


def restore(dist: Dist) -> tuple[bool, str]:
    """Put ``dist`` back from pip's stash: what is now in its place (a half-installed replacement) is removed, the
    stash renamed back. (True, what was done) when it is intact afterwards, else (False, why not)."""
    try:
        present = set(os.listdir(dist.location))
    except OSError as exc:
        return False, f"cannot read {dist.location} ({exc.strerror or exc})"
    stashes = {top: _stash_of(dist.location, top, present) for top in dist.tops}
    missing = [top for top, stash in stashes.items() if stash is None and top not in present]
    if missing:
        return False, f"pip's stash of {', '.join(missing)} is not in {dist.location}"
    for top, stash in stashes.items():
        if stash is None:
            continue  # never moved aside
        target = os.path.join(dist.location, top)
        if os.path.lexists(target):  # the half-installed replacement
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            else:
                os.unlink(target)
        os.rename(os.path.join(dist.location, stash), target)
    _remove_partial_metadata(dist)
    if not intact(dist):
        return False, f"{dist.name} {dist.version} is still incomplete after renaming pip's stash back"
    gone = [p for p in dist.outside if not os.path.lexists(os.path.normpath(os.path.join(dist.location, p)))]
    note = f" ({len(gone)} script{'s' if len(gone) > 1 else ''} outside site-packages not restored)" if gone else ""
    return True, f"{dist.name} {dist.version} put back from pip's stash{note}"


def _remove_partial_metadata(dist: Dist) -> None:
    """A replacement's metadata directory without a RECORD (pip writes it last) is part of the half install."""
    try:
        entries = os.listdir(dist.location)
    except OSError:
        return
    for entry in entries:
        other = _installed(dist.location, entry) if entry != dist.directory_name else None
        if other and other.name == dist.name and not os.path.isfile(os.path.join(dist.location, entry, "RECORD")):
            shutil.rmtree(os.path.join(dist.location, entry), ignore_errors=True)


def reinstall_commands(dists: Iterable[Dist], python: str, index_base: str) -> list[str]:
    """pip commands that install these versions again, one per index (a local label names its variant's)."""
    by_index: dict[str | None, list[str]] = {}
    for dist in dists:
        label = dist.version.partition("+")[2]
        by_index.setdefault(f"{index_base.rstrip('/')}/{label}" if label else None, []).append(
            f"{dist.name}=={dist.version}")
    return [shlex.join([python, "-m", "pip", "install", *pins, *(["--index-url", index] if index else [])])
            for index, pins in by_index.items()]
