"""The registration rules: ``build_spec`` turns a decorated function into a ``ToolSpec``.

Every rule that can be checked without a request is checked at import (decoration) time and
raises ``ImproperlyConfigured``: names, collisions, the ``CallContext`` parameter, banned
parameter types, argument and result types, the mirror declaration, the write tool's injected
``idempotencyKey``. A registered tool is therefore always servable.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import types
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, get_args, get_origin

from django.core.exceptions import ImproperlyConfigured
from mcp.shared.inbound import find_invalid_x_mcp_header, x_mcp_header_map
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PydanticSchemaGenerationError,
    PydanticUserError,
    create_model,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from idempotency import KEY_PATTERN, key_problem, max_key_length
from mcp_tools.authoring.icons import check_icons
from mcp_tools.authoring.spec import (
    ERROR_CODE_RE,
    IDEMPOTENCY_KEY_ALIAS,
    IDEMPOTENCY_KEY_FIELD,
    RATE_PERIOD_RE,
    REPLAYED_FIELD,
    TASK_SUPPORT_VALUES,
    TOOL_NAME_RE,
    ResultKind,
    TaskSupport,
    ToolSpec,
    banned_parameter_type,
)
from mcp_tools.call.context import CallContext
from tenancy import Policy

if TYPE_CHECKING:
    pass


def _fail(where: str, problem: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"MCP tool {where}: {problem}")


def _arguments_config() -> ConfigDict:
    # Wire names are camelCase (as_of_date <-> asOfDate); Python names are never accepted so
    # one spelling means one thing. Unknown arguments are refused.
    # Strict: no coercion; the call path validates the arguments as JSON in strict mode too
    # (``mcp_tools.calls.validate_arguments``), where a date is a "YYYY-MM-DD" string only.
    return ConfigDict(
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )


TENANT_ARGUMENT_NAMES: Final = frozenset({"tenant", "tenant_id", "tenant_code", "tenant_slug"})


def _refuse_tenant_argument(where: str, name: str) -> None:
    """The tenant is who is calling (``ctx.tenant``), never an argument a model could fill in
    with another tenant's id."""
    if name.lower() in TENANT_ARGUMENT_NAMES:
        raise _fail(
            where,
            f"argument {name!r} would let the caller name a tenant; a tool acts in ctx.tenant "
            "(the caller's token decides it): drop the argument",
        )


def _model_name(name: str, suffix: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[._-]+", name) if part) + suffix


def _check_idempotency_key(value: str) -> str:
    # One rule for both adapters (idempotency.keys): the HTTP header is checked by the same
    # function, and the error carries the same code the REST answer does.
    problem = key_problem(value)
    if problem is not None:
        raise PydanticCustomError(problem[0], problem[1])
    return value


def _idempotency_key_field() -> tuple[Any, Any]:
    limit = max_key_length()
    return (
        typing.Annotated[
            str,
            AfterValidator(_check_idempotency_key),
            Field(
                alias=IDEMPOTENCY_KEY_ALIAS,
                description=(
                    "A caller-chosen key for this write (e.g. a UUID): 1 to "
                    f"{limit} visible ASCII characters, no spaces. Retrying with the same "
                    "key and arguments returns the first result instead of writing twice."
                ),
                json_schema_extra={
                    "minLength": 1,
                    "maxLength": limit,
                    "pattern": KEY_PATTERN,
                },
            ),
        ],
        ...,
    )


def _result_kind(where: str, annotation: Any) -> tuple[ResultKind, type[BaseModel] | None]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if annotation is str:
        return "text", None
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        if get_origin(item) is typing.Annotated:
            item = get_args(item)[0]
        union = get_origin(item) in (typing.Union, types.UnionType)
        candidates = get_args(item) if union else (item,)
        if all(
            isinstance(c, type)
            and issubclass(c, BaseModel)
            and c.__module__.startswith("mcp_types")
            for c in candidates
        ):
            return "content", None
    raise _fail(
        where,
        "the return annotation must be a pydantic model (structured result), str (text) or "
        "list[<mcp_types content block>]",
    )


DATE_PATTERN: Final = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def _state_date_format(schema: Any) -> None:
    """Say in the schema what strict validation accepts for a date: a ``YYYY-MM-DD`` string
    (``format: date`` alone is only an annotation to many validators and generators)."""
    if isinstance(schema, dict):
        if schema.get("type") == "string" and schema.get("format") == "date":
            schema.setdefault("pattern", DATE_PATTERN)
        for child in schema.values():
            _state_date_format(child)
    elif isinstance(schema, list):
        for child in schema:
            _state_date_format(child)


# The SHA-256 digests of schemas already found valid JSON Schema 2020-12. An identity
# factory's tool is built again for every request that lists or calls it
# (mcp_tools.authoring.factories), with the same few schemas each time: the metaschema check
# was ~85 % of such a build, and its verdict on the same text never changes. Digests, not the
# text: a factory's schema may hold its caller's data, which is never retained. Bounded:
# emptied when full.
_VALID_SCHEMAS: set[bytes] = set()
_MAX_VALID_SCHEMAS: Final = 256


# Each model's generated JSON Schema, as text, by mode: an identity factory hands the same
# model classes to ``build_spec`` on every request (mcp_tools.query caches its argument
# models), and pydantic generates the schema anew each time it is asked. Weak: a model made
# for one request only goes with it. Each caller gets its own copy (callers edit theirs).
_SCHEMA_TEXTS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, str]] = (
    weakref.WeakKeyDictionary()
)


def _json_schema(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> Any:
    """``model.model_json_schema(by_alias=True, mode=mode)``, generated once per model; the
    arguments' (``validation``) with their dates' format stated (``_state_date_format``)."""
    texts = _SCHEMA_TEXTS.get(model)
    if texts is None:
        texts = _SCHEMA_TEXTS[model] = {}
    text = texts.get(mode)
    if text is None:
        schema = model.model_json_schema(by_alias=True, mode=mode)
        if mode == "validation":
            _state_date_format(schema)
        text = texts[mode] = json.dumps(schema)
    return json.loads(text)


def _check_schema(where: str, schema: dict[str, Any], what: str) -> None:
    if schema.get("type") != "object":
        raise _fail(where, f"{what} must be a JSON Schema object (type: object)")
    try:
        text = json.dumps(schema, separators=(",", ":"))
        digest: bytes | None = hashlib.sha256(text.encode()).digest()
    except (TypeError, ValueError):  # not JSON text: checked every time, never remembered
        digest = None
    if digest is not None and digest in _VALID_SCHEMAS:
        return
    try:
        from jsonschema import Draft202012Validator
    except ImportError:  # pragma: no cover - jsonschema ships with the mcp SDK
        return
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise _fail(where, f"{what} is not valid JSON Schema 2020-12: {exc.message}") from exc
    if digest is not None:
        if len(_VALID_SCHEMAS) >= _MAX_VALID_SCHEMAS:
            _VALID_SCHEMAS.clear()
        _VALID_SCHEMAS.add(digest)


def build_spec(
    fn: Callable[..., Any],
    *,
    name: str,
    read_only: bool,
    mirrors: str | Sequence[str] | None,
    mirrors_no_route: str | None,
    description: str | None,
    title: str | None,
    policy: Policy,
    destructive: bool | None,
    task_support: TaskSupport = "forbidden",
    task_retry: int = 0,
    requires_client_capabilities: Sequence[str] = (),
    errors: Mapping[str, str] | None = None,
    a2a: bool = True,
    icons: Sequence[Mapping[str, Any]] | None = None,
    rate: str | None = None,
    audit_arguments: Sequence[str] | Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
) -> ToolSpec:
    """Check ``fn`` against every registration rule and prepare its schemas.

    Raises:
        ImproperlyConfigured: naming the tool and the rule it breaks.
    """
    where = f"{name!r} ({getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')})"
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise _fail(where, "the name must match ^[A-Za-z0-9._-]{1,128}$")
    if not callable(fn):
        raise _fail(where, "a tool is a function")
    on_loop = inspect.iscoroutinefunction(fn)
    if on_loop and not read_only:
        raise _fail(
            where,
            "an async def tool must be read_only=True: a write runs inside its idempotent "
            "unit's transaction, in a worker thread (make it a plain function)",
        )
    if on_loop and task_support != "forbidden":
        raise _fail(where, "an async def tool cannot run as a task (task workers are threads)")
    if not isinstance(policy, Policy):
        raise _fail(
            where,
            "policy must be a tenancy Policy (e.g. tenancy.AUTHENTICATED or a project policy)",
        )
    routes: tuple[str, ...]
    if isinstance(mirrors, str):
        routes = (mirrors,) if mirrors else ()
    elif mirrors is None:
        routes = ()
    else:
        routes = tuple(mirrors)
    if routes and mirrors_no_route:
        raise _fail(
            where,
            'declare at most one of mirrors="<route name>" or mirrors_no_route="<reason>"',
        )
    if any(not isinstance(r, str) or not r for r in routes):
        raise _fail(where, "mirrors must name routes")
    text = description or inspect.getdoc(fn)
    if not text:
        raise _fail(where, "a description is required (it is the model's only manual)")
    if task_support not in TASK_SUPPORT_VALUES:
        raise _fail(where, f"task_support must be one of {TASK_SUPPORT_VALUES}")
    if isinstance(task_retry, bool) or not isinstance(task_retry, int) or not 0 <= task_retry <= 10:
        raise _fail(where, "task_retry must be a whole number from 0 to 10")
    if task_retry and task_support == "forbidden":
        raise _fail(where, "task_retry needs task_support (only a task is retried)")
    declared = tuple((errors or {}).items())
    for code, when in declared:
        if not isinstance(code, str) or not ERROR_CODE_RE.fullmatch(code):
            raise _fail(where, f"error code {code!r} must be dotted words, e.g. Order.NotFound")
        if not isinstance(when, str) or not when.strip():
            raise _fail(where, f"error code {code!r} needs a description of when it is answered")

    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # a broken annotation is a start-up error, whatever it is
        raise _fail(where, f"annotations cannot be resolved ({exc})") from exc
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise _fail(where, "the first parameter must be `ctx: CallContext`")
    if hints.get(params[0].name) is not CallContext:
        raise _fail(where, "the first parameter must be annotated exactly `CallContext`")
    rest = params[1:]
    for param in rest:
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise _fail(where, f"*{param.name} parameters are not allowed")
        if param.name not in hints:
            raise _fail(where, f"parameter {param.name!r} needs a type annotation")
        banned = banned_parameter_type(hints[param.name])
        if banned is not None:
            raise _fail(
                where,
                f"parameter {param.name!r} takes {banned}; tools get identity only through "
                "CallContext and data only through services and selectors",
            )
        if param.name == IDEMPOTENCY_KEY_FIELD:
            raise _fail(where, "idempotency_key is reserved: the framework injects it")
        _refuse_tenant_argument(where, param.name)

    model_param = None
    if len(rest) == 1:
        annotation = hints[rest[0].name]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model_param = rest[0]
    user_model: type[BaseModel] | None = None
    arg_model_name = _model_name(name, "Arguments")
    if model_param is not None:
        user_model = hints[model_param.name]
        assert user_model is not None
        if user_model.model_config.get("extra") != "forbid":
            raise _fail(where, f'{user_model.__name__} must set model_config extra="forbid"')
        if IDEMPOTENCY_KEY_FIELD in user_model.model_fields:
            raise _fail(where, "idempotency_key is reserved: the framework injects it")
        for field_name in user_model.model_fields:
            _refuse_tenant_argument(where, field_name)
        if read_only:
            args_model = user_model
        else:
            args_model = create_model(  # type: ignore[call-overload]
                arg_model_name,
                __base__=user_model,
                **{IDEMPOTENCY_KEY_FIELD: _idempotency_key_field()},
            )
        call_style: Literal["kwargs", "model"] = "model"
        param_names: tuple[str, ...] = ()
    else:
        fields: dict[str, Any] = {}
        for param in rest:
            if param.kind is not inspect.Parameter.KEYWORD_ONLY:
                raise _fail(
                    where,
                    f"parameter {param.name!r} must be keyword-only (put `*,` after ctx) or be "
                    "the single pydantic model argument",
                )
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (hints[param.name], default)
        if not read_only:
            fields[IDEMPOTENCY_KEY_FIELD] = _idempotency_key_field()
        try:
            args_model = create_model(arg_model_name, __config__=_arguments_config(), **fields)
        except (PydanticSchemaGenerationError, PydanticUserError) as exc:
            raise _fail(where, f"its arguments are not JSON types ({exc.message})") from exc
        call_style = "kwargs"
        param_names = tuple(p.name for p in rest)

    try:
        input_schema = _json_schema(args_model, "validation")
    except (PydanticSchemaGenerationError, PydanticUserError) as exc:
        raise _fail(where, f"its arguments are not JSON types ({exc.message})") from exc
    _check_schema(where, input_schema, "inputSchema")
    header_problem = find_invalid_x_mcp_header(input_schema)
    if header_problem is not None:
        raise _fail(where, f"invalid x-mcp-header annotation: {header_problem}")
    if not read_only and (
        IDEMPOTENCY_KEY_ALIAS not in input_schema.get("properties", {})
        or IDEMPOTENCY_KEY_ALIAS not in input_schema.get("required", [])
    ):
        raise _fail(where, "a write tool must take a required idempotencyKey")

    if "return" not in hints:
        raise _fail(where, "a return annotation is required")
    result_kind, result_model = _result_kind(where, hints["return"])
    output_schema: dict[str, Any] | None = None
    if result_model is not None:
        output_schema = _json_schema(result_model, "serialization")
        _check_schema(where, output_schema, "outputSchema")
        if not read_only:
            properties = output_schema.setdefault("properties", {})
            existing = properties.get(REPLAYED_FIELD)
            if existing is not None and existing.get("type") != "boolean":
                raise _fail(where, "a write tool's result field 'replayed' must be a bool")
            properties[REPLAYED_FIELD] = {
                "type": "boolean",
                "description": "True when this result is a replay of an earlier identical call.",
            }
            required = output_schema.setdefault("required", [])
            if REPLAYED_FIELD not in required:
                required.append(REPLAYED_FIELD)
    elif not read_only:
        raise _fail(where, "a write tool must return a pydantic model (it carries `replayed`)")

    return ToolSpec(
        name=name,
        fn=fn,
        read_only=read_only,
        mirrors=routes,
        mirrors_no_route=mirrors_no_route or None,
        description=text,
        title=title,
        policy=policy,
        destructive=(not read_only) if destructive is None else (destructive and not read_only),
        args_model=args_model,
        call_style=call_style,
        user_model=user_model,
        param_names=param_names,
        result_kind=result_kind,
        result_model=result_model,
        input_schema=input_schema,
        output_schema=output_schema,
        parameters=tuple(params),
        has_param_headers=bool(x_mcp_header_map(input_schema)),
        task_support=task_support,
        task_retry=task_retry,
        required_client_capabilities=_capabilities(where, requires_client_capabilities),
        errors=declared,
        a2a=_flag(where, "a2a", a2a),
        icons=check_icons(f"MCP tool {where}", icons),
        rate=_rate(where, rate),
        audit_arguments=_audit_arguments(
            where, audit_arguments, properties=input_schema.get("properties", {})
        ),
        on_loop=on_loop,
    )


def _rate(where: str, rate: object) -> str | None:
    if rate is None:
        return None
    count, _, period = rate.partition("/") if isinstance(rate, str) else ("", "", "")
    if not count.isdigit() or int(count) < 1 or not RATE_PERIOD_RE.fullmatch(period):
        raise _fail(where, 'rate is "<count>/<period>", e.g. "10/m" (period: s, m, h or d)')
    return str(rate)


def _audit_arguments(
    where: str, value: object, *, properties: Mapping[str, Any]
) -> tuple[str, ...] | Callable[[Mapping[str, Any]], Mapping[str, Any]] | None:
    if value is None or callable(value):
        return value
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise _fail(where, "audit_arguments is a list of argument names or a callable")
    # Stored by the names the client sends (the schema's, camelCase).
    wire = tuple(name if name in properties else to_camel(str(name)) for name in value)
    unknown = sorted(
        str(name) for name, sent in zip(value, wire, strict=True) if sent not in properties
    )
    if unknown:
        raise _fail(where, f"audit_arguments names no argument of the tool: {', '.join(unknown)}")
    return wire


def _flag(where: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, f"{name} must be True or False")
    return value


def _capabilities(where: str, names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
        raise _fail(where, 'requires_client_capabilities is a list of names, e.g. ["sampling"]')
    return tuple(sorted(set(names)))
