"""One client-address rule for every rate limit (``tenancy.rates.addresses``)."""

from __future__ import annotations

import pytest
from django.test import RequestFactory, override_settings

from tenancy.rates.addresses import client_address
from tests.mutations import mutation


def _address(peer: str | None, forwarded: str | None = None) -> str:
    headers = {} if forwarded is None else {"X-Forwarded-For": forwarded}
    request = RequestFactory().get("/", headers=headers)
    if peer is None:
        del request.META["REMOTE_ADDR"]
    else:
        request.META["REMOTE_ADDR"] = peer
    return client_address(request)


@mutation(
    "tenancy/rates/addresses.py",
    find="    if not proxies or not any(peer in network for network in proxies):",
    replace="    if False:",
)
def test_without_trusted_proxies_the_header_is_ignored():
    """A client writes any X-Forwarded-For it likes: with no proxy of ours in front, it names
    nobody. Mutation: believe the header from any peer → every request its own address."""
    for forwarded in ("203.0.113.1", "198.51.100.7, 203.0.113.1", "garbage"):
        assert _address("127.0.0.1", forwarded) == "127.0.0.1"


@override_settings(TENANCY_TRUSTED_PROXIES=["10.0.0.0/8", "127.0.0.1"])
@mutation(
    "tenancy/rates/addresses.py",
    find="        if not any(address in network for network in proxies):\n            break",
    replace="        continue",
)
def test_behind_trusted_proxies_the_first_untrusted_hop_from_the_right_is_the_client():
    """Mutation: take the leftmost (client-written) entry → a client picks its own address."""
    assert _address("127.0.0.1", "203.0.113.9") == "203.0.113.9"
    assert _address("127.0.0.1", "6.6.6.6, 203.0.113.9, 10.1.2.3") == "203.0.113.9"
    assert _address("10.1.1.1", "198.51.100.2:5555") == "198.51.100.2"
    assert _address("192.0.2.5", "203.0.113.9") == "192.0.2.5"  # not a proxy of ours
    assert _address("127.0.0.1", "not-an-ip, 203.0.113.9") == "203.0.113.9"
    assert _address("127.0.0.1", "203.0.113.9, not-an-ip") == "127.0.0.1"


@pytest.mark.parametrize("peer", [None, "", "not-an-address"])
def test_no_peer_is_counted_together(peer):
    assert _address(peer) == "unknown"


@override_settings(TENANCY_TRUSTED_PROXIES="127.0.0.1, ::1")
def test_the_setting_may_be_a_comma_separated_string():
    assert _address("::1", "2001:db8::5") == "2001:db8::5"
