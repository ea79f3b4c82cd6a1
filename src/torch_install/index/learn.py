"""Online mode's entry: learn what the live index offers a target and extend the matrix with it.

``online_matrix(matrix, machine, base)`` reads ``{base}/torch/`` (or each variant directory of a partial mirror)
through the cache, turns the wheels that match the target's tags into facts (``facts.py``), and merges them
(``merge.py``). It never raises for a network problem: the cached, then the embedded data are used, with one
warning line. A warm lookup reads a few small cache files and imports no network code (this module imports the
client and page parsers only when a page must be read).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import EnvironmentFailure, InputError
from ..records import Record
from ..resolver.matrix import Matrix
from ..resolver.variants import variant_order
from ..wheel_tags import target_tags
from .cache import IndexCache
from .facts import (
    IndexFacts,
    facts_from_json,
    facts_from_pages,
    facts_learnt_from,
    facts_to_json,
    is_learnt_record,
    latest_key,
)
from .merge import merge

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from .client import IndexClient, Listing

PROJECT = "torch"


class OnlineResult(Record):
    """A matrix extended from the index (or the one given, on failure), and the one fallback warning."""

    matrix: Matrix
    facts: IndexFacts | None
    warning: str | None = None


def channel_root(base: str, matrix: Matrix, channel: str) -> str:
    """The index root of a channel: ``{base}``, ``{base}/test``, ``{base}/nightly``."""
    sub = matrix.channels.get(channel, "")
    return f"{base.rstrip('/')}/{sub}" if sub else base.rstrip("/")


def _fallback_variants(matrix: Matrix, platform: str) -> list[str]:
    """Variant directories to read one by one when the index has no all-variants page (a partial mirror)."""
    seen: set[str] = set()
    for release in matrix.releases[:8]:
        seen.update(v for v in release.variants(platform) if v != "default")
    if platform.startswith("macos"):
        seen.add("cpu")
    return sorted(seen, key=variant_order)


def _listings(client: IndexClient, matrix: Matrix, platform: str) -> list[Listing]:
    from .simple import IndexUnavailable

    try:
        return [client.listing(PROJECT)]
    except IndexUnavailable as exc:
        if exc.status not in (403, 404):
            raise
        first = exc
    listings = []
    for variant in _fallback_variants(matrix, platform):
        try:
            listings.append(client.listing(PROJECT, variant))
        except IndexUnavailable as exc:
            if exc.status not in (403, 404):
                raise
    if not listings:
        raise first
    return listings


def learn(client: IndexClient, machine: Machine, matrix: Matrix, channel: str = "stable") -> IndexFacts:
    """What the index offers this target. Raises IndexUnavailable when neither network nor cache can say."""
    platform = machine.platform or ""
    listings = _listings(client, matrix, platform)
    stale = next((listing.error for listing in listings if listing.stale), None)
    pre = channel in matrix.pre_release_channels
    fetched_at = min(x.fetched_at for x in listings)
    pages = {x.url: x.content for x in listings}
    key = latest_key(client.base, pre, machine)
    stored = client.cache.get_derived(key, is_learnt_record) if client.cache and all(pages.values()) else None
    facts = facts_learnt_from(stored, pages)  # the pages are unchanged (a 304, or fresh): reuse what was learnt
    if facts is None:
        target = target_tags(machine)
        wheels = (listing.wheels(PROJECT, target.platforms) for listing in listings)  # one page at a time
        facts = facts_from_pages(wheels, target, platform, client.base, fetched_at, pre)
        if client.cache and all(pages.values()):
            client.cache.put_derived(key, {"pages": pages, "facts": facts_to_json(facts)})
    return facts._replace(fetched_at=fetched_at, stale_error=stale, pages=tuple(pages))


def warm_facts(cache: IndexCache, root: str, machine: Machine, pre: bool, offline: bool) -> IndexFacts | None:
    """The facts last learnt for this target, if every page they came from is still fresh in the cache
    (any age with ``offline``): a warm lookup that reads a few small files and imports no network code."""
    value = cache.get_derived(latest_key(root, pre, machine), is_learnt_record)
    if not isinstance(value, dict) or not isinstance(value.get("pages"), dict) or not value["pages"]:
        return None
    fetched = []
    for url, content in value["pages"].items():
        entry = cache.get(url) if isinstance(url, str) else None
        if entry is None or entry.content != content or not (entry.fresh or offline):
            return None
        fetched.append(entry.fetched_at)
    facts = facts_from_json(value.get("facts"))
    return facts._replace(fetched_at=min(fetched), pages=tuple(value["pages"])) if facts else None


def _date(epoch: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def online_matrix(matrix: Matrix, machine: Machine, base: str, *, channel: str = "stable", offline: bool = False,
                  allow_insecure: bool = False, client: IndexClient | None = None,
                  default_client: IndexClient | None = None,
                  environ: Mapping[str, str] | None = None, prefix: str | None = None) -> OnlineResult:
    """The matrix extended from the PyTorch index at ``base`` and, for stable releases, from the default index
    (``default_index.py``: the one the user's installer uses); each source that fails falls back to its cached,
    then the embedded data, with one warning line. Never raises for a network problem."""
    result = _from_pytorch_index(matrix, machine, base, channel=channel, offline=offline,
                                 allow_insecure=allow_insecure, client=client)
    if channel != "stable" or not machine.platform:
        return result
    from .default_index import default_index_url, learn_default
    from .merge import merge_default

    found = default_index_url(environ, prefix)
    if found is None:
        return result
    root, where = found
    facts = None
    if default_client is None:  # warm: the facts last learnt, while their page is fresh (no network code)
        facts = warm_facts(IndexCache(), root.rstrip("/"), machine, False, offline)
    try:
        if facts is None:
            if default_client is None:
                from .client import make_client
                from .urls import check_index_url

                default_client = make_client(check_index_url(root, allow_insecure, what=where), offline,
                                             allow_insecure)
            facts = learn_default(default_client, machine, newer_than=result.matrix.releases[0].version
                                  if result.matrix.releases else None)
    except (EnvironmentFailure, InputError) as exc:  # IndexUnavailable is an EnvironmentFailure
        why = "not in the cache (--offline)" if offline else f"unreachable ({exc})"
        return result._replace(warning="; ".join(w for w in (result.warning, f"default index {why}") if w))
    merged = merge_default(result.matrix, facts, machine.platform, where)
    warning = result.warning
    if facts.stale_error:
        warning = "; ".join(w for w in (warning, f"default index unreachable ({facts.stale_error}); using cached "
                                                 f"data from {_date(facts.fetched_at)}") if w)
    return result._replace(matrix=merged, warning=warning)


def _from_pytorch_index(matrix: Matrix, machine: Machine, base: str, *, channel: str, offline: bool,
                        allow_insecure: bool, client: IndexClient | None) -> OnlineResult:
    """The matrix extended from the PyTorch index at ``base``; on failure the cached, then the embedded data, with a
    one-line warning."""
    if not machine.platform:
        return OnlineResult(matrix, None, warning="index not consulted: the target's OS or architecture is unknown; "
                                                  "using the embedded matrix")
    root = channel_root(base, matrix, channel)
    facts = None
    if client is None:
        cache = IndexCache()
        facts = warm_facts(cache, root, machine, channel in matrix.pre_release_channels, offline)
        if facts is None:
            from .client import make_client

            client = make_client(root, offline, allow_insecure, cache)
    if facts is None:
        from .simple import IndexUnavailable

        assert client is not None
        try:
            facts = learn(client, machine, matrix, channel)
        except IndexUnavailable as exc:
            why = "not in the cache (--offline)" if offline else f"index unreachable ({exc})"
            return OnlineResult(matrix, None, warning=f"{why}; using the embedded matrix")
    merged = merge(matrix, facts, machine.platform)._replace(index_base=base)
    warning = None
    if facts.stale_error:
        warning = f"index unreachable ({facts.stale_error}); using cached data from {_date(facts.fetched_at)}"
    return OnlineResult(merged, facts, warning)
