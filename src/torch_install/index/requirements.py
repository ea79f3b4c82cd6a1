"""What other packages need of torch, read from the user's own index (``--online``): for each requested package
the embedded table does not know, its newest releases the requirement allows and the torch each declares.

The index is the default index (``default_index.py``: ``PIP_INDEX_URL``, pip's configuration, ``UV_DEFAULT_INDEX``
…); a release's ``Requires-Dist`` comes from its PEP 658 metadata file or, without one, the wheel's METADATA read
through HTTP range requests (``wheel_metadata``), for a wheel that installs on the target; markers are evaluated for
the target, with the extras the user asked for. What was read is cached (the page as any page; each wheel's
requirements as a derived result). A package that declares no torch at all is not a package built against torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..resolver.companion_facts import CompanionRelease, Package

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from ..resolver.plan import Wanted
    from .client import IndexClient
    from .pages import Wheel

MAX_RELEASES = 6  # the newest releases of a package read
MAX_PACKAGES = 40  # packages read in one plan
FAMILY = ("torch", "torchvision", "torchaudio")


def learn_packages(requirements: Sequence[Wanted], machine: Machine, client: IndexClient,
                   known: Mapping[str, Package]) -> tuple[dict[str, Package], list[str]]:
    """({name: what it needs of torch}, warning lines) for the requested packages ``known`` does not hold."""
    from packaging.requirements import InvalidRequirement, Requirement

    from ..progress import status

    learnt: dict[str, Package] = {}
    warnings: list[str] = []
    wanted: dict[str, Requirement] = {}
    for w in requirements:
        if w.name is None or w.name in FAMILY or w.name in known or w.editable or w.constraint:
            continue
        try:
            wanted.setdefault(w.name, Requirement(w.text))
        except InvalidRequirement:
            continue
    with status() as line:
        for i, (name, requirement) in enumerate(list(wanted.items())[:MAX_PACKAGES]):
            line.show(f"torch-install: reading what {name} needs of torch ({i + 1} of {len(wanted)})")
            try:
                package = _learn(name, requirement, machine, client)
            except Exception as exc:  # noqa: BLE001 - an index problem is one warning, never a failed plan
                from ..errors import TorchInstallError

                if not isinstance(exc, (TorchInstallError, ValueError, OSError)):
                    raise
                warnings.append(f"{name}: what it needs of torch was not read ({exc})")
                continue
            if package is not None:
                learnt[name] = package
    return learnt, warnings


def _learn(name: str, requirement: object, machine: Machine, client: IndexClient) -> Package | None:
    from packaging.requirements import Requirement

    from ..markers import environment
    from ..wheel_tags import target_tags
    from .pages import parse_wheels

    assert isinstance(requirement, Requirement)
    target = target_tags(machine)
    listing = client.listing(name)
    wheels = parse_wheels(listing.files(), name)
    compatible = [w for w in wheels if target.tags is None or w.tags & target.tags]
    by_version: dict[str, list[Wheel]] = {}
    for wheel in compatible:
        by_version.setdefault(wheel.version, []).append(wheel)
    from packaging.version import Version

    versions = sorted((v for v in by_version if requirement.specifier.contains(v, prereleases=False)), key=Version,
                      reverse=True)[:MAX_RELEASES]
    env = environment(machine)
    releases: list[CompanionRelease] = []
    declares = False
    for version in versions:
        wheel = by_version[version][0]
        lines = _requires(client, wheel.file.url)
        torch, family = "", {}
        for line in lines:
            try:
                needed = Requirement(line)
            except ValueError:
                continue
            if needed.name.lower() not in FAMILY:
                continue
            if needed.marker is not None and not any(needed.marker.evaluate({**env, "extra": extra})
                                                     for extra in ("", *requirement.extras)):
                continue
            if needed.name.lower() == "torch":
                torch = ",".join(filter(None, (torch, str(needed.specifier))))
                declares = True
            else:
                family[needed.name.lower()] = str(needed.specifier)
        releases.append(CompanionRelease(version=version, torch=torch, family=family, confidence="verified"))
    if not declares:
        return None
    return Package(name=name, kind="default", releases=tuple(releases), sources=("your index",))


def _requires(client: IndexClient, wheel_url: str) -> list[str]:
    """The Requires-Dist lines of one wheel (cached by its URL)."""
    from .wheel_metadata import requires_dist, wheel_metadata

    key = f"requires-dist|{wheel_url}"
    if client.cache is not None:
        stored = client.cache.get_derived(key, lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
        if isinstance(stored, list):
            return stored
    lines = requires_dist(wheel_metadata(client.fetcher, wheel_url))
    if client.cache is not None:
        client.cache.put_derived(key, lines)
    return lines
