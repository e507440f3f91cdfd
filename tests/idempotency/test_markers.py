"""Exemption is by marker, never by path list; the walk guard pins exactly who carries one."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import Resolver404, resolve

from idempotency import ExemptView, exempt_views, exemption_of, handles_own_idempotency
from idempotency.markers import HANDLES_OWN_IDEMPOTENCY, NEVER_REPLAY, all_views, never_replay
from tests.mutations import mutation

MARKER_URLS = "tests.testapps.idem.marker_urls"

# The shipped views that opt out of the HTTP adapter, with their reasons. Extend this set
# deliberately (and say why in review): every entry is a write the middleware does not protect.
EXPECTED_EXEMPT = {
    ("auth-login", NEVER_REPLAY, "returns a live bearer token"),
    ("auth-logout", NEVER_REPLAY, "a pure side effect: a replay would fake a logout"),
    ("me-token-list", NEVER_REPLAY, "token creation returns the live secret once"),
}


def _mcp_route(paths: tuple[str, ...] = ("/mcp", "/mcp/")) -> str | None:
    """The /mcp view (and /a2a, the same tools as A2A skills) must be the
    ``handles_own_idempotency`` views once routed; until then they cannot be expected."""
    for path in paths:
        try:
            return resolve(path).url_name or path
        except Resolver404:
            continue
    return None


def shipped(found: list[ExemptView]) -> set[tuple[str | None, str, str]]:
    # Test-only apps (tests/testapps) are routed during the test run; they are not shipped.
    return {(e.name, e.marker, e.reason) for e in found if not e.route.startswith("idem-test/")}


@mutation(
    "tenancy/api.py",
    find="@keys_per_user\nclass TokenRevokeApi",
    replace='@never_replayed("a second exempt view")\n@keys_per_user\nclass TokenRevokeApi',
)
@mutation("tenancy/api.py", find='@never_replayed("returns a live bearer token")\n', replace="")
def test_the_exempt_views_are_exactly_the_expected_ones() -> None:
    """Walks the whole URL resolver.

    Mutation: put ``@never_replayed`` (or ``handles_own_idempotency``) on a second view, e.g.
    ``TokenRevokeApi`` (``me-token-revoke``) → red. Mutation: drop it from ``auth-login`` → red.
    """
    walked = all_views()
    assert len(walked) >= 15  # sanity: the walk sees the whole API, includes flattened
    expected = set(EXPECTED_EXEMPT)
    for route in (_mcp_route(), _mcp_route(("/a2a",))):
        if route is not None:
            expected.add(
                (
                    route,
                    HANDLES_OWN_IDEMPOTENCY,
                    "handles its own idempotency (keys are part of its protocol)",
                )
            )
    assert shipped(exempt_views()) == expected


def test_only_the_protocol_endpoints_handle_their_own_idempotency() -> None:
    """/mcp and /a2a carry the key in their protocol and run writes in the idempotent unit."""
    own = [e for e in exempt_views() if e.marker == HANDLES_OWN_IDEMPOTENCY]
    assert {e.route.rstrip("/") for e in own} <= {"mcp", "a2a"}
    assert len(own) <= 2


def test_markers_are_found_on_functions_classes_nested_includes_and_method_routes() -> None:
    found = {(e.route, e.name, e.method, e.marker, e.reason) for e in exempt_views(MARKER_URLS)}
    assert found == {
        (
            "own/",
            "own",
            None,
            HANDLES_OWN_IDEMPOTENCY,
            "handles its own idempotency (keys are part of its protocol)",
        ),
        ("drf/", "drf", None, NEVER_REPLAY, "class-level marker on a DRF view"),
        ("cbv/", "cbv", None, NEVER_REPLAY, "class-level marker on a Django CBV"),
        ("nested/fn/", "ns:fn", None, NEVER_REPLAY, "nested"),
        ("things/", "thing-secret", "POST", NEVER_REPLAY, "class-level marker on a DRF view"),
    }


def test_a_method_routed_dispatcher_is_exempt_only_for_the_marked_method() -> None:
    from tests.testapps.idem.marker_urls import routes

    assert exemption_of(routes.view, "GET") is None
    found = exemption_of(routes.view, "POST")
    assert found is not None and found.marker == NEVER_REPLAY


def test_never_replay_needs_a_reason() -> None:
    with pytest.raises(TypeError):
        never_replay("  ")
    with pytest.raises(TypeError):
        never_replay(lambda request: None)  # type: ignore[arg-type]


def test_handles_own_idempotency_returns_the_view_unchanged() -> None:
    def view(request: Any) -> None:
        return None

    assert handles_own_idempotency(view) is view
    assert exemption_of(view) is not None
