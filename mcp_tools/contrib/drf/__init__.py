"""DRF views as tools: one action of an ``APIView``/``ViewSet``, run for real, as the caller.

``drf_tool(ProductViewSet, "list", name="shop_products")`` registers one tool. A call builds a
Django request for the view's own route (the tool's arguments become the query string or the
JSON body), marks it with the ``CallContext``'s tenant, actor and row scope, and runs the view
through ``as_view()`` — ``dispatch`` → ``initial`` (authentication, permissions, throttles) →
the handler (``get_queryset``, filter backends, pagination, serializer validation) →
``handle_exception`` → ``finalize_response`` — exactly as a REST request would. Only
authentication is the caller's: the MCP endpoint already authenticated the bearer, so the view's
authenticators are replaced by one that reads the resolved actor (``TenancyAuthentication``);
everything after it is the view's own.

The input schema is what the view accepts (the serializer's writable fields, the filter
backends' and the paginator's query parameters, the route's lookup); the output schema is what
it answers (the serializer's readable fields; a list in its paginated envelope). An error the
view answers becomes a tool error with the code tenancy's problem handler gives it over REST
(``Auth.Forbidden``, ``Validation.Failed`` with ``data.errors``, ``Http.NotFound``,
``Http.RateLimited`` with ``data.retryAfterSeconds``).

A write action is a write tool whose ``idempotencyKey`` claims in the HTTP adapter's key space
of the same route: operation ``METHOD:PATH``, the same caller key, and the fingerprint of the
JSON body the tool sends (its arguments, canonical JSON: sorted keys, no spaces) bound to the
caller. A REST request with that key and body and an MCP call with that key and arguments are
one execution; both adapters store and replay the view's 2xx response.
"""

from __future__ import annotations

import functools
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, Final, Literal
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIRequest
from django.http import Http404, HttpRequest
from pydantic import BaseModel, ConfigDict, Field, create_model

from idempotency import IdempotencyScope, bound_fingerprint, fingerprint_bytes, sha256_hex
from idempotency.fingerprint import canonical_json
from mcp_tools.authoring.registry import (
    IDEMPOTENCY_KEY_FIELD,
    REPLAYED_FIELD,
    TOOL_NAME_RE,
    Registry,
    ToolSpec,
    _check_schema,
    _idempotency_key_field,
    _state_date_format,
    default_registry,
)
from mcp_tools.call.context import CallContext
from mcp_tools.exceptions import ToolError
from tenancy import AUTHENTICATED, Policy

VIEWSET_ACTIONS: Final = {
    "list": "get",
    "retrieve": "get",
    "create": "post",
    "update": "put",
    "partial_update": "patch",
    "destroy": "delete",
}
HTTP_METHODS: Final = ("get", "post", "put", "patch", "delete")
# Actions whose route carries the object's lookup (``/products/{pk}/``).
DETAIL_ACTIONS: Final = frozenset({"retrieve", "update", "partial_update", "destroy"})
VALIDATION_CODE: Final = "Validation.Failed"
# The codes a drf tool may answer with besides the framework's (the reference lists them).
DRF_ERRORS: Final = (
    ("Auth.Forbidden", "The view's permission classes refuse this caller (as over REST)."),
    ("Validation.Failed", "The serializer refused the input; data.errors lists each field."),
    ("Http.NotFound", "No such object in this tenant (or the page does not exist)."),
    ("Http.RateLimited", "The view's throttle refused; retry after data.retryAfterSeconds."),
)
# The exception the view handled, kept on the Django request the tool built for it.
_HANDLED: Final = "mcp_tools_drf_exception"


class _Payload(BaseModel):
    """The view's JSON answer as the tool's structured result (its schema is the tool's)."""

    model_config = ConfigDict(extra="allow")


def drf_tool(
    view_class: type[Any],
    action: str,
    *,
    name: str,
    description: str | None = None,
    title: str | None = None,
    policy: Policy = AUTHENTICATED,
    route: str | None = None,
    destructive: bool | None = None,
    icons: Sequence[Mapping[str, Any]] | None = None,
    serializer_class: type[Any] | None = None,
    query_serializer: type[Any] | None = None,
    output_serializer: type[Any] | None = None,
    registry: Registry | None = None,
) -> ToolSpec:
    """Register one action of a DRF view as the tool ``name``; returns its ``ToolSpec``.

    ``action`` is a ViewSet action (``list``, ``retrieve``, ``create``, ``update``,
    ``partial_update``, ``destroy``) or, for an ``APIView``, the lower-case HTTP method.
    ``route`` names the URL pattern (``"product-list"``); by default the URLconf is searched for
    the pattern serving ``view_class`` and ``action``. ``serializer_class`` stands in for the
    view's ``get_serializer_class()`` when that needs a request to answer (the schema only: the
    call runs the view's own). An ``APIView`` that validates its query string with a serializer
    of its own names it as ``query_serializer`` (its fields become the tool's arguments), and
    one that answers with a serializer it builds in the handler names that as
    ``output_serializer`` (the output schema; default: ``serializer_class``). ``policy`` hides
    the tool from roles as ``@tool``'s does; the view's permission classes still decide every
    call.

    Raises:
        ImproperlyConfigured: the action, the name or the view's schema cannot be served.
    """
    where = f"MCP drf tool {name!r} ({view_class.__module__}.{view_class.__qualname__})"
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise ImproperlyConfigured(f"{where}: the name must match ^[A-Za-z0-9._-]{{1,128}}$")
    view = _DrfView(
        where,
        view_class,
        action,
        route=route,
        serializer_class=serializer_class,
        query_serializer=query_serializer,
        output_serializer=output_serializer,
    )
    spec = view.spec(
        name=name,
        description=description,
        title=title,
        policy=policy,
        destructive=destructive,
        icons=icons,
    )
    (registry or default_registry).add(spec)
    return spec


class _DrfView:
    """One action of one view: its schemas, its route and how a call runs it."""

    def __init__(
        self,
        where: str,
        view_class: type[Any],
        action: str,
        *,
        route: str | None,
        serializer_class: type[Any] | None,
        query_serializer: type[Any] | None = None,
        output_serializer: type[Any] | None = None,
    ) -> None:
        from rest_framework.views import APIView
        from rest_framework.viewsets import ViewSetMixin

        if not (isinstance(view_class, type) and issubclass(view_class, APIView)):
            raise ImproperlyConfigured(f"{where}: the view must be a DRF APIView or ViewSet")
        self.where = where
        self.is_viewset = issubclass(view_class, ViewSetMixin)
        if self.is_viewset:
            method = VIEWSET_ACTIONS.get(action)
            if method is None or not callable(getattr(view_class, action, None)):
                raise ImproperlyConfigured(
                    f"{where}: the ViewSet has no action {action!r} "
                    f"(one of {', '.join(VIEWSET_ACTIONS)})"
                )
        else:
            if action not in HTTP_METHODS or not callable(getattr(view_class, action, None)):
                raise ImproperlyConfigured(
                    f"{where}: an APIView's action is the lower-case HTTP method it handles"
                )
            method = action
        self.view_class = view_class
        self.action = action
        self.method = method
        self.read_only = method == "get"
        self.route = route
        self.detail = action in DETAIL_ACTIONS
        self.view_func = self._view_func()
        probe = self._probe()
        self.serializer_class = serializer_class or self._serializer_class(probe)
        self.query_serializer = query_serializer
        self.output_serializer = output_serializer or self.serializer_class
        self.lookup = self._lookup(probe) if self.detail else None

    # --- registration ----------------------------------------------------------------------

    def _view_func(self) -> Callable[..., Any]:
        from tenancy.authentication import TenancyAuthentication

        def get_authenticators(view: Any) -> list[Any]:
            # The MCP endpoint authenticated the bearer; the view sees the resolved caller.
            return [TenancyAuthentication()]

        def handle_exception(view: Any, exc: Exception) -> Any:
            raw = getattr(getattr(view, "request", None), "_request", None)
            if isinstance(raw, HttpRequest):
                setattr(raw, _HANDLED, exc)
            return super(runner, view).handle_exception(exc)  # type: ignore[misc]

        runner: Any = type(
            self.view_class.__name__,
            (self.view_class,),
            {
                "__module__": self.view_class.__module__,
                "__qualname__": self.view_class.__qualname__,
                "get_authenticators": get_authenticators,
                "handle_exception": handle_exception,
            },
        )
        if self.is_viewset:
            return runner.as_view({self.method: self.action})
        return runner.as_view()

    def _probe(self) -> Any:
        view: Any = self.view_class()
        view.action = self.action if self.is_viewset else None
        view.request = None
        view.format_kwarg = None
        view.args, view.kwargs = (), {}
        return view

    def _serializer_class(self, probe: Any) -> type[Any] | None:
        getter = getattr(probe, "get_serializer_class", None)
        if getter is None:
            return None
        try:
            found: type[Any] | None = getter()
        except Exception as exc:  # it may need a request: the project names the class instead
            raise ImproperlyConfigured(
                f"{self.where}: get_serializer_class() cannot answer without a request "
                f"({type(exc).__name__}); pass drf_tool(..., serializer_class=...)"
            ) from exc
        return found

    def _lookup(self, probe: Any) -> tuple[str, Any]:
        field = getattr(probe, "lookup_field", "pk")
        kwarg = getattr(probe, "lookup_url_kwarg", None) or field
        kind: Any = str
        queryset = getattr(self.view_class, "queryset", None)
        model = getattr(queryset, "model", None) or getattr(
            getattr(self.serializer_class, "Meta", None), "model", None
        )
        if model is not None:
            from django.db import models

            target = model._meta.pk if field == "pk" else model._meta.get_field(field)
            if isinstance(target, models.AutoField | models.BigAutoField | models.IntegerField):
                kind = int
        return kwarg, kind

    def spec(
        self,
        *,
        name: str,
        description: str | None,
        title: str | None,
        policy: Policy,
        destructive: bool | None,
        icons: Sequence[Mapping[str, Any]] | None,
    ) -> ToolSpec:
        from mcp_tools.authoring.icons import check_icons

        text = description or _first_paragraph(self.view_class, self.action)
        if not text:
            raise ImproperlyConfigured(f"{self.where}: a description is required")
        fields, self.query_names, self.body_names = self._input_fields()
        if not self.read_only:
            fields[IDEMPOTENCY_KEY_FIELD] = _idempotency_key_field()
        args_model = create_model(
            "".join(part.capitalize() for part in re.split(r"[._-]+", name)) + "Arguments",
            __config__=ConfigDict(
                extra="forbid", strict=True, validate_by_alias=True, validate_by_name=False
            ),
            **fields,
        )
        input_schema = args_model.model_json_schema(by_alias=True)
        _state_date_format(input_schema)
        _drop_null_defaults(input_schema)
        _check_schema(self.where, input_schema, "inputSchema")
        output_schema = self._output_schema()
        _check_schema(self.where, output_schema, "outputSchema")

        def call(ctx: CallContext, validated: BaseModel) -> Any:
            answer = self.call(ctx, validated)
            # A read's JSON object is its structured result, as the model the spec declares;
            # a write's response goes to its unit (_RouteUnit.published).
            return _Payload.model_validate(answer) if self.read_only else answer

        call.__module__ = self.view_class.__module__
        call.__qualname__ = f"{self.view_class.__qualname__}.{self.action}"
        return ToolSpec(
            name=name,
            fn=call,
            read_only=self.read_only,
            mirrors=(),
            mirrors_no_route="a drf_tool runs the REST view itself",
            description=text,
            title=title,
            policy=policy,
            destructive=(self.method == "delete") if destructive is None else destructive,
            args_model=args_model,
            call_style="model",
            user_model=args_model,
            param_names=(),
            result_kind="model",
            result_model=_Payload,
            input_schema=input_schema,
            output_schema=output_schema,
            parameters=(),
            errors=DRF_ERRORS,
            a2a=False,
            icons=check_icons(self.where, icons),
            write_unit=None if self.read_only else _RouteUnit(self),
        )

    def _input_fields(self) -> tuple[dict[str, Any], tuple[str, ...], tuple[str, ...]]:
        fields: dict[str, Any] = {}
        query: list[str] = []
        body: list[str] = []
        if self.lookup is not None:
            kwarg, kind = self.lookup
            fields[kwarg] = (kind, Field(description=f"The object's {kwarg}."))
        if self.method in ("get", "delete"):
            for parameter in self._query_parameters():
                name = parameter["name"]
                if name in fields:
                    continue
                fields[name] = _parameter_field(parameter)
                query.append(name)
            if self.query_serializer is not None:
                for field_name, field in self.query_serializer().fields.items():
                    if field.read_only or field_name in fields:
                        continue
                    annotation, info = _input_type(field)
                    default = ... if field.required else None
                    fields[field_name] = (annotation, Field(default=default, **info))
                    query.append(field_name)
        if self.method in ("post", "put", "patch") and self.serializer_class is not None:
            partial = self.method == "patch"
            for field_name, field in self.serializer_class().fields.items():
                if field.read_only or _is_hidden(field) or field_name in fields:
                    continue
                annotation, info = _input_type(field)
                required = bool(field.required) and not partial
                fields[field_name] = (
                    annotation,
                    Field(default=... if required else None, **info),
                )
                body.append(field_name)
        return fields, tuple(query), tuple(body)

    def _query_parameters(self) -> list[dict[str, Any]]:
        probe = self._probe()
        parameters: list[dict[str, Any]] = []
        if self.action == "list" or not self.is_viewset:
            for backend in getattr(probe, "filter_backends", ()) or ():
                described = getattr(backend(), "get_schema_operation_parameters", None)
                if described is not None:
                    parameters += described(probe)
            paginator = getattr(probe, "paginator", None)
            if paginator is not None:
                parameters += paginator.get_schema_operation_parameters(probe)
        return parameters

    def _output_schema(self) -> dict[str, Any]:
        item: dict[str, Any] = {}
        if self.output_serializer is not None:
            item = _output_object(self.output_serializer())
        schema: dict[str, Any]
        if self.action == "list" or (not self.is_viewset and self.read_only and self._paged()):
            items = {"type": "array", "items": item}
            paginator = getattr(self._probe(), "paginator", None)
            if paginator is not None:
                schema = _json_schema(paginator.get_paginated_response_schema(items))
            else:
                schema = {
                    "type": "object",
                    "properties": {"results": items},
                    "required": ["results"],
                }
        elif self.method == "delete":
            schema = {"type": "object", "properties": {}}
        else:
            schema = item or {"type": "object"}
        schema = {"type": "object", **{k: v for k, v in schema.items() if k != "type"}}
        if not self.read_only:
            properties = schema.setdefault("properties", {})
            if REPLAYED_FIELD in properties:
                raise ImproperlyConfigured(
                    f"{self.where}: the serializer's field 'replayed' collides with the write "
                    "tool's result field"
                )
            properties[REPLAYED_FIELD] = {
                "type": "boolean",
                "description": "True when this result is a replay of an earlier identical call.",
            }
            schema.setdefault("required", []).append(REPLAYED_FIELD)
        return schema

    def _paged(self) -> bool:
        return getattr(self._probe(), "paginator", None) is not None

    # --- a call ----------------------------------------------------------------------------

    @functools.cached_property
    def route_name(self) -> str:
        """The URL pattern serving this action (the ``route`` given, or found in the URLconf)."""
        if self.route:
            return self.route
        from django.urls import URLPattern, URLResolver, get_resolver

        def walk(patterns: Sequence[Any], namespace: str) -> str | None:
            for pattern in patterns:
                if isinstance(pattern, URLResolver):
                    inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
                    found = walk(pattern.url_patterns, inner)
                    if found:
                        return found
                elif isinstance(pattern, URLPattern) and pattern.name:
                    callback = pattern.callback
                    if getattr(callback, "cls", None) is not self.view_class:
                        continue
                    actions = getattr(callback, "actions", None)
                    if actions is None or actions.get(self.method) == self.action:
                        return namespace + pattern.name
            return None

        found = walk(get_resolver().url_patterns, "")
        if found is None:
            raise ImproperlyConfigured(
                f"{self.where}: no named URL pattern serves this view's {self.action!r}; "
                "route it, or pass drf_tool(..., route='<url name>')"
            )
        return found

    def invocation(
        self, ctx: CallContext, validated: BaseModel
    ) -> tuple[HttpRequest, dict[str, Any]]:
        """The Django request a REST client would have sent, as the caller, and the route's
        keyword arguments."""
        from django.urls import reverse

        values = validated.model_dump(mode="json", by_alias=True, exclude_unset=True)
        values.pop(IDEMPOTENCY_KEY_FIELD, None)
        kwargs: dict[str, Any] = {}
        if self.lookup is not None:
            kwarg = self.lookup[0]
            kwargs[kwarg] = values.pop(kwarg)
        path = reverse(self.route_name, kwargs=kwargs)
        query = {name: _query_value(values[name]) for name in self.query_names if name in values}
        body = b""
        if self.method in ("post", "put", "patch"):
            body = canonical_json({n: values[n] for n in self.body_names if n in values}).encode()
        request = _django_request(self.method.upper(), path, urlencode(query, doseq=True), body)
        # The caller's identity objects, exactly as TenancyMiddleware leaves them on a request.
        request.tenant = ctx.tenant  # type: ignore[attr-defined]
        request.actor = ctx.actor  # type: ignore[attr-defined]
        request.row_scope = ctx.row_scope  # type: ignore[attr-defined]
        request.authentication_failure = None  # type: ignore[attr-defined]
        request.user = ctx.actor.user
        return request, kwargs

    def call(self, ctx: CallContext, validated: BaseModel) -> Any:
        """Worker thread: run the view; its 2xx answer (JSON), or its refusal as a ToolError."""
        request, kwargs = self.invocation(ctx, validated)
        response = self.view_func(request, **kwargs)
        render = getattr(response, "render", None)
        if callable(render):
            response = render()
        if response.status_code >= 400:
            raise refusal(request, response)
        return response if not self.read_only else structured(_json_of(response.content))


def refusal(request: HttpRequest, response: Any) -> Exception:
    """The ``ToolError`` for a view's 4xx answer (a 5xx is not the caller's: re-raised)."""
    from rest_framework import exceptions as drf

    from tenancy.problem_handler import _errors, drf_code_for

    exc = getattr(request, _HANDLED, None)
    status = int(response.status_code)
    if status >= 500:
        return RuntimeError(f"the view answered {status}")
    data: dict[str, Any] = {"status": status}
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    if isinstance(exc, drf.ValidationError):
        data["errors"] = _errors(exc.detail)
        return ToolError(VALIDATION_CODE, "The request is invalid.", data)
    if isinstance(exc, drf.APIException):
        wait = getattr(exc, "wait", None)
        if wait:
            data["retryAfterSeconds"] = max(float(wait), 1.0)
        return ToolError(drf_code_for(exc), str(exc.detail), data)
    body = _json_of(getattr(response, "content", b""))
    code = body.get("code") if isinstance(body, dict) else None
    if not (isinstance(code, str) and "." in code):
        code = "Http.Error"
    return ToolError(code, f"The view answered {status}.", data)


def structured(value: Any) -> dict[str, Any]:
    """A view's JSON answer as a structured result: an object as is, a list as ``results``."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    return {"results": value}


def _json_of(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None


class _RouteUnit:
    """A drf write's idempotent unit: the HTTP adapter's key space of the view's route."""

    def __init__(self, view: _DrfView) -> None:
        self.view = view

    def scope(self, ctx: CallContext, validated: BaseModel) -> IdempotencyScope:
        from idempotency import conf as idempotency_conf
        from idempotency.middleware import caller_key_for

        request, kwargs = self.view.invocation(ctx, validated)
        # Authorization before any claim or replay, as the HTTP adapter does: a stored answer
        # only ever goes back to a caller the view admits now.
        refused = idempotency_conf.get_function("AUTHORIZE_FUNCTION")(
            request, self.view.view_func, (), kwargs
        )
        if refused is not None:
            render = getattr(refused, "render", None)
            raise refusal(request, render() if callable(render) else refused)
        key: str = getattr(validated, IDEMPOTENCY_KEY_FIELD)
        return IdempotencyScope(
            tenant_id=str(ctx.tenant_id),
            operation_key=sha256_hex(f"{request.method}:{request.path}"),
            caller_key=caller_key_for(request, key, self.view.view_func),
            fingerprint=bound_fingerprint(
                fingerprint_bytes(request.body), user_id=str(ctx.user_id)
            ),
        )

    def published(self, value: Any) -> Any:
        from idempotency.middleware import stored_response

        return stored_response(value)

    def structured(self, stored: Any) -> dict[str, Any]:
        body = stored.get("body") if stored.get("encoding") == "text" else None
        return structured(_json_of((body or "").encode()))


def _django_request(method: str, path: str, query: str, body: bytes) -> HttpRequest:
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "SCRIPT_NAME": "",
        "QUERY_STRING": query,
        "SERVER_NAME": _host(),
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_ACCEPT": "application/json",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
    }
    if body:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    return WSGIRequest(environ)


def _host() -> str:
    # Links the view builds (a page's next/previous) need a host ALLOWED_HOSTS accepts.
    for host in settings.ALLOWED_HOSTS:
        if host and "*" not in host and not host.startswith("."):
            return str(host)
    return "localhost"


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return [_query_value(item) for item in value]
    return value


def _first_paragraph(view_class: type[Any], action: str) -> str:
    doc = getattr(getattr(view_class, action, None), "__doc__", None) or view_class.__doc__ or ""
    return doc.strip().split("\n\n")[0].strip()


def _is_hidden(field: Any) -> bool:
    from rest_framework import serializers

    return isinstance(field, serializers.HiddenField)


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    """An optional field that refuses null (DRF: ``allow_null=False``) is simply left out; its
    placeholder default is not a value the client may send."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None and "anyOf" not in prop:
            del prop["default"]


def _parameter_field(parameter: Mapping[str, Any]) -> tuple[Any, Any]:
    schema = parameter.get("schema") or {}
    kind = schema.get("type")
    annotation: Any
    info: dict[str, Any] = {}
    if schema.get("enum"):
        annotation = Literal[tuple(schema["enum"])]
    elif kind == "integer":
        annotation = int
        info["ge"] = schema.get("minimum", 1)
        if "maximum" in schema:
            info["le"] = schema["maximum"]
    elif kind == "number":
        annotation = float
    elif kind == "boolean":
        annotation = bool
    elif kind == "array":
        annotation = list[str]
    else:
        annotation = str
    description = parameter.get("description")
    if description:
        info["description"] = str(description)
    required = bool(parameter.get("required"))
    return annotation, Field(default=... if required else None, **info)


def _input_type(field: Any) -> tuple[Any, dict[str, Any]]:
    """A pydantic annotation and ``Field`` options accepting what ``field`` accepts."""
    from rest_framework import relations, serializers

    inner: Any

    info: dict[str, Any] = {}
    if field.help_text:
        info["description"] = str(field.help_text)
    annotation: Any
    if isinstance(field, serializers.BaseSerializer):
        many = isinstance(field, serializers.ListSerializer)
        inner = field.child if many else field  # type: ignore[attr-defined]
        fields = {}
        for name, child in inner.fields.items():
            if child.read_only or _is_hidden(child):
                continue
            child_type, child_info = _input_type(child)
            fields[name] = (
                child_type,
                Field(default=... if child.required else None, **child_info),
            )
        nested: Any = create_model(  # type: ignore[call-overload]
            type(inner).__name__,
            __config__=ConfigDict(extra="forbid", strict=True),
            **fields,
        )
        annotation = list[nested] if many else nested
    elif isinstance(field, serializers.BooleanField):
        annotation = bool
    elif isinstance(field, serializers.MultipleChoiceField):
        annotation = list[Literal[tuple(field.choices)]]  # type: ignore[misc]
    elif isinstance(field, serializers.ChoiceField):
        annotation = Literal[tuple(field.choices)]
    elif isinstance(field, serializers.IntegerField):
        annotation = int
        _bounds(field, info)
    elif isinstance(field, serializers.FloatField):
        annotation = float
        _bounds(field, info)
    elif isinstance(field, serializers.DecimalField):
        annotation = Decimal
        _bounds(field, info)
        if field.max_digits is not None:
            info["max_digits"] = field.max_digits
        if field.decimal_places is not None:
            info["decimal_places"] = field.decimal_places
    elif isinstance(field, serializers.DateTimeField):
        annotation = datetime
    elif isinstance(field, serializers.DateField):
        annotation = date
    elif isinstance(field, serializers.TimeField):
        annotation = time
    elif isinstance(field, serializers.CharField):
        annotation = str
        if field.max_length is not None:
            info["max_length"] = field.max_length
        if field.min_length is not None:
            info["min_length"] = field.min_length
        if not field.allow_blank:
            info.setdefault("min_length", 1)
            if field.trim_whitespace:
                # DRF strips first: a blank after stripping is refused as blank.
                info["pattern"] = r"\S"
        if isinstance(field, serializers.EmailField):
            info["json_schema_extra"] = {"format": "email"}
    elif isinstance(field, serializers.UUIDField):
        annotation = str
        info["json_schema_extra"] = {"format": "uuid"}
    elif isinstance(field, relations.ManyRelatedField):
        child, _ = _input_type(field.child_relation)
        annotation = list[child]  # type: ignore[valid-type]
    elif isinstance(field, relations.PrimaryKeyRelatedField):
        annotation = int
    elif isinstance(field, relations.RelatedField):
        annotation = str
    elif isinstance(field, serializers.ListField):
        child, _ = _input_type(field.child)
        annotation = list[child]  # type: ignore[valid-type]
        if field.min_length is not None:
            info["min_length"] = field.min_length
        if field.max_length is not None:
            info["max_length"] = field.max_length
    elif isinstance(field, serializers.DictField):
        annotation = dict[str, Any]
    else:
        annotation = Any
    if getattr(field, "allow_null", False):
        annotation = annotation | None
    return annotation, info


def _bounds(field: Any, info: dict[str, Any]) -> None:
    if field.min_value is not None:
        info["ge"] = field.min_value
    if field.max_value is not None:
        info["le"] = field.max_value


def _output_object(serializer: Any) -> dict[str, Any]:
    properties = {
        name: _output_field(field)
        for name, field in serializer.fields.items()
        if not field.write_only
    }
    return {"type": "object", "properties": properties}


def _output_field(field: Any) -> dict[str, Any]:
    """The JSON Schema of what ``field`` renders (lenient where the value is the view's)."""
    from rest_framework import relations, serializers
    from rest_framework.settings import api_settings

    schema: dict[str, Any]
    if isinstance(field, serializers.ListSerializer):
        schema = {"type": "array", "items": _output_object(field.child)}
    elif isinstance(field, serializers.BaseSerializer):
        schema = _output_object(field)
    elif isinstance(field, serializers.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, serializers.IntegerField):
        schema = {"type": "integer"}
    elif isinstance(field, serializers.FloatField):
        schema = {"type": "number"}
    elif isinstance(field, serializers.DecimalField):
        as_string = getattr(field, "coerce_to_string", None)
        if as_string is None:
            as_string = api_settings.COERCE_DECIMAL_TO_STRING
        schema = {"type": "string"} if as_string else {"type": "number"}
    elif isinstance(
        field,
        serializers.CharField
        | serializers.DateField
        | serializers.DateTimeField
        | serializers.TimeField
        | serializers.UUIDField,
    ):
        schema = {"type": "string"}
    elif isinstance(field, relations.ManyRelatedField):
        schema = {"type": "array", "items": _output_field(field.child_relation)}
    elif isinstance(field, relations.PrimaryKeyRelatedField):
        schema = {"type": ["integer", "string"]}
    elif isinstance(field, serializers.ListField):
        schema = {"type": "array"}
    else:
        return {}  # SerializerMethodField, JSONField, ChoiceField…: the view's own values
    if getattr(field, "allow_null", False):
        kind = schema["type"]
        schema["type"] = [*(kind if isinstance(kind, list) else [kind]), "null"]
    return schema


def _json_schema(openapi: Any) -> Any:
    """An OpenAPI 3.0 schema fragment (a paginator's envelope) as JSON Schema 2020-12."""
    if isinstance(openapi, list):
        return [_json_schema(item) for item in openapi]
    if not isinstance(openapi, dict):
        return openapi
    converted = {
        key: _json_schema(value)
        for key, value in openapi.items()
        if key not in ("example", "nullable", "format")
    }
    if openapi.get("nullable") and "type" in converted:
        kind = converted["type"]
        converted["type"] = [*(kind if isinstance(kind, list) else [kind]), "null"]
    return converted


__all__ = ["drf_tool"]
