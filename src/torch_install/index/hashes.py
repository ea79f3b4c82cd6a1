"""``--hashes``: the sha256 of each pinned wheel, read from the index page its command installs from."""

from __future__ import annotations

from ..errors import EnvironmentFailure, InputError
from ..wheel_tags import target_tags
from .client import make_client
from .pages import IndexUnavailable

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..machine import Machine
    from ..resolver.plan import Plan
    from .client import IndexClient


def wheel_hashes(client: IndexClient, machine: Machine, packages: Mapping[str, str]) -> dict[str, list[str]]:
    """sha256 of every file of each pinned ``name==version+label`` on the client's ``{base}/{name}/`` page
    that matches the target's tags. EnvironmentFailure when a package has none."""
    target = target_tags(machine)
    out: dict[str, list[str]] = {}
    for name, version in packages.items():
        if not version:
            raise InputError(f"--hashes: {name} has no pinned version in the plan")
        try:
            listing = client.listing(name)
            page = listing.wheels(name, target.platforms)
            files = [page.file(ref) for (public, label), tags, ref in page.rows  # records of the pinned files only
                     if (f"{public}+{label}" if label else public) == version
                     and (tags & target.tags if target.tags is not None
                          else any(t.rsplit("-", 1)[-1] in target.platforms for t in tags))]
        except IndexUnavailable as exc:
            raise EnvironmentFailure(f"--hashes: {exc}") from None
        digests = sorted({file.sha256 for file in files if file.sha256})
        if not digests:
            raise EnvironmentFailure(f"--hashes: {listing.url} lists no {name} {version} wheel with a sha256 "
                                     "for the target's platform and Python")
        out[name] = digests
    return out


def plan_hashes(plan: Plan, machine: Machine, *, offline: bool = False, allow_insecure: bool = False,
                client: IndexClient | None = None) -> dict[str, list[str]]:
    """sha256 digests for the plan's pinned packages, from the index its commands install from."""
    if plan.choice is None:
        raise InputError("--hashes: the plan has no choice to hash")
    if not plan.choice.index_url:
        raise InputError("--hashes: this plan installs from the default index, which torch-install does not read")
    client = client or make_client(plan.choice.index_url, offline, allow_insecure)
    return wheel_hashes(client, machine, plan.choice.packages)
