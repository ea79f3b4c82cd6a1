"""Index URLs: which index bases are accepted (https; plain http only for loopback or when allowed) and
the page URLs of the PyTorch index layout. Kept apart from the client so a warm lookup imports no more."""

from __future__ import annotations

import os
from collections.abc import Mapping

from .errors import InputError

DEFAULT_INDEX_BASE = "https://download.pytorch.org/whl"
INDEX_BASE_ENV = "TORCH_INSTALL_INDEX_BASE"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_index_url(url: str, allow_insecure: bool = False, what: str = "--index-base") -> str:
    """The URL without a trailing slash, or an InputError: only https, http on loopback, or http when allowed."""
    from urllib.parse import urlsplit  # only for a URL given: a plan on the default index never parses one

    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise InputError(f"{what} {url!r}: not an http(s) URL with a host")
    if parts.username or parts.password:
        raise InputError(f"{what} {url!r}: credentials in the URL are not accepted; use a .netrc file")
    if parts.query or parts.fragment:
        raise InputError(f"{what} {url!r}: a query or fragment is not allowed in an index base")
    if parts.scheme == "http" and not is_loopback(parts.hostname) and not allow_insecure:
        raise InputError(f"{what} {url!r}: plain http is refused (use https, or --allow-insecure-index)")
    return url.strip().rstrip("/")


def index_base_from(flag: str | None, env: Mapping[str, str] | None = None, allow_insecure: bool = False) -> str:
    """The index base: ``--index-base``, else ``$TORCH_INSTALL_INDEX_BASE``, else download.pytorch.org/whl."""
    env = os.environ if env is None else env
    if flag:
        return check_index_url(flag, allow_insecure)
    if env.get(INDEX_BASE_ENV):
        return check_index_url(env[INDEX_BASE_ENV], allow_insecure, what=INDEX_BASE_ENV)
    return DEFAULT_INDEX_BASE


def project_url(base: str, project: str, variant: str | None = None) -> str:
    """``{base}/{project}/`` (all variants) or ``{base}/{variant}/{project}/``."""
    base = base.rstrip("/")
    return f"{base}/{variant}/{project}/" if variant else f"{base}/{project}/"
