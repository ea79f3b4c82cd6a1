"""Which hosts are this machine: the one rule the index transport checks and the install commands follow (pip
refuses a plain-http index unless its host is trusted; loopback hosts it trusts already)."""

from __future__ import annotations


def is_loopback(host: str | None) -> bool:
    """Whether a host is this machine: ``localhost`` or a loopback IP address (not a name like 127.example.com)."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def insecure_host(url: str | None) -> str | None:
    """The ``host[:port]`` of a plain-http URL that is not loopback (what pip's ``--trusted-host`` takes), else
    None."""
    if not url or not url.lower().startswith("http://"):
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if is_loopback(parts.hostname):
        return None
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host or None
