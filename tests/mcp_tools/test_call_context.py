# mypy: disable-error-code="attr-defined"
"""Guards 1–5 and 3b: the call context refuses to exist unless the identity bridge ran.

Each clause has its own reason, so deleting any single check turns exactly its test red.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.test import RequestFactory

from cluck.roles import FARM_ROLES
from mcp_tools import CallContext, CallContextRefusedError
from mcp_tools.call.context import request_in_flight
from tenancy import ActorContext, RowScope, TenantContext
from tests.mutations import mutation


def _request(*, tenant=True, actor="person", scope="unrestricted"):
    request = RequestFactory().post("/mcp")
    request.tenant = TenantContext()
    if tenant:
        request.tenant.resolve(SimpleNamespace(pk=41))
    request.actor = ActorContext()
    if actor == "person":
        request.actor.resolve(
            user=SimpleNamespace(pk=7, email="owner@farm.test"),
            membership_id=70,
            roles=("Admin",),
            role=FARM_ROLES["Owner"],
            token_id=700,
        )
    elif actor == "system":
        request.actor.resolve_system("cli:bootstrap-admin")
    request.row_scope = RowScope()
    if scope == "unrestricted":
        request.row_scope.resolve(unrestricted=True)
    elif scope == "restricted":
        request.row_scope.resolve(unrestricted=False, row_ids=frozenset({3, 5}))
    return request


def _build(request, tenant=None):
    with request_in_flight(request):
        return CallContext.from_request(
            request,
            tenant=request.tenant if tenant is None else tenant,
            request_id="req-1",
            protocol_version="2025-11-25",
        )


def _refusal(request, tenant=None) -> str:
    with pytest.raises(CallContextRefusedError) as info:
        _build(request, tenant)
    assert str(info.value) == f"CallContext refused: {info.value.reason}."
    return info.value.reason


@mutation(
    "mcp_tools/call/context.py",
    find="if request is None or _request_in_flight.get() is not request:",
    replace="if request is None:",
)
def test_refused_when_no_request_is_in_flight():
    """Building outside the view's handling of this request is refused.

    Mutation: drop the ``_request_in_flight.get() is request`` clause → red.
    """
    request = _request()
    with pytest.raises(CallContextRefusedError) as info:
        CallContext.from_request(
            request, tenant=request.tenant, request_id="r", protocol_version="2025-11-25"
        )
    assert info.value.reason == "no HTTP request is in flight"
    with pytest.raises(CallContextRefusedError) as info:
        CallContext.from_request(None, tenant=None, request_id="r", protocol_version="x")
    assert info.value.reason == "no HTTP request is in flight"


@mutation(
    "mcp_tools/call/context.py",
    find=(
        'if tenant is not getattr(request, "tenant", None) or not isinstance(tenant, '
        "TenantContext):"
    ),
    replace="if tenant.id != request.tenant.id or not isinstance(tenant, TenantContext):",
)
def test_refused_when_the_tenant_is_an_equal_object_from_another_scope():
    """Guard 5: same farm, different instance → refused (identity, not equality).

    Mutation: compare ``tenant.id == request.tenant.id`` instead of ``is`` → red.
    """
    request = _request()
    twin = TenantContext()
    twin.resolve(SimpleNamespace(pk=41))
    assert twin.id == request.tenant.id
    assert _refusal(request, twin) == "the tenant was resolved outside the HTTP request's scope"


@mutation(
    "mcp_tools/call/context.py",
    find=(
        "        if not tenant.is_resolved:\n"
        "            raise CallContextRefusedError(REASON_TENANT_UNRESOLVED)\n"
    ),
    replace="",
)
def test_refused_when_the_tenant_is_unresolved():
    """Guard 1. Mutation: delete the ``tenant.is_resolved`` check → red (the actor is
    resolved, so no later clause catches it)."""
    assert _refusal(_request(tenant=False)) == "the tenant is unresolved"


@mutation(
    "mcp_tools/call/context.py",
    find="if not isinstance(actor, ActorContext) or not actor.is_resolved:",
    replace="if not isinstance(actor, ActorContext):",
)
def test_refused_when_the_actor_is_unresolved():
    """Guard 2 (its own reason string, so the clause is individually killable).

    Mutation: delete the ``actor.is_resolved`` check → red (reason becomes "system actor").
    """
    assert _refusal(_request(actor=None)) == "the actor is unresolved"


@mutation(
    "mcp_tools/call/context.py",
    find=(
        "        if actor.is_system or actor.user_id is None:\n"
        "            raise CallContextRefusedError(REASON_SYSTEM_ACTOR)\n"
    ),
    replace="",
)
def test_refused_when_the_actor_is_a_system_actor():
    """Guard 4. Mutation: delete the ``is_system or user_id is None`` check → red (a system
    actor is resolved and has a resolved scope, so construction would succeed)."""
    assert _refusal(_request(actor="system")) == "the actor is a system actor"


@mutation(
    "mcp_tools/call/context.py",
    find="if not isinstance(scope, RowScope) or not scope.is_resolved:",
    replace="if not isinstance(scope, RowScope):",
)
def test_refused_when_the_row_scope_is_unresolved():
    """Guard 3: an unresolved scope reports unrestricted=True and must still be refused.

    Mutation: delete the ``scope.is_resolved`` check → red.
    """
    request = _request(scope=None)
    assert request.row_scope.is_unrestricted  # the trap: unresolved looks farm-wide
    assert _refusal(request) == "the row scope is unresolved"


@mutation(
    "mcp_tools/call/context.py",
    find="if not isinstance(scope, RowScope) or not scope.is_resolved:",
    replace="if not isinstance(scope, RowScope) or scope.is_unrestricted:",
)
def test_owner_with_a_farm_wide_scope_builds_and_is_pinned_whole():
    """Guard 3b: the check reads ``is_resolved``, not ``is_unrestricted``.

    Mutation: check ``scope.is_unrestricted`` (refuse when unrestricted) → red here; reading
    ``not is_unrestricted`` as "resolved" → red in the unresolved-scope test.
    """
    request = _request()
    ctx = _build(request)
    assert ctx == _build(request)
    assert (ctx.tenant, ctx.actor, ctx.row_scope) == (
        request.tenant,
        request.actor,
        request.row_scope,
    )
    assert ctx.tenant is request.tenant
    assert {
        "tenant_id": ctx.tenant_id,
        "user_id": ctx.user_id,
        "email": ctx.email,
        "role": ctx.role,
        "is_row_restricted": ctx.is_row_restricted,
        "row_ids": ctx.row_ids,
        "request_id": ctx.request_id,
        "protocol_version": ctx.protocol_version,
    } == {
        "tenant_id": 41,
        "user_id": 7,
        "email": "owner@farm.test",
        "role": FARM_ROLES["Owner"],
        "is_row_restricted": False,
        "row_ids": frozenset(),
        "request_id": "req-1",
        "protocol_version": "2025-11-25",
    }
    assert not hasattr(ctx, "is_resolved")


def test_restricted_scope_is_reported():
    ctx = _build(_request(scope="restricted"))
    assert ctx.is_row_restricted
    assert ctx.row_ids == frozenset({3, 5})


@mutation(
    "mcp_tools/call/context.py",
    find=(
        "        if self._factory is not _FACTORY:\n"
        "            raise CallContextRefusedError(REASON_NOT_FROM_FACTORY)\n"
    ),
    replace="        pass\n",
)
def test_the_context_cannot_be_constructed_directly_or_mutated():
    """No half-built instance: only the factory makes one; it is frozen.

    Mutation: drop ``__post_init__``'s factory check → red.
    """
    request = _request()
    with pytest.raises(CallContextRefusedError) as info:
        CallContext(
            tenant=request.tenant,
            actor=request.actor,
            row_scope=request.row_scope,
            request_id="r",
            protocol_version="2025-11-25",
        )
    assert info.value.reason == "it must be built by CallContext.from_request"
    ctx = _build(request)
    with pytest.raises(AttributeError):
        ctx.request_id = "other"  # type: ignore[misc,unused-ignore]
