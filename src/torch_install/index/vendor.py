"""Online mode for the vendors' own indexes (AMD's ROCm indexes, the Jetson AI Lab index): what they list now, read
like PyTorch's (PEP 503 or PEP 691 pages through the cache), turned into the builds of the vendor table.

An index that is read is authoritative for which builds exist for the target: a build it lists is confirmed (its
Pythons read from its wheels), one it no longer lists is dropped, and a version the table lacks is added with the
targets of the index's newest known build (labelled ``assumed``: the plan notes it) and, where the index labels its
wheels (AMD's ``+rocm10.1.0``), the companions of the same label. Only the stable channel's versions are learnt
(a nightly's are left to the installer). A page that cannot be read leaves the index's builds as the table has
them, with one warning line.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..resolver.matrix import version_key
from ..resolver.request import COMPANIONS
from ..resolver.variants import variant_kind
from ..resolver.vendor_builds import VendorBuild, VendorBuilds, VendorIndex
from ..wheel_tags import python_of_tag, python_sort_key, target_tags

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from ..resolver.plan import Request
    from .client import IndexClient
    from .pages import Wheel



def indexes_for(table: VendorBuilds, machine: Machine, channel: str) -> list[VendorIndex]:
    """The vendor indexes with builds for this machine: of a vendor whose GPU it has (a Jetson's is NVIDIA's), for
    its platform, on the stable channel (a Jetson index: for the machine's L4T release, where known)."""
    owners = {g.vendor for g in machine.visible_gpus} | ({"nvidia"} if machine.jetson else set())
    major = machine.jetson.split(".")[0] if machine.jetson else None
    return [index for index in table.indexes.values()
            if index.vendor in owners and machine.platform in index.platforms and index.channel == channel == "stable"
            and not (index.l4t and major and major not in index.l4t)
            and any(b.vendor_index.id == index.id for b in table.builds)]


def learn_vendor_builds(table: VendorBuilds, machine: Machine, request: Request, *, offline: bool = False,
                        allow_insecure: bool = False, clients: Mapping[str, IndexClient] | None = None
                        ) -> tuple[VendorBuilds, list[str]]:
    """The table with what each vendor index for this machine lists now, and a warning line per index that could
    not be read. ``clients``: index id -> client (tests); else one per index, at its mirror if the request names
    one, through the user's cache."""
    from .pages import IndexUnavailable

    mirrors = dict(request.vendor_indexes)
    warnings: list[str] = []
    platform = machine.platform or ""
    for index in indexes_for(table, machine, request.channel):
        client = (clients or {}).get(index.id)
        if client is None:
            from .client import make_client

            client = make_client(mirrors.get(index.id, index.url).rstrip("/"), offline, allow_insecure)
        try:
            pages = {project: _wheels(client, project, machine) for project in ("torch", *COMPANIONS)}
        except IndexUnavailable as exc:
            why = "not in the cache (--offline)" if offline else f"unreachable ({exc})"
            warnings.append(f"{index.name} {why}; its builds as this tool's data has them")
            continue
        known = [b for b in table.builds if b.vendor_index.id == index.id]
        table = table.with_builds(index.id, builds_from_pages(index, known, pages, platform))
    return table, warnings


def _wheels(client: IndexClient, project: str, machine: Machine) -> list[Wheel]:
    """The project's wheels for the target's platform; a companion the index does not have is none."""
    from .pages import IndexUnavailable, iter_wheels

    platforms = target_tags(machine).platforms
    try:
        listing = client.listing(project)
    except IndexUnavailable as exc:
        if project != "torch" and exc.status in (403, 404):
            return []
        raise
    return list(iter_wheels(listing.files(platforms), project, platforms))


def builds_from_pages(index: VendorIndex, known: list[VendorBuild], pages: Mapping[str, list[Wheel]],
                      platform: str) -> tuple[VendorBuild, ...]:
    """The index's builds for the platform as its pages list them (see the module's docstring); its builds for
    other platforms are kept as they are."""
    by_version: dict[str, set[str]] = {}
    for wheel in pages["torch"]:
        if wheel.label and variant_kind(wheel.label) == "unknown":  # a dated nightly label: not a stable build
            continue
        pythons = {p for tag in wheel.tags if (p := python_of_tag(tag))}
        by_version.setdefault(wheel.full_version, set()).update(pythons)
    newest = max(known, key=lambda b: version_key(b.torch or "0"))
    out: list[VendorBuild] = [b for b in known if platform not in b.targets]  # other platforms: untouched
    for full, pythons in sorted(by_version.items(), key=lambda item: version_key(item[0]), reverse=True):
        tags = tuple(sorted(pythons, key=python_sort_key))
        same = next((b for b in known if b.packages.get("torch") == full and platform in b.targets), None)
        if same is not None:
            out.append(same._replace(python={**same.python, platform: tags}, python_confidence="verified",
                                     confidence="verified"))
            continue
        public, _, label = full.partition("+")
        variant = label or newest.variant
        packages = {"torch": full, **{name: v for name in COMPANIONS if (v := _companion(pages.get(name, []), label))}}
        out.append(newest._replace(
            variant=variant, packages=packages, python={platform: tags}, python_confidence="verified",
            confidence="verified", targets={platform: newest.targets[platform]}, targets_confidence="assumed",
            targets_note=f"inherited from {newest.variant} (torch {newest.torch}): the index lists the wheels, "
                         "not the targets of their device packages", date=""))
    return tuple(out)


def _companion(wheels: list[Wheel], label: str) -> str | None:
    """A new build's companion: the newest of the same local label (an index that labels its builds); an
    unlabelled index gives no way to pair, so none is assumed."""
    if not label:
        return None
    versions = {w.full_version for w in wheels if w.label == label}
    return max(versions, key=version_key) if versions else None
