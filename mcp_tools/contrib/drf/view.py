"""One call of a drf tool: the view's action run through ``as_view()`` as the caller, its answer
a result or a tool error with tenancy's REST problem code.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import urlencode

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from pydantic import BaseModel, ConfigDict, Field, create_model

from idempotency.fingerprint import canonical_json
from mcp_tools.authoring.rules import _idempotency_key_field
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_FIELD, REPLAYED_FIELD
from mcp_tools.call.context import CallContext
from mcp_tools.contrib.drf.requests import (
    _HANDLED,
    RoutedOperation,
    _json_of,
    _query_value,
    _RouteUnit,
    caller_request,
    plain_json,
    refusal,
    structured,
    take,
)
from mcp_tools.contrib.drf.schemas import (
    _drop_null_defaults,
    _first_paragraph,
    _input_type,
    _is_hidden,
    _json_schema,
    _output_object,
    _parameter_field,
)
from mcp_tools.execution.results import PlainJSON

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
# The codes a drf tool may answer with besides the framework's (the reference lists them).
DRF_ERRORS: Final = (
    ("Auth.Forbidden", "The view's permission classes refuse this caller (as over REST)."),
    ("Validation.Failed", "The serializer refused the input; data.errors lists each field."),
    ("Http.NotFound", "No such object in this tenant (or the page does not exist)."),
    ("Http.RateLimited", "The view's throttle refused; retry after data.retryAfterSeconds."),
)


class _DrfView(RoutedOperation):
    """One action of one view: its schemas, its route and how a call runs it."""

    runs = "a drf_tool runs the REST view itself"
    errors = DRF_ERRORS

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
        from rest_framework.renderers import JSONRenderer
        from rest_framework.views import APIView
        from rest_framework.viewsets import ViewSetMixin

        self.json_renderer: type[Any] = JSONRenderer

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
        from rest_framework.negotiation import DefaultContentNegotiation
        from rest_framework.settings import api_settings

        from tenancy.drf_authentication import TenancyAuthentication

        negotiated: list[tuple[type[Any], str]] = []

        def perform_content_negotiation(view: Any, request: Any, force: bool = False) -> Any:
            # Every call's request asks for JSON alike (Accept: application/json, no format
            # suffix, no format parameter unless an argument is one), so DRF's own negotiation
            # picks the same renderer each time: negotiated at the first call, not per call.
            if negotiated:
                renderer_class, media_type = negotiated[0]
                return renderer_class(), media_type
            chosen = super(runner, view).perform_content_negotiation(request, force)  # type: ignore[misc]
            if (
                not force
                and view.format_kwarg is None
                and api_settings.URL_FORMAT_OVERRIDE not in getattr(self, "query_names", ())
                and type(view.get_content_negotiator()) is DefaultContentNegotiation
            ):
                negotiated.append((type(chosen[0]), chosen[1]))
            return chosen

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
                "perform_content_negotiation": perform_content_negotiation,
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

    def _default_description(self) -> str:
        return _first_paragraph(self.view_class, self.action)

    def _args_model(self, name: str) -> type[BaseModel]:
        fields, self.query_names, self.body_names = self._input_fields()
        if not self.read_only:
            fields[IDEMPOTENCY_KEY_FIELD] = _idempotency_key_field()
        arguments: type[BaseModel] = create_model(
            "".join(part.capitalize() for part in re.split(r"[._-]+", name)) + "Arguments",
            __config__=ConfigDict(
                extra="forbid", strict=True, validate_by_alias=True, validate_by_name=False
            ),
            **fields,
        )
        return arguments

    def _shape_input(self, schema: dict[str, Any]) -> None:
        _drop_null_defaults(schema)

    def _owner(self) -> tuple[str, str]:
        return self.view_class.__module__, f"{self.view_class.__qualname__}.{self.action}"

    def _deletes(self) -> bool:
        return self.method == "delete"

    def _write_unit(self) -> Any:
        return _RouteUnit(self)

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

    @functools.cached_property
    def fixed_path(self) -> str | None:
        """The route's path when it has no lookup: reversed once, at the first call (the
        URLconf is complete by then), not per call. A detail route's path carries the object's
        lookup, which ``reverse`` checks against the route's converter: reversed per call."""
        from django.urls import reverse

        return None if self.lookup is not None else reverse(self.route_name)

    def invocation(
        self, ctx: CallContext, validated: BaseModel
    ) -> tuple[HttpRequest, dict[str, Any]]:
        """The Django request a REST client would have sent, as the caller, and the route's
        keyword arguments."""
        values = validated.model_dump(mode="json", by_alias=True, exclude_unset=True)
        values.pop(IDEMPOTENCY_KEY_FIELD, None)
        kwargs: dict[str, Any] = {}
        path = self.fixed_path
        if path is None:
            from django.urls import reverse

            assert self.lookup is not None
            kwarg = self.lookup[0]
            kwargs[kwarg] = values.pop(kwarg)
            path = reverse(self.route_name, kwargs=kwargs)
        query = {name: _query_value(values[name]) for name in self.query_names if name in values}
        body = b""
        if self.method in ("post", "put", "patch"):
            body = canonical_json({n: values[n] for n in self.body_names if n in values}).encode()
        request = caller_request(ctx, self.method.upper(), path, urlencode(query, doseq=True), body)
        return request, kwargs

    def call(self, ctx: CallContext, validated: BaseModel) -> Any:
        """Worker thread: run the view; a read's answer as JSON, a write's response (rendered,
        for its unit to store), or the view's refusal as a ToolError."""
        request, kwargs = take(validated) or self.invocation(ctx, validated)
        response = self.view_func(request, **kwargs)
        if self.read_only and response.status_code < 400:
            data = getattr(response, "data", None)
            # What DRF's own JSONRenderer would write is the data itself when it is plain JSON:
            # taken as is, neither rendered to bytes nor parsed back. Any other renderer (or
            # data it must convert: a Decimal, a datetime) is rendered as over REST.
            renderer = getattr(response, "accepted_renderer", None)
            if type(renderer) is self.json_renderer and plain_json(data):
                return PlainJSON(structured(data))  # checked: the result as is
        render = getattr(response, "render", None)
        if callable(render):
            response = render()
        if response.status_code >= 400:
            raise refusal(request, response)
        return response if not self.read_only else structured(_json_of(response.content))
