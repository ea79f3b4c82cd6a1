"""What other packages need of torch, read from the user's own index (``--online``): for each requested package the
embedded table does not know, and for a table package's versions the table does not hold, the releases the
requirement allows and the torch each declares.

The index is the default index (``default_index.py``: ``PIP_INDEX_URL``, pip's configuration, ``UV_DEFAULT_INDEX``
…); a release's ``Requires-Dist`` comes from its PEP 658 metadata file or, without one, the wheel's METADATA read
through HTTP range requests (``wheel_metadata``), for a wheel that installs on the target; markers are evaluated for
the target, with the extras the user asked for. Releases are read newest first, every candidate the search may
need: until the torch releases the ones read allow cover every torch release of the matrix (an older one would
never be chosen), or ``MAX_RELEASES`` were read (then the package is read in part, and an older release's needs
stay unknown). Yanked releases are skipped unless pinned exactly (PEP 592). What was read is cached (the page as
any page; each wheel's requirements as a derived result). A package that declares no torch is known to need
nothing of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import InputError
from ..resolver.companion_facts import HARD_KINDS, CompanionRelease, Package
from ..resolver.request import PACKAGES

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from ..machine import Machine
    from ..resolver.plan import Wanted
    from .client import IndexClient
    from .pages import Wheel

MAX_RELEASES = 24  # releases of one package read, at most
MAX_PACKAGES = 40  # packages read in one plan


def learn_packages(requirements: Sequence[Wanted], machine: Machine, client: IndexClient,
                   known: Mapping[str, Package], torch_releases: Sequence[str] = ()
                   ) -> tuple[dict[str, Package], list[str]]:
    """({name: what it needs of torch}, warning lines) for the requested packages ``known`` does not hold, and the
    table's packages with the releases the requirement allows that it does not hold added (newest first).
    ``torch_releases``: the matrix's, which the releases read must cover."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..progress import status

    learnt: dict[str, Package] = {}
    warnings: list[str] = []
    wanted: dict[str, Requirement] = {}
    for w in requirements:
        table = known.get(w.name or "")
        if w.name is None or w.name in PACKAGES or w.editable or w.constraint or (
                table is not None and table.kind not in HARD_KINDS):
            continue
        try:
            wanted.setdefault(w.name, Requirement(w.text))
        except InvalidRequirement:  # pip's bare URL of a wheel: as its name @ URL
            from ..resolver.references import reference_of

            try:
                reference = reference_of(w.text)
            except InputError:
                continue
            if reference is not None and reference.url is not None:
                wanted.setdefault(w.name, Requirement(reference.requirement))
    with status() as line:
        for i, (name, requirement) in enumerate(list(wanted.items())[:MAX_PACKAGES]):
            line.show(f"torch-install: reading what {name} needs of torch ({i + 1} of {len(wanted)})")
            try:
                package = _learn(name, requirement, machine, client, known.get(name), torch_releases)
            except Exception as exc:  # noqa: BLE001 - an index problem is one warning, never a failed plan
                from ..errors import TorchInstallError

                if not isinstance(exc, (TorchInstallError, ValueError, OSError)):
                    raise
                warnings.append(f"{name}: what it needs of torch was not read ({exc})")
                continue
            if package is not None:
                learnt[name] = package
    return learnt, warnings


def _candidates(requirement: Requirement, by_version: Mapping[str, list[Wheel]], yanked: set[str],
                table: Package | None) -> list[str]:
    """The versions to read, newest first: those the requirement allows (pre-releases as pip allows them), not
    yanked unless pinned exactly, that the table does not hold."""
    from packaging.version import Version

    pinned = {s.version for s in requirement.specifier if s.operator in ("==", "===")}
    held = {r.version for r in table.releases} if table is not None else set()
    versions = [v for v in requirement.specifier.filter(sorted(by_version, key=Version, reverse=True))
                if v not in held and (v in pinned or not all(w.file.url in yanked for w in by_version[v]))]
    return [str(v) for v in versions]


def _learn_reference(name: str, requirement: Requirement, machine: Machine, client: IndexClient,
                     table: Package | None) -> Package | None:
    """A direct reference's wheel (``name @ https://…whl``): the torch its own METADATA declares (PEP 658 or a
    ranged read), where the table does not hold its release; None for a file of this machine or a source."""
    from ..resolver.references import reference_of

    try:
        reference = reference_of(str(requirement))
    except InputError:
        return None  # a source tree, an sdist, a VCS URL: nothing to read
    if reference is None or reference.url is None:
        return None
    if table is not None and any(r.version == reference.public for r in table.releases):
        return None  # the table holds it
    release = _release(reference.public, reference.url, "", requirement, machine, client)
    if table is not None:
        return table._replace(releases=(release._replace(source="default", default_build=True), *table.releases))
    declares = bool(release.torch)
    return Package(name=name, kind="default", releases=(release,), sources=("its wheel",), complete=True,
                   needs_nothing=not declares, default_build=declares)


def _learn(name: str, requirement: Requirement, machine: Machine, client: IndexClient, table: Package | None,
           torch_releases: Sequence[str]) -> Package | None:
    from packaging.specifiers import SpecifierSet

    if requirement.url:
        return _learn_reference(name, requirement, machine, client, table)

    from ..wheel_tags import target_tags
    from .pages import parse_wheels

    target = target_tags(machine)
    files = client.listing(name).files()
    yanked = {f.url for f in files if f.yanked}
    by_version: dict[str, list[Wheel]] = {}
    for wheel in parse_wheels([f._replace(yanked=False) for f in files], name):  # a yanked one is read if pinned
        if target.tags is None or wheel.tags & target.tags:
            by_version.setdefault(wheel.version, []).append(wheel)
    candidates = _candidates(requirement, by_version, yanked, table)
    if not candidates:
        return None  # the table holds every release the requirement allows, or the index has none for the target
    releases: list[CompanionRelease] = []
    uncovered = set(torch_releases)
    for version in candidates:
        if len(releases) == MAX_RELEASES or (torch_releases and not uncovered):
            break
        wheel = by_version[version][0]
        release = _release(version, wheel.file.url, wheel.file.requires_python or "", requirement, machine, client)
        releases.append(release)
        spec = SpecifierSet(release.torch or "")
        uncovered = {t for t in uncovered if not spec.contains(t, prereleases=True)}
    complete = len(releases) == len(candidates) or bool(torch_releases) and not uncovered
    if table is not None:  # a newer release of a table package: from the user's index, built against its torch
        extra = tuple(r._replace(source="default", default_build=True) for r in releases)
        return table._replace(releases=extra + table.releases, complete=table.complete and complete)
    declares = any(r.torch for r in releases)
    return Package(name=name, kind="default", releases=tuple(releases), sources=("your index",), complete=complete,
                   needs_nothing=not declares and complete, default_build=declares)


def _release(version: str, url: str, requires_python: str, requirement: Requirement, machine: Machine,
             client: IndexClient) -> CompanionRelease:
    """One release's torch and family requirements, read from the metadata of its wheel at ``url``."""
    from packaging.requirements import Requirement

    from ..display import excerpt
    from ..markers import environment
    from ..project.requirement_name import versions_part
    from ..versions import MAX_DIGITS, has_long_number

    env = environment(machine)
    torch, family = "", {}
    for line in _requires(client, url):
        if has_long_number(line) and has_long_number(versions_part(line)):  # not a URL's digits: a version's,
            # which packaging would fail on where the resolver reads it
            raise ValueError(f"Requires-Dist {excerpt(line, 60)!r}…: a version number of more than {MAX_DIGITS} digits")
        try:
            needed = Requirement(line)
        except ValueError:
            continue
        if needed.name.lower() not in PACKAGES:
            continue
        if needed.marker is not None and not any(needed.marker.evaluate({**env, "extra": extra})
                                                 for extra in ("", *requirement.extras)):
            continue
        if needed.name.lower() == "torch":
            torch = ",".join(filter(None, (torch, str(needed.specifier))))
        else:
            family[needed.name.lower()] = str(needed.specifier)
    return CompanionRelease(version=version, torch=torch, family=family, confidence="verified",
                            requires_python=requires_python)


def _requires(client: IndexClient, wheel_url: str) -> list[str]:
    """The Requires-Dist lines of one wheel (cached by its URL)."""
    from .urls import redact_url
    from .wheel_metadata import requires_dist, wheel_metadata

    key = f"requires-dist|{redact_url(wheel_url)}"  # a URL's credentials are no part of what is stored
    if client.cache is not None:
        stored = client.cache.get_derived(key, lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
        if isinstance(stored, list):
            return stored
    lines = requires_dist(wheel_metadata(client.fetcher, wheel_url))
    if client.cache is not None:
        client.cache.put_derived(key, lines)
    return lines
