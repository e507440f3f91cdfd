"""The Django request a drf tool's call builds for the view's own route, the idempotent unit
it claims in (the HTTP adapter's key space of that route) and what the view answers.
"""

from __future__ import annotations

import io
import json
import math
import threading
from typing import TYPE_CHECKING, Any, Final

from django.conf import settings
from django.core.handlers.wsgi import WSGIRequest
from django.http import Http404, HttpRequest
from pydantic import BaseModel, ConfigDict

from idempotency import IdempotencyScope, bound_fingerprint, fingerprint_bytes, sha256_hex
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_FIELD, ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.exceptions import ToolError
from mcp_tools.execution.results import PlainJSON

if TYPE_CHECKING:
    from mcp_tools.contrib.drf.view import _DrfView

VALIDATION_CODE: Final = "Validation.Failed"
_HANDLED: Final = "mcp_tools_drf_exception"


class Payload(BaseModel):
    """A routed operation's JSON answer as the tool's structured result (its schema is the
    tool's ``outputSchema``)."""

    model_config = ConfigDict(extra="allow")


# One call's request, built by a write unit's ``scope`` and run by the same thread's ``call``
# (REST's idempotency middleware too authorizes and runs one request object).
_shared = threading.local()


def share(validated: BaseModel, built: Any) -> None:
    """Hand ``built`` (a call's request and route) to this thread's next ``take(validated)``."""
    _shared.entry = (validated, built)


def take(validated: BaseModel) -> Any:
    """What ``share`` left for these very arguments (the same object), else ``None``."""
    entry = getattr(_shared, "entry", None)
    _shared.entry = None
    if entry is not None and entry[0] is validated:
        return entry[1]
    return None


def plain_json(value: Any) -> bool:
    """Whether ``value`` is already what JSON parsing gives back (dicts with string keys, lists,
    strings, finite numbers, booleans, ``None``): then rendering it to bytes and parsing them
    again would hand back an equal value.

    Every read's answer is walked here, so the exact types a view's data holds are asked
    first (a set lookup, no call for a scalar) and ``isinstance`` only for the rest
    (subclasses: DRF's ``ReturnDict``/``ReturnList``, an ``IntEnum``)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is dict or (kind is not list and isinstance(value, dict)):
        for key, item in value.items():
            if type(key) is not str and not isinstance(key, str):
                return False
            if type(item) not in _SCALARS and not plain_json(item):
                return False
        return True
    if kind is list or isinstance(value, list):
        return all(type(item) in _SCALARS or plain_json(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int)  # bool is an int


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def structured(value: Any) -> dict[str, Any]:
    """A view's JSON answer as a structured result: an object as is, a list as ``results``."""
    if isinstance(value, dict):
        return value
    if value is None:
        return {}
    return {"results": value}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# What parsing gives back is plain JSON but for NaN and Infinity, which this one refuses.
_PLAIN_DECODER: Final = json.JSONDecoder(parse_constant=_no_constant)


def read_answer(content: bytes) -> dict[str, Any]:
    """A rendered read's body as its structured result: checked plain JSON (``PlainJSON``)
    when it parses as UTF-8 JSON without ``NaN``/``Infinity``; else what ``_json_of`` makes
    of it, for the declared model to dump (a NaN as ``null``)."""
    if content:
        try:
            return PlainJSON(structured(_PLAIN_DECODER.decode(content.decode())))
        except ValueError:  # UnicodeDecodeError included
            pass
    return structured(_json_of(content))


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
        share(validated, (request, kwargs))  # the call runs this request (REST runs one too)
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


def caller_request(
    ctx: CallContext, method: str, path: str, query: str, body: bytes
) -> HttpRequest:
    """The Django request for the route, marked with the caller's identity objects exactly as
    ``TenancyMiddleware`` leaves them on a request."""
    request = _django_request(method, path, query, body)
    request.tenant = ctx.tenant  # type: ignore[attr-defined]
    request.actor = ctx.actor  # type: ignore[attr-defined]
    request.row_scope = ctx.row_scope  # type: ignore[attr-defined]
    request.authentication_failure = None  # type: ignore[attr-defined]
    request.user = ctx.actor.user
    return request


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


class RoutedOperation:
    """What ``drf_tool`` and ``ninja_tool`` share: one routed API operation, run as the caller,
    and the spec of its tool — its arguments are one model, its result the operation's JSON, no
    mirror (``runs`` says what it runs instead), not an A2A skill."""

    where: str
    read_only: bool
    # What the tool runs instead of a mirrored route, and the codes it may answer with.
    runs: str
    errors: tuple[tuple[str, str], ...]

    def call(self, ctx: CallContext, validated: BaseModel) -> Any:
        """A read's JSON object, or a write's response (for its unit, ``_RouteUnit``)."""
        raise NotImplementedError

    def _default_description(self) -> str:
        raise NotImplementedError

    def _args_model(self, name: str) -> type[BaseModel]:
        raise NotImplementedError

    def _shape_input(self, schema: dict[str, Any]) -> None:
        """Adjust the arguments' JSON Schema (after the date formats are stated)."""

    def _output_schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def _owner(self) -> tuple[str, str]:
        """Module and qualified name that name the call in traces."""
        raise NotImplementedError

    def _deletes(self) -> bool:
        raise NotImplementedError

    def _write_unit(self) -> Any:
        raise NotImplementedError

    def spec(
        self,
        *,
        name: str,
        description: str | None,
        title: str | None,
        policy: Any,
        destructive: bool | None,
        icons: Any,
    ) -> ToolSpec:
        """The tool's spec; the schemas are checked as ``@tool``'s are."""
        from django.core.exceptions import ImproperlyConfigured

        from mcp_tools.authoring.icons import check_icons
        from mcp_tools.authoring.rules import _check_schema, _state_date_format

        text = description or self._default_description()
        if not text:
            raise ImproperlyConfigured(f"{self.where}: a description is required")
        args_model = self._args_model(name)
        input_schema = args_model.model_json_schema(by_alias=True)
        _state_date_format(input_schema)
        self._shape_input(input_schema)
        _check_schema(self.where, input_schema, "inputSchema")
        output_schema = self._output_schema()
        _check_schema(self.where, output_schema, "outputSchema")
        read_only = self.read_only
        run = self.call

        def call(ctx: CallContext, validated: BaseModel) -> Any:
            answer = run(ctx, validated)
            # A read's JSON object is its structured result, as the model the spec declares
            # (plain JSON its adapter checked is one already); a write's response goes to
            # its unit.
            if not read_only or type(answer) is PlainJSON:
                return answer
            return Payload.model_validate(answer)

        call.__module__, call.__qualname__ = self._owner()
        return ToolSpec(
            name=name,
            fn=call,
            read_only=read_only,
            mirrors=(),
            mirrors_no_route=self.runs,
            description=text,
            title=title,
            policy=policy,
            destructive=self._deletes() if destructive is None else destructive,
            args_model=args_model,
            call_style="model",
            user_model=args_model,
            param_names=(),
            result_kind="model",
            result_model=Payload,
            input_schema=input_schema,
            output_schema=output_schema,
            parameters=(),
            errors=self.errors,
            a2a=False,
            icons=check_icons(self.where, icons),
            write_unit=None if read_only else self._write_unit(),
            plain_results=read_only,
        )

    def register(self, registry: Any, **spec: Any) -> ToolSpec:
        """Add the tool (``spec``: the arguments of :meth:`spec`) to ``registry``, the default
        one when ``None``; its spec."""
        from mcp_tools.authoring.registry import default_registry

        tool = self.spec(**spec)
        (default_registry if registry is None else registry).add(tool)
        return tool
