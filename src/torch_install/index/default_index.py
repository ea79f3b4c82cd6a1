"""The default index: the one the user's installer would use for a plain ``pip install torch``.

In order: ``TORCH_INSTALL_DEFAULT_INDEX`` (a URL, or ``none`` to read none), ``PIP_INDEX_URL``, pip's
configuration files (``PIP_CONFIG_FILE``, the site, user and virtual environment ``pip.conf``/``pip.ini``,
``index-url`` under ``[install]`` or ``[global]``), uv's ``UV_DEFAULT_INDEX`` and ``UV_INDEX_URL``; else the
public index pip itself defaults to (read from pip, so this module names no registry). The URL is a PEP 503/691
simple-API root ending in ``/``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from ..machine import Machine
    from .client import IndexClient
    from .facts import IndexFacts


OVERRIDE_ENV = "TORCH_INSTALL_DEFAULT_INDEX"


def _from_pip_config(environ: Mapping[str, str], prefix: str | None) -> str | None:
    from ..environment.pip_config import configured

    found = configured("index-url", {k: v for k, v in environ.items() if k != "PIP_INDEX_URL"}, prefix=prefix)
    return found.value if found else None


def _pips_own_default() -> str | None:
    try:
        from pip._internal.models.index import PyPI  # pip's public default, as pip itself has it
    except ImportError:
        return None
    url = getattr(PyPI, "simple_url", None)
    return url if isinstance(url, str) else None


def default_index_url(environ: Mapping[str, str] | None = None, prefix: str | None = None
                      ) -> tuple[str, str] | None:
    """(simple-API root URL ending in "/", where it was configured), or None when none is known. ``prefix``: the
    environment whose own pip configuration is read (default ``$VIRTUAL_ENV``)."""
    env = os.environ if environ is None else environ
    chosen = env.get(OVERRIDE_ENV)
    if chosen is not None:  # this tool's own setting: a URL, or "none" to read no default index
        return None if chosen.strip().lower() in ("", "none", "off") else (chosen.strip().rstrip("/") + "/",
                                                                             OVERRIDE_ENV)
    candidates = [(env.get("PIP_INDEX_URL"), "PIP_INDEX_URL"), (_from_pip_config(env, prefix), "pip configuration"),
                  (env.get("UV_DEFAULT_INDEX"), "UV_DEFAULT_INDEX"), (env.get("UV_INDEX_URL"), "UV_INDEX_URL")]
    for url, where in candidates:
        if url and url.strip():
            return url.strip().rstrip("/") + "/", where
    own = _pips_own_default()
    return (own.rstrip("/") + "/", "pip's default") if own else None


MAX_BUILDS_READ = 3  # releases newer than the embedded data whose default build is read, newest first


def learn_default(client: IndexClient, machine: Machine, newer_than: str | None = None) -> IndexFacts:
    """What the default index offers this target: torch's releases, their Pythons and platform floors, read from
    its project page (PEP 691 JSON, else PEP 503). Cached like the PyTorch index's facts. Raises IndexUnavailable
    when neither network nor cache can say."""
    from ..wheel_tags import target_tags
    from .facts import facts_from_pages, facts_learnt_from, facts_to_json, is_learnt_record, latest_key

    listing = client.listing("torch")
    pages = {listing.url: listing.content}
    key = latest_key(client.base, False, machine)  # what learn.warm_facts reads on the next run
    stored = client.cache.get_derived(key, is_learnt_record) if client.cache and listing.content else None
    facts = facts_learnt_from(stored, pages, newer_than=newer_than)
    if facts is None:
        target = target_tags(machine)
        facts = facts_from_pages([listing.wheels("torch", target.platforms)], target, machine.platform or "",
                                 client.base, listing.fetched_at, unlabelled="default")
        facts = _with_default_builds(client, facts, machine, newer_than)
        if client.cache and listing.content:
            client.cache.put_derived(key, {"pages": pages, "newer_than": newer_than, "facts": facts_to_json(facts)})
    return facts._replace(fetched_at=listing.fetched_at, stale_error=listing.error if listing.stale else None,
                          pages=(listing.url,))


def _with_default_builds(client: IndexClient, facts: IndexFacts, machine: Machine, newer_than: str | None
                         ) -> IndexFacts:
    """``facts`` with the default build of the releases newer than ``newer_than`` (off macOS, where the default
    index's wheel is one build among the PyTorch index's), read from their METADATA; a wheel that cannot be read
    leaves it unknown."""
    if newer_than is None or (machine.platform or "").startswith("macos"):
        return facts
    from ..resolver.matrix import version_key
    from .pages import IndexUnavailable
    from .wheel_metadata import wheel_build

    releases, read = [], 0
    for release in facts.releases:
        if release.wheel_url and read < MAX_BUILDS_READ and version_key(release.version) > version_key(newer_than):
            read += 1
            with contextlib.suppress(IndexUnavailable):  # unreadable: the default build stays unknown
                release = release._replace(default_build=wheel_build(client.fetcher, release.wheel_url))
        releases.append(release)
    return facts._replace(releases=tuple(releases))
