"""Resolve tenant, actor and row scope once per request from a bearer token.

Runs after Django's auth middleware and before ``idempotency``. On every request it attaches
unresolved ``request.tenant``, ``request.actor`` and ``request.row_scope``; a valid bearer
resolves all three, whatever its kind (``tenancy.tokens.credentials``: personal and session tokens,
and OAuth access tokens when ``tenancy.oauth`` is installed). An invalid one is answered here
with 401 and ``WWW-Authenticate: Bearer error="invalid_token"`` (``tenancy.challenges``) before
any view runs, unless the view renders authentication failures itself
(``renders_authentication_failure``): then the failure is recorded on
``request.authentication_failure`` and the view answers it in its own format.

The ``Authorization`` header is shared with the host project. On the project's routes the
middleware acts only on a credential the toolkit issued (``tenancy.tokens.credentials.claims``): any
other scheme or bearer passes untouched to the project's own authentication. A credential it
resolved is taken off the header (kept on ``request.tenancy_authorization``), so the project's
authentication classes never see — and never refuse — a toolkit token, in whatever order they
run beside ``TenancyAuthentication``. On the toolkit's own endpoints (the views that render
authentication failures: ``/mcp``, ``/a2a``) every ``Authorization`` header is judged.

A resolved caller's request is counted against its rate budget here too
(``tenancy.rates.throttling``): on tenancy's counter table, in the token check's own statement.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

from tenancy import conf
from tenancy.challenges import bearer_challenge
from tenancy.context import ActorContext, RowScope, TenantContext
from tenancy.events import bearer_refused
from tenancy.exceptions import AuthenticationFailedError, CredentialsSupersededError
from tenancy.markers import (
    ACCEPTS_SUPERSEDED_CREDENTIALS,
    CLAIMS_AUTHORIZATION,
    IGNORES_AMBIENT_CREDENTIALS,
    RENDERS_AUTHENTICATION_FAILURE,
    has_marker,
)
from tenancy.problems import problem_response
from tenancy.rates.throttling import (
    API_BUDGET,
    USAGE_ATTRIBUTE,
    RateUsage,
    budget_of,
    count,
    pending_count,
    rate_refusal,
)
from tenancy.tokens.credentials import authenticate_bearer, claims

security_logger = logging.getLogger("tenancy.security")

# Where a resolved toolkit credential is kept once it is off the header (the logout view reads
# it to revoke the token it was called with).
AUTHORIZATION_ATTRIBUTE = "tenancy_authorization"


def invalid_token_response(
    error: AuthenticationFailedError, request: HttpRequest | None = None
) -> HttpResponse:
    return problem_response(
        request=request,
        status=401,
        code=str(error.default_code),
        title=str(error.default_detail),
        headers={"WWW-Authenticate": bearer_challenge(error, request=request)},
    )


def refuse(
    request: HttpRequest, view_func: Callable[..., Any], error: AuthenticationFailedError
) -> HttpResponse | None:
    """Answer a refused bearer with a problem 401, or record it for a view that renders it."""
    bearer_refused.send(sender=type(error), request=request, reason=str(error.default_code))
    if has_marker(view_func, RENDERS_AUTHENTICATION_FAILURE):
        request.authentication_failure = error  # type: ignore[attr-defined]
        return None
    return invalid_token_response(error, request)


def resolve_row_scope(tenant: TenantContext, actor: ActorContext, scope: RowScope) -> None:
    """Resolve ``scope`` through the project's resolver (``TENANCY_ROW_SCOPE_RESOLVER``).

    The resolver returns ``(unrestricted, row_ids)``; tenancy never imports the domain.
    """
    path = conf.get("ROW_SCOPE_RESOLVER")
    if path is None:
        scope.resolve(unrestricted=True)
        return
    resolver: Callable[..., tuple[bool, frozenset[Any]]] = import_string(path)
    unrestricted, row_ids = resolver(tenant=tenant, actor=actor)
    scope.resolve(unrestricted=unrestricted, row_ids=frozenset(row_ids))


def resolve_member(
    tenant: TenantContext,
    actor: ActorContext,
    scope: RowScope,
    membership: Any,
    *,
    token_id: Any,
    scopes: Any,
    credential_epoch: Any,
    identity: Any = None,
) -> None:
    """The three answers for a live ``membership``: filled here for a request's bearer and for
    a re-check of a kept caller (a task on its worker, an open stream), never elsewhere."""
    tenant.resolve(membership.get_tenant())
    actor.resolve(
        user=membership.get_user(),
        membership_id=membership.pk,
        roles=membership.get_roles(),
        role=membership.effective_role,
        token_id=token_id,
        scopes=scopes,
        identity=identity,
        credential_epoch=credential_epoch,
    )
    resolve_row_scope(tenant, actor, scope)


def claims_every_header(view_func: Callable[..., Any]) -> bool:
    """The toolkit's own endpoints: every ``Authorization`` header sent there is theirs."""
    return has_marker(view_func, CLAIMS_AUTHORIZATION) or has_marker(
        view_func, RENDERS_AUTHENTICATION_FAILURE
    )


def _take_off_header(request: HttpRequest, header: str) -> None:
    """The resolved credential leaves ``Authorization``: nothing after this reads it there."""
    setattr(request, AUTHORIZATION_ATTRIBUTE, header)
    del request.META["HTTP_AUTHORIZATION"]
    request.__dict__.pop("headers", None)  # HttpRequest.headers is cached from META


class TenancyMiddleware(MiddlewareMixin):
    def process_request(self, request: HttpRequest) -> None:
        request.tenant = TenantContext()  # type: ignore[attr-defined]
        request.actor = ActorContext()  # type: ignore[attr-defined]
        request.row_scope = RowScope()  # type: ignore[attr-defined]
        request.authentication_failure = None  # type: ignore[attr-defined]

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: Any,
        view_kwargs: Any,
    ) -> HttpResponse | None:
        if has_marker(view_func, IGNORES_AMBIENT_CREDENTIALS):
            return None
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        scheme, _, raw = header.partition(" ")
        raw = raw.strip()
        bearer = scheme.lower() == "bearer" and bool(raw)
        ours = bearer and claims(raw)
        if not ours and not claims_every_header(view_func):
            return None  # the project's credential: its own authentication decides
        if not bearer:
            return refuse(request, view_func, AuthenticationFailedError())
        budget = budget_of(view_func)
        pending = pending_count(request, budget) if budget is not None else None
        try:
            credential = authenticate_bearer(raw, request, count=pending)
        except CredentialsSupersededError as error:
            if not has_marker(view_func, ACCEPTS_SUPERSEDED_CREDENTIALS):
                security_logger.info("superseded token refused", extra={"path": request.path})
                return refuse(request, view_func, error)
            return None
        except AuthenticationFailedError as error:
            security_logger.info("bearer refused: %s", error.default_code)
            return refuse(request, view_func, error)
        membership = credential.membership
        resolve_member(
            request.tenant,  # type: ignore[attr-defined]
            request.actor,  # type: ignore[attr-defined]
            request.row_scope,  # type: ignore[attr-defined]
            membership,
            token_id=credential.token_id,
            scopes=credential.scopes,
            identity=credential.identity,
            credential_epoch=membership.credential_epoch,
        )
        _take_off_header(request, header)
        if budget is None:
            return None
        # Before idempotency's process_view opens the write's transaction
        # (tenancy.rates.throttling).
        usage: RateUsage | None
        if pending is not None and pending.value is not None:
            usage = pending.usage()  # counted by the token check's own statement
        else:
            usage = count(request, budget)
        setattr(request, USAGE_ATTRIBUTE, usage)
        if budget is not API_BUDGET:
            return None  # the view answers its own budget (counted_usage)
        return rate_refusal(request, usage)
