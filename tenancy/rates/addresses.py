"""The client address every rate limit keys on: one rule, one setting.

``REMOTE_ADDR`` is the peer of the connection. Behind a reverse proxy the peer is the proxy and
the client is named in ``X-Forwarded-For`` — but that header is whatever the client wrote,
unless a proxy of ours wrote it. So the header is believed only as far as trusted proxies
(``TENANCY_TRUSTED_PROXIES``: addresses or networks) vouch for it: walking from the right,
every hop that is a trusted proxy is skipped, and the first one that is not is the client.
With no trusted proxies (the default) the peer is the client and the header is ignored.

The ASGI server must not rewrite the peer from the header itself (uvicorn does for loopback
peers unless started with ``--forwarded-allow-ips`` naming only real proxies; the toolkit's
``scripts/serve`` passes the same list), or a client on a trusted address could pick any
address per request and walk around every per-address limit.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Any

from tenancy import conf

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"


@lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(proxy.strip(), strict=False) for proxy in proxies)


def trusted_proxies() -> tuple[Network, ...]:
    value = conf.get("TRUSTED_PROXIES")
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    return _networks(tuple(value))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def client_address(request: Any) -> str:
    """The address of the client that sent ``request`` (``"unknown"`` when there is none)."""
    peer = _address(str(request.META.get("REMOTE_ADDR") or ""))
    if peer is None:
        return UNKNOWN
    proxies = trusted_proxies()
    if not proxies or not any(peer in network for network in proxies):
        return str(peer)
    hops = str(request.META.get("HTTP_X_FORWARDED_FOR") or "").split(",")
    client = peer
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            break  # a hop nobody can vouch for: the last trusted one is what we know
        client = address
        if not any(address in network for network in proxies):
            break
    return str(client)


def rate_key(group: str, request: Any) -> str:
    """``client_address`` as a django-ratelimit ``key``."""
    return client_address(request)
