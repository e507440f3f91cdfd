"""One ``NinjaAPI`` operation as a tool, run through Ninja's own machinery as the caller.

A call builds the Django request a REST client would have sent to the operation's route (path
parameters in the path, query parameters in the query string, the body as canonical JSON),
marks it with the ``CallContext``'s tenant, actor and row scope exactly as ``TenancyMiddleware``
leaves them, and calls the view the URLconf routes there: Ninja's path view → the operation's
authentication and throttles → parameter validation → the function (its pagination and filters)
→ the response schema → the API's exception handlers. Nothing is replaced: the operation's auth
reads the actor the MCP endpoint resolved (``TenancyAuth`` does), as it reads it over REST.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlencode

from asgiref.sync import async_to_sync, iscoroutinefunction
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from pydantic import BaseModel, ConfigDict, create_model

from idempotency import IdempotencyScope, bound_fingerprint, fingerprint_bytes, sha256_hex
from idempotency.fingerprint import canonical_json
from mcp_tools.authoring.registry import Registry
from mcp_tools.authoring.rules import _idempotency_key_field
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_FIELD, REPLAYED_FIELD, TOOL_NAME_RE, ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.contrib.drf.requests import (
    RoutedOperation,
    _json_of,
    _query_value,
    caller_request,
    read_answer,
    share,
    take,
)
from mcp_tools.contrib.drf.requests import _RouteUnit as DrfRouteUnit
from mcp_tools.exceptions import ToolError
from tenancy import AUTHENTICATED, Policy

VALIDATION_CODE: Final = "Validation.Failed"
# The codes a ninja tool may answer with besides the framework's: drf_tool's for the same cases.
NINJA_ERRORS: Final = (
    ("Auth.Forbidden", "The operation's auth refuses this caller (Ninja's 401/403)."),
    ("Validation.Failed", "Ninja refused the input (422); data.errors lists each field."),
    ("Http.NotFound", "No such object in this tenant (Ninja's 404)."),
    ("Http.RateLimited", "The operation's throttle refused; retry after data.retryAfterSeconds."),
)
WRITE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Where Ninja reads each parameter model from; only these can be a tool's JSON arguments.
SOURCES: Final = ("path", "query", "body")


def ninja_tool(
    api: Any,
    operation: str,
    *,
    name: str,
    method: str | None = None,
    description: str | None = None,
    title: str | None = None,
    policy: Policy = AUTHENTICATED,
    destructive: bool | None = None,
    icons: Sequence[Mapping[str, Any]] | None = None,
    registry: Registry | None = None,
) -> ToolSpec:
    """Register one operation of ``api`` (a ``NinjaAPI``) as the tool ``name``.

    ``operation`` is the operation's OpenAPI ``operationId`` (``operation_id=`` or Ninja's
    default, ``<module>_<function>`` with dots as underscores), or its path as the API serves
    it (``"/products/{product_id}"``, the router's prefix included) with ``method``.
    ``policy`` hides the tool from roles as ``@tool``'s does; the operation's auth still
    decides every call.

    Raises:
        ImproperlyConfigured: no such operation, or one whose input cannot be JSON arguments.
    """
    where = f"MCP ninja tool {name!r} ({operation!r})"
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise ImproperlyConfigured(f"{where}: the name must match ^[A-Za-z0-9._-]{{1,128}}$")
    return _NinjaOperation(where, api, operation, method).register(
        registry,
        name=name,
        description=description,
        title=title,
        policy=policy,
        destructive=destructive,
        icons=icons,
    )


class _NinjaOperation(RoutedOperation):
    """One bound operation: its schemas, its route and how a call runs it."""

    runs = "a ninja_tool runs the Ninja operation itself"
    errors = NINJA_ERRORS

    def __init__(self, where: str, api: Any, wanted: str, method: str | None) -> None:
        from ninja import NinjaAPI

        if not isinstance(api, NinjaAPI):
            raise ImproperlyConfigured(f"{where}: the api must be a ninja.NinjaAPI")
        self.where = where
        self.api = api
        self.operation, self.url_name, self.path = self._find(api, wanted, method)
        # An operation serving several methods is one tool per method (method=).
        self.method = (method or self.operation.methods[0]).upper()
        self.read_only = self.method not in WRITE_METHODS

    # --- registration ----------------------------------------------------------------------

    def _find(self, api: Any, wanted: str, method: str | None) -> tuple[Any, str, str]:
        candidates: list[str] = []
        for bound in api._get_bound_routers():
            for path, path_view in bound.path_operations.items():
                full = "/" + "/".join(
                    part.strip("/") for part in (bound.prefix, path) if part.strip("/")
                )
                for op in path_view.operations:
                    op_id = op.operation_id or api.get_openapi_operation_id(op)
                    candidates.append(op_id)
                    by_path = wanted.startswith("/") and wanted.rstrip("/") == full.rstrip("/")
                    if by_path and method is None:
                        raise ImproperlyConfigured(
                            f"{self.where}: name the operation by path and method (method=)"
                        )
                    if not by_path and op_id != wanted:
                        continue
                    if method is not None and method.upper() not in map(str.upper, op.methods):
                        continue
                    url_name = getattr(op, "url_name", None) or api.get_operation_url_name(
                        op, router=bound.template
                    )
                    if bound.url_name_prefix and not getattr(op, "url_name", None):
                        url_name = f"{bound.url_name_prefix}_{url_name}"
                    return op, url_name, full
        raise ImproperlyConfigured(
            f"{self.where}: the api has no such operation (operationIds: "
            f"{', '.join(sorted(candidates)) or 'none'})"
        )

    def _default_description(self) -> str:
        return _first_paragraph(self.operation.description or self.operation.summary or "")

    def _owner(self) -> tuple[str, str]:
        function = self.operation.view_func
        return function.__module__, function.__qualname__

    def _deletes(self) -> bool:
        return self.method == "DELETE"

    def _write_unit(self) -> Any:
        return _RouteUnit(self)

    def _args_model(self, name: str) -> type[BaseModel]:
        """The operation's parameters as one closed model of flat fields: the path's, the
        query's as Ninja flattens them (a ``FilterSchema``'s, a paginator's ``page`` and
        ``page_size``) and the body schema's, each with its own ``FieldInfo`` (type, bounds,
        pattern, alias) — so the arguments refuse what Ninja's fields refuse. A validator in
        code runs in Ninja alone: its refusal is ``Validation.Failed``."""
        fields: dict[str, Any] = {}
        self.path_names: tuple[str, ...] = ()
        self.query_names: tuple[str, ...] = ()
        for model in self.operation.models:
            source = getattr(model, "__ninja_param_source__", None)
            if source not in SOURCES:
                raise ImproperlyConfigured(
                    f"{self.where}: a {source} parameter cannot come from JSON arguments"
                )
            leaves = _leaves(self._body(model) if source == "body" else model)
            for leaf, info in leaves.items():
                if leaf in fields:
                    raise ImproperlyConfigured(f"{self.where}: two parameters named {leaf!r}")
                fields[leaf] = (info.annotation, info)
            if source == "path":
                self.path_names += tuple(leaves)
            elif source == "query":
                self.query_names += tuple(leaves)
        if not self.read_only:
            fields[IDEMPOTENCY_KEY_FIELD] = _idempotency_key_field()
        arguments: type[BaseModel] = create_model(
            "".join(part.capitalize() for part in re.split(r"[._-]+", name)) + "Arguments",
            __config__=ConfigDict(extra="forbid", validate_by_alias=True, validate_by_name=False),
            __module__=__name__,
            **fields,
        )
        return arguments

    def _body(self, model: type[BaseModel]) -> type[BaseModel]:
        attr = getattr(model, "__read_from_single_attr__", None)
        if attr is None:
            # Several body parameters: each is a field of the JSON body, by its own name.
            return model
        annotation = model.model_fields[attr].annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            raise ImproperlyConfigured(f"{self.where}: the body must be a Schema")
        return annotation

    def _output_schema(self) -> dict[str, Any]:
        models = self.operation.response_models
        status = min((code for code in models if isinstance(code, int) and code < 300), default=0)
        model = models.get(status)
        schema: dict[str, Any] = {"type": "object"}
        if isinstance(model, type) and issubclass(model, BaseModel):
            whole = model.model_json_schema(mode="serialization")
            defs = whole.get("$defs", {})
            answer = whole["properties"]["response"]
            ref = answer.get("$ref", "")
            if ref.startswith("#/$defs/") and len(answer) == 1:
                answer = dict(defs[ref.removeprefix("#/$defs/")])
            if answer.get("type") == "array":
                answer = {
                    "type": "object",
                    "properties": {"results": answer},
                    "required": ["results"],
                }
            if answer.get("type") == "object":
                schema = {**answer, **({"$defs": defs} if defs else {})}
                schema.pop("title", None)
        if not self.read_only:
            properties = schema.setdefault("properties", {})
            if REPLAYED_FIELD in properties:
                raise ImproperlyConfigured(
                    f"{self.where}: the response's field 'replayed' collides with the write "
                    "tool's result field"
                )
            properties[REPLAYED_FIELD] = {
                "type": "boolean",
                "description": "True when this result is a replay of an earlier identical call.",
            }
            schema["required"] = [*schema.get("required", []), REPLAYED_FIELD]
        return schema

    # --- a call ----------------------------------------------------------------------------

    @functools.cached_property
    def route_name(self) -> str:
        return f"{self.api.urls_namespace}:{self.url_name}"

    @functools.cached_property
    def fixed_route(self) -> tuple[str, Callable[..., Any], dict[str, Any]] | None:
        """The path, the view and the keyword arguments of an operation without path
        parameters: reversed and resolved once, at the first call (the URLconf is complete by
        then), not per call. One with path parameters is routed per call, as a request is."""
        if self.path_names:
            return None
        from django.urls import resolve, reverse

        path = reverse(self.route_name)
        match = resolve(path)
        return path, match.func, dict(match.kwargs)

    def invocation(
        self, ctx: CallContext, validated: BaseModel
    ) -> tuple[HttpRequest, Callable[..., Any], dict[str, Any]]:
        """The Django request a REST client would have sent, as the caller; the view the
        URLconf routes it to and the route's keyword arguments."""
        values = validated.model_dump(mode="json", by_alias=True, exclude_unset=True)
        values.pop(IDEMPOTENCY_KEY_FIELD, None)
        values.pop(_alias(validated, IDEMPOTENCY_KEY_FIELD), None)
        fixed = self.fixed_route
        if fixed is None:
            from django.urls import reverse

            path = reverse(
                self.route_name,
                kwargs={n: values.pop(n) for n in self.path_names if n in values},
            )
        else:
            path = fixed[0]
        query = {n: _query_value(values.pop(n)) for n in self.query_names if n in values}
        body = b""
        if self.method in ("POST", "PUT", "PATCH"):
            body = canonical_json(values).encode()
        request = caller_request(ctx, self.method, path, urlencode(query, doseq=True), body)
        if fixed is not None:
            return request, fixed[1], dict(fixed[2])
        from django.urls import resolve

        match = resolve(path)
        return request, match.func, dict(match.kwargs)

    def authenticate(self, request: HttpRequest) -> None:
        """The operation's own auth, alone (before a write's claim, as the HTTP adapter
        authorizes before its own): its refusal as the ``ToolError`` a call would give."""
        if self.operation.auth_callbacks:
            refused = self.operation._run_authentication(request)
            if refused is not None:
                raise refusal(refused)

    def call(self, ctx: CallContext, validated: BaseModel) -> Any:
        """Worker thread: run the operation; its 2xx answer, or its refusal as a ToolError."""
        request, view, kwargs = take(validated) or self.invocation(ctx, validated)
        if iscoroutinefunction(view):
            response = async_to_sync(view)(request, **kwargs)
        else:
            response = view(request, **kwargs)
        if response.status_code >= 400:
            raise refusal(response)
        return response if not self.read_only else read_answer(response.content)


def refusal(response: Any) -> Exception:
    """The ``ToolError`` for Ninja's 4xx answer (a 5xx is not the caller's: re-raised)."""
    status = int(response.status_code)
    if status >= 500:
        return RuntimeError(f"the operation answered {status}")
    data: dict[str, Any] = {"status": status}
    body = _json_of(getattr(response, "content", b""))
    detail = body.get("detail") if isinstance(body, dict) else None
    message = detail if isinstance(detail, str) else f"The operation answered {status}."
    if status == 422 and isinstance(detail, list):
        data["errors"] = [_field_error(item) for item in detail if isinstance(item, dict)]
        return ToolError(VALIDATION_CODE, "The request is invalid.", data)
    if status in (401, 403):
        return ToolError("Auth.Forbidden", message, data)
    if status == 404:
        return ToolError("Http.NotFound", message, data)
    if status == 429:
        retry = response.get("Retry-After")
        data["retryAfterSeconds"] = max(float(retry), 1.0) if retry else 1.0
        return ToolError("Http.RateLimited", message, data)
    code = body.get("code") if isinstance(body, dict) else None
    if not (isinstance(code, str) and "." in code):
        code = "Http.Error"
    return ToolError(code, message, data)


def _field_error(item: Mapping[str, Any]) -> dict[str, str]:
    # Ninja's loc is (source, parameter, field…): the tool's arguments are the fields.
    loc = [str(part) for part in item.get("loc", ()) if not isinstance(part, int)]
    field = loc[-1] if len(loc) > 1 else "(body)"
    return {
        "field": field,
        "code": str(item.get("type", "invalid")),
        "message": str(item.get("msg", "")),
    }


class _RouteUnit(DrfRouteUnit):
    """A ninja write's idempotent unit: the HTTP adapter's key space of the operation's route,
    so a REST request and an MCP call with one key and body are one execution (the stored
    answer is drf_tool's, so only the claim differs)."""

    def __init__(self, operation: _NinjaOperation) -> None:
        self.operation = operation

    def scope(self, ctx: CallContext, validated: BaseModel) -> IdempotencyScope:
        from idempotency.middleware import caller_key_for

        built = self.operation.invocation(ctx, validated)
        share(validated, built)  # the call runs this request (REST runs one too)
        request, view, _ = built
        # A stored answer only ever goes back to a caller the operation admits now.
        self.operation.authenticate(request)
        key: str = getattr(validated, IDEMPOTENCY_KEY_FIELD)
        return IdempotencyScope(
            tenant_id=str(ctx.tenant_id),
            operation_key=sha256_hex(f"{request.method}:{request.path}"),
            caller_key=caller_key_for(request, key, view),
            fingerprint=bound_fingerprint(
                fingerprint_bytes(request.body), user_id=str(ctx.user_id)
            ),
        )


def _leaves(model: type[BaseModel]) -> dict[str, Any]:
    """The flat parameters Ninja reads into ``model`` (a ``Query`` schema's fields are flat
    query parameters: ``__ninja_flatten_map__``), each with its own ``FieldInfo``."""
    flatten: Mapping[str, tuple[str, ...]] | None = getattr(model, "__ninja_flatten_map__", None)
    if not flatten:
        flatten = {name: (name,) for name in model.model_fields}
    leaves: dict[str, Any] = {}
    for flat, path in flatten.items():
        owner: Any = model
        info: Any = None
        for step in path:
            info = owner.model_fields[step]
            owner = info.annotation
        leaves[flat] = info
    return leaves


def _alias(validated: BaseModel, field: str) -> str:
    info = type(validated).model_fields.get(field)
    return (info.alias if info is not None else None) or field


def _first_paragraph(text: str) -> str:
    return text.strip().split("\n\n")[0].strip()
