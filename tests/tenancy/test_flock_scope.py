"""Flock-scope resolution (brief §5.4) through the real middleware."""

from __future__ import annotations

from typing import Any

import pytest

from cluck.models import WorkerAssignment
from tests.factories import FlockFactory
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def _me(client):
    response = client.get("/api/v1/me/")
    assert response.status_code == 200, response.content
    return response.json()


@mutation(
    "cluck/scope.py",
    find="if not rows or any(flock_id is None for flock_id in rows):",
    replace="if True:",
)
def test_a_worker_assigned_to_flocks_is_restricted_to_them(member_client):
    """Mutation: make the resolver return unrestricted for every Worker → red."""
    client, membership = member_client(roles=[])
    flock = FlockFactory.create(farm=membership.tenant)
    FlockFactory.create(farm=membership.tenant)
    WorkerAssignment.all_tenants.create(farm=membership.tenant, membership=membership, flock=flock)
    me = _me(client)
    assert me["role"] == "Worker"
    assert me["flockRestricted"] is True and me["assignedFlockIds"] == [flock.pk]


def test_a_worker_with_no_assignment_rows_is_unrestricted(member_client):
    client, _ = member_client(roles=[])
    assert _me(client)["flockRestricted"] is False


@mutation(
    "cluck/scope.py",
    find="if not rows or any(flock_id is None for flock_id in rows):",
    replace="if not rows:",
)
def test_a_worker_with_a_farm_wide_row_is_unrestricted(member_client):
    """Mutation: ignore ``flock_id IS NULL`` rows in the resolver → red."""
    client, membership = member_client(roles=[])
    flock = FlockFactory.create(farm=membership.tenant)
    WorkerAssignment.all_tenants.create(farm=membership.tenant, membership=membership, flock=flock)
    WorkerAssignment.all_tenants.create(farm=membership.tenant, membership=membership, flock=None)
    assert _me(client)["flockRestricted"] is False


@pytest.mark.parametrize("roles", [["Admin"], ["Manager"], ["Sales"], ["ReadOnly"]])
def test_every_other_role_is_unrestricted_even_with_assignment_rows(member_client, roles):
    client, membership = member_client(roles=roles)
    flock = FlockFactory.create(farm=membership.tenant)
    WorkerAssignment.all_tenants.create(farm=membership.tenant, membership=membership, flock=flock)
    assert _me(client)["flockRestricted"] is False


@mutation(
    "tenancy/middleware.py",
    find="    resolve_row_scope(tenant, actor, scope)",
    replace=(
        '    if actor.role.name == "Worker":\n        resolve_row_scope(tenant, actor, scope)'
    ),
)
def test_the_middleware_resolves_the_scope_for_every_authenticated_request(member_client):
    """``is_resolved`` is what the MCP layer checks; the middleware must always set it.

    Mutation: skip ``resolve_row_scope`` for non-Workers in the middleware → red.
    """
    from django.test import RequestFactory

    from tenancy.middleware import TenancyMiddleware

    client, _ = member_client(roles=["Admin"])
    raw = client._credentials["HTTP_AUTHORIZATION"]
    request: Any = RequestFactory().get("/api/v1/me/", HTTP_AUTHORIZATION=raw)
    middleware = TenancyMiddleware(lambda r: None)  # type: ignore[arg-type]
    middleware.process_request(request)
    assert not request.row_scope.is_resolved
    middleware.process_view(request, lambda r: None, (), {})
    assert request.tenant.is_resolved and request.actor.is_resolved
    assert request.row_scope.is_resolved and request.row_scope.is_unrestricted
