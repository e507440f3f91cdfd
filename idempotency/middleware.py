"""The HTTP adapter: ``Idempotency-Key`` on POST/PUT/PATCH/DELETE of a resolved tenant.

Scope (brief §4.3): operation key = SHA-256 of ``"METHOD:PATH"`` (the path exactly as received,
no query string), caller key = SHA-256 of the header value (of ``"<user id>:<value>"`` under the
user-scoped prefixes, ``/api/v1/me``), fingerprint = the raw body's SHA-256 bound to the acting
user (``bound_fingerprint``, as in the MCP adapter). The view's own permission checks
(``IDEMPOTENCY_AUTHORIZE_FUNCTION``) run before the claim: nothing is claimed, waited on or
replayed for a caller the view would refuse.

Status contract (IETF ``Idempotency-Key`` draft): missing or blank key → 400
``Idempotency.KeyRequired``; a key breaking ``idempotency.keys`` (too long, a character outside
visible ASCII) → 400 ``Idempotency.KeyInvalid``; same key, other body or other user → 422
``Idempotency.KeyReused``; live competitor past the wait budget → 409 ``Idempotency.InProgress``
with ``Retry-After``; replay → the stored status, content type and body with
``Idempotent-Replayed: true``. Only 2xx responses are published; anything else rolls the
view's work back and releases the claim.

The view runs *inside* ``IdempotentUnit.run`` so its writes and the publish are one transaction:
``process_view`` calls the view itself and returns its response, so Django does not call it
again. This middleware must therefore be the last one with a ``process_view`` hook
(``idempotency.W001``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync, iscoroutinefunction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.http.request import RawPostDataException
from django.utils.deprecation import MiddlewareMixin

from idempotency import conf
from idempotency.fingerprint import bound_fingerprint, fingerprint_bytes, sha256_hex
from idempotency.keys import KEY_REQUIRED, key_problem
from idempotency.markers import exemption_of, keys_are_user_scoped, view_class_of
from idempotency.unit import (
    Executed,
    Failure,
    IdempotencyScope,
    IdempotentUnit,
    InProgress,
    KeyConflict,
    Replayed,
    Success,
)

TRACKED_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
PROBLEM_CONTENT_TYPE = "application/problem+json"
# Writing any body for these statuses breaks the connection after the headers went out.
BODILESS_STATUSES = frozenset({204, 205, 304})


def problem_type(code: str, request: HttpRequest | None) -> str:
    """``IDEMPOTENCY_PROBLEM_TYPE_BASE_URL`` + code, or this server's own ``/problems/<code>``:
    built like tenancy's (``/problems/Auth.InvalidToken``), so one client rule reads both."""
    base = conf.get("PROBLEM_TYPE_BASE_URL")
    if base:
        return f"{base}{code}"
    path = f"/problems/{code}"
    return request.build_absolute_uri(path) if request is not None else path


def problem_response(
    *,
    status: int,
    code: str,
    title: str,
    detail: str = "",
    headers: dict[str, str] | None = None,
    request: HttpRequest | None = None,
) -> HttpResponse:
    """RFC 9457 problem JSON ``{type, title, status, code, detail}`` (idempotency's own; it does
    not import tenancy's)."""
    body = {
        "type": problem_type(code, request),
        "title": title,
        "status": status,
        "code": code,
        "detail": detail or title,
    }
    response = HttpResponse(json.dumps(body), status=status, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def tenant_id_from_request(request: HttpRequest) -> str | None:
    """Default ``IDEMPOTENCY_TENANT_ID_FUNCTION``: duck-typed ``request.tenant``
    (``is_resolved``, ``id``), so this app needs no tenancy import."""
    tenant = getattr(request, "tenant", None)
    if tenant is None or not getattr(tenant, "is_resolved", False):
        return None
    tenant_id = getattr(tenant, "id", None)
    return None if tenant_id is None else str(tenant_id)


def user_id_from_request(request: HttpRequest) -> str | None:
    """Default ``IDEMPOTENCY_USER_ID_FUNCTION``: ``request.actor.user_id`` when resolved,
    else an authenticated ``request.user``."""
    actor = getattr(request, "actor", None)
    if actor is not None and getattr(actor, "is_resolved", False):
        user_id = getattr(actor, "user_id", None)
        if user_id is not None:
            return str(user_id)
    user = getattr(request, "user", None)
    if user is not None and getattr(user, "is_authenticated", False):
        return str(user.pk)
    return None


def authorize_view(
    request: HttpRequest, view_func: Callable[..., Any], view_args: Any, view_kwargs: Any
) -> HttpResponseBase | None:
    """Default ``IDEMPOTENCY_AUTHORIZE_FUNCTION``: a DRF view's own permission checks.

    Run before the claim, so a caller the view would refuse is refused the same way (the
    view's exception handler renders the 401/403) before any replay, any wait on a competing
    claim and any ``KeyReused``. Duck-typed (no DRF import): a view class offering
    ``initialize_request``/``check_permissions``/``handle_exception``/``finalize_response``.
    Anything else (a plain Django view) authorizes inside itself; ``None`` lets it through.
    Only ``has_permission`` runs here: object permissions and throttles stay in the view.
    """
    found = view_class_of(view_func, request.method or "")
    if found is None:
        return None
    view_class, initkwargs = found
    needed = ("initialize_request", "check_permissions", "handle_exception", "finalize_response")
    if not all(callable(getattr(view_class, name, None)) for name in needed):
        return None
    view = view_class(**initkwargs)
    actions = getattr(view_func, "actions", None)
    if isinstance(actions, dict):
        # A DRF ViewSet: what its as_view() binds before initialize_request reads action_map.
        view.action_map = actions
        for method, action in actions.items():
            setattr(view, method, getattr(view, action))
    view.args, view.kwargs = view_args, view_kwargs
    drf_request = view.initialize_request(request, *view_args, **view_kwargs)
    view.request = drf_request
    view.headers = dict(getattr(view, "default_response_headers", {}))
    try:
        view.format_kwarg = view.get_format_suffix(**view_kwargs)
        view.check_permissions(drf_request)
    except Exception as exc:  # the view's handler decides what it means (401, 403, ...)
        response = view.handle_exception(exc)
        return _buffered(view.finalize_response(drf_request, response, *view_args, **view_kwargs))
    return None


def _is_user_scoped(path: str) -> bool:
    lowered = path.lower()
    for prefix in conf.get("USER_SCOPED_PATH_PREFIXES"):
        stem = prefix.lower().rstrip("/")
        if lowered == stem or lowered.startswith(stem + "/"):
            return True
    return False


def caller_key_for(request: HttpRequest, raw_key: str, view_func: Any = None) -> str:
    """SHA-256 of the key, or of ``"<user id>:<key>"`` for a view marked ``user_scoped_keys``
    (or on a ``USER_SCOPED_PATH_PREFIXES`` path): two users of one tenant sending the same key
    to their own ``/me`` writes must both execute."""
    if keys_are_user_scoped(view_func) or _is_user_scoped(request.path):
        user_id = conf.get_function("USER_ID_FUNCTION")(request)
        if user_id is not None:
            return sha256_hex(f"{user_id}:{raw_key}")
    return sha256_hex(raw_key)


def stored_response(response: HttpResponse) -> dict[str, Any]:
    """The JSON value published for a 2xx response (text when UTF-8, else base64)."""
    content = response.content
    stored: dict[str, Any] = {
        "status": response.status_code,
        "content_type": response.get("Content-Type", ""),
    }
    try:
        stored["body"] = content.decode("utf-8")
        stored["encoding"] = "text"
    except UnicodeDecodeError:
        stored["body"] = base64.b64encode(content).decode("ascii")
        stored["encoding"] = "base64"
    return stored


def replay_response(stored: dict[str, Any]) -> HttpResponse:
    status = int(stored.get("status") or 200)
    body = stored.get("body") or ""
    content = base64.b64decode(body) if stored.get("encoding") == "base64" else body.encode("utf-8")
    response = HttpResponse(b"" if status in BODILESS_STATUSES else content, status=status)
    content_type = stored.get("content_type")
    if content_type:
        response["Content-Type"] = content_type
    else:
        del response["Content-Type"]
    response[REPLAYED_HEADER] = "true"
    return response


def _buffered(response: HttpResponseBase) -> HttpResponse:
    """Render and buffer a response so it can be stored before the transaction commits."""
    render = getattr(response, "render", None)
    if callable(render):
        response = render()
    if isinstance(response, StreamingHttpResponse):
        # Only sync content reaches here (async views are driven through async_to_sync).
        chunks: Any = response.streaming_content
        buffered = HttpResponse(b"".join(chunks), status=response.status_code)
        for name, value in response.items():
            buffered[name] = value
        response.close()
        return buffered
    assert isinstance(response, HttpResponse)
    return response


class IdempotencyMiddleware(MiddlewareMixin):
    """Claim → run the view → publish its 2xx response, per ``Idempotency-Key``."""

    unit_class = IdempotentUnit

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: Any,
        view_kwargs: Any,
    ) -> HttpResponseBase | None:
        method = (request.method or "").upper()
        if method not in TRACKED_METHODS:
            return None
        if exemption_of(view_func, method) is not None:
            return None
        tenant_id = conf.get_function("TENANT_ID_FUNCTION")(request)
        if tenant_id is None:
            # Anonymous requests are not tracked (their tenant is unknown).
            return None
        raw_key = request.headers.get(HEADER)
        problem = key_problem(raw_key)
        if problem is not None:
            code, detail = problem
            return problem_response(
                request=request,
                status=400,
                code=code,
                title=(
                    "Idempotency-Key header is required for write requests."
                    if code == KEY_REQUIRED
                    else "Idempotency-Key is not a valid key."
                ),
                detail=detail,
            )
        assert raw_key is not None
        # Authorization before any claim or replay (brief §5.10: authorization → idempotency):
        # a stored response only ever goes back to a caller allowed to make the request.
        refusal = conf.get_function("AUTHORIZE_FUNCTION")(
            request, view_func, view_args, view_kwargs
        )
        if refusal is not None:
            return refusal
        try:
            body = request.body
        except RawPostDataException:
            # Something before us consumed a multipart body; it cannot be fingerprinted.
            return problem_response(
                request=request,
                status=400,
                code="Idempotency.BodyUnavailable",
                title="The request body could not be read for its fingerprint.",
            )
        user_id = conf.get_function("USER_ID_FUNCTION")(request)
        scope = IdempotencyScope(
            tenant_id=str(tenant_id),
            operation_key=sha256_hex(f"{method}:{request.path}"),
            caller_key=caller_key_for(request, raw_key, view_func),
            # The acting user is part of the request (as in the MCP adapter): another member
            # sending the same key and body is refused as a reused key, never handed the
            # first member's stored response.
            fingerprint=bound_fingerprint(
                fingerprint_bytes(body), user_id=None if user_id is None else str(user_id)
            ),
        )
        return self._run(scope, request, view_func, view_args, view_kwargs)

    def _run(
        self,
        scope: IdempotencyScope,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: Any,
        view_kwargs: Any,
    ) -> HttpResponseBase:
        produced: list[HttpResponse] = []
        call = async_to_sync(view_func) if iscoroutinefunction(view_func) else view_func

        def work() -> Success | Failure:
            response = _buffered(call(request, *view_args, **view_kwargs))
            produced.append(response)
            if 200 <= response.status_code < 300:
                return Success(stored_response(response))
            return Failure(response)

        outcome = self.unit_class().run(scope, work)
        if isinstance(outcome, Executed):
            if isinstance(outcome.result, Failure):
                failed: HttpResponse = outcome.result.error
                return failed
            return produced[-1]
        if isinstance(outcome, Replayed):
            return replay_response(outcome.result)
        if isinstance(outcome, KeyConflict):
            return problem_response(
                request=request,
                status=422,
                code="Idempotency.KeyReused",
                title="Idempotency-Key was already used with a different request.",
            )
        assert isinstance(outcome, InProgress)
        return problem_response(
            request=request,
            status=409,
            code="Idempotency.InProgress",
            title="A request with this Idempotency-Key is still being processed. Retry shortly.",
            headers={"Retry-After": str(max(1, int(outcome.retry_after)))},
        )
