"""Index URLs: which index bases are accepted (https; plain http only for loopback or when allowed) and
the page URLs of the PyTorch index layout. Kept apart from the client so a warm lookup imports no more."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ..errors import InputError
from ..hosts import is_loopback
from ..resolver.plan import DEFAULT_INDEX_BASE

INDEX_BASE_ENV = "TORCH_INSTALL_INDEX_BASE"
_PLAIN_URL = r"(https?)://([A-Za-z0-9.-]+)(?::[0-9]+)?(?:/[A-Za-z0-9._~%+/-]*)?"  # matched through re's cache
UNSAFE_URL_CHARS = frozenset(' "\'<>\\^`{|}')  # never valid in a URL (RFC 3986), and quoting hazards


def redact_url(url: str) -> str:
    """The URL with any ``user:password@`` replaced by ``***@``: safe to print or to store in a path."""
    from ..display import redact

    return redact(url)


def transport_allowed(url: str, allow_insecure: bool = False) -> bool:
    """Whether ``url`` may be fetched: https, or plain http to a loopback host (or to any host when allowed).

    Checked on every URL fetched, redirect targets included; an unparsable URL is not allowed."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        scheme, host = parts.scheme, parts.hostname
    except ValueError:  # an unbalanced "[" of an IPv6 host
        return False
    return scheme == "https" or (scheme == "http" and (allow_insecure or is_loopback(host)))


def check_index_url(url: str, allow_insecure: bool = False, what: str = "--index-base") -> str:
    """The URL without a trailing slash, or an InputError: only https, http on loopback, or http when allowed.
    A plain URL (``https://host[:port]/path``) is read without importing urllib.parse."""
    url = url.strip()
    shown = redact_url(url)
    if any(c in UNSAFE_URL_CHARS or not " " < c < "\x7f" for c in url):
        # whitespace, quotes or control characters would end a requirements or Dockerfile line, or a TOML string
        raise InputError(f"{what} {shown!r}: characters a URL cannot hold (spaces, quotes, control characters "
                         "or non-ASCII; percent-encode them)")
    plain = re.fullmatch(_PLAIN_URL, url)
    if plain:  # scheme, host name, port and path only: nothing for urlsplit to find
        scheme, host = plain[1], plain[2]
    else:
        scheme, host = _checked_parts(url, what, shown)
    if scheme == "http" and not is_loopback(host) and not allow_insecure:
        raise InputError(f"{what} {shown!r}: plain http is refused (use https, or --allow-insecure-index)")
    return url.rstrip("/")


def _checked_parts(url: str, what: str, shown: str) -> tuple[str, str]:
    """(scheme, host) of a URL that is not plain, or an InputError: no host, not http(s), credentials, a query."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:  # an unbalanced "[" of an IPv6 host
        host = None
    if host is None or parts.scheme not in ("https", "http"):
        raise InputError(f"{what} {shown!r}: not an http(s) URL with a host")
    if parts.username or parts.password:
        raise InputError(f"{what} {shown!r}: credentials in the URL are not accepted; use a .netrc file")
    if parts.query or parts.fragment:
        raise InputError(f"{what} {shown!r}: a query or fragment is not allowed in an index base")
    return parts.scheme, host


def index_base_from(flag: str | None, env: Mapping[str, str] | None = None, allow_insecure: bool = False) -> str:
    """The index base: ``--index-base``, else ``$TORCH_INSTALL_INDEX_BASE``, else download.pytorch.org/whl."""
    env = os.environ if env is None else env
    if flag:
        return check_index_url(flag, allow_insecure)
    if env.get(INDEX_BASE_ENV):
        return check_index_url(env[INDEX_BASE_ENV], allow_insecure, what=INDEX_BASE_ENV)
    return DEFAULT_INDEX_BASE


VENDOR_INDEX_ENV = "TORCH_INSTALL_VENDOR_INDEX"


def vendor_mirrors(flags: list[str], env: Mapping[str, str] | None = None, allow_insecure: bool = False
                   ) -> tuple[tuple[str, str], ...]:
    """The mirrors of vendor indexes, ``(index id, URL)``: each ``--vendor-index ID=URL``, else those of
    ``$TORCH_INSTALL_VENDOR_INDEX`` (space-separated); an id the vendor-build table does not name, or a URL
    ``check_index_url`` refuses, is an InputError."""
    env = os.environ if env is None else env
    values, what = (flags, "--vendor-index") if flags else (env.get(VENDOR_INDEX_ENV, "").split(), VENDOR_INDEX_ENV)
    if not values:
        return ()
    from ..resolver.vendor_builds import load_vendor_builds

    known = load_vendor_builds().indexes
    out: dict[str, str] = {}
    for value in values:
        index_id, sep, url = value.partition("=")
        if not sep or not url:
            raise InputError(f"{what} {redact_url(value)!r}: expected ID=URL, like amd-stable=https://mirror/whl-next/")
        if index_id not in known:
            raise InputError(f"{what} {index_id!r}: not a vendor index (known: {', '.join(known)})")
        out[index_id] = check_index_url(url, allow_insecure, what=f"{what} {index_id}")
    return tuple(out.items())


def project_url(base: str, project: str, variant: str | None = None) -> str:
    """``{base}/{project}/`` (all variants) or ``{base}/{variant}/{project}/``."""
    base = base.rstrip("/")
    return f"{base}/{variant}/{project}/" if variant else f"{base}/{project}/"
