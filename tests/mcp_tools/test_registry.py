# mypy: disable-error-code="empty-body,call-arg,no-untyped-def"
"""Registration rules (start-up errors) and the walks over every registered tool (6, 7, 13, 21)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.http import HttpRequest
from pydantic import BaseModel, ConfigDict

from mcp_tools import CallContext
from mcp_tools.authoring.registry import Registry, default_registry
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_ALIAS, banned_parameter_type
from tenancy import ActorContext, RowScope, TenantContext
from tests.mutations import Edit, mutation


class Out(BaseModel):
    value: int


def test_bare_decorator_is_a_type_error():
    registry = Registry()
    with pytest.raises(TypeError):

        @registry.tool
        def bare(ctx: CallContext) -> Out: ...


@pytest.mark.parametrize("name", ["", "has space", "a" * 129, "ünïcode", "slash/name"])
def test_bad_names_are_refused(name):
    with pytest.raises(ImproperlyConfigured, match="must match"):

        @Registry().tool(description="d", name=name, read_only=True, mirrors_no_route="test")
        def fn(ctx: CallContext) -> Out: ...


@mutation(
    "mcp_tools/authoring/registry.py",
    find="        if existing is not None and existing.qualname != spec.qualname:",
    replace="        if False:",
)
def test_duplicate_names_are_a_start_up_error():
    """Mutation: make ``Registry.add`` overwrite silently → red."""
    registry = Registry()

    @registry.tool(description="d", name="dup", read_only=True, mirrors_no_route="test")
    def first(ctx: CallContext) -> Out: ...

    with pytest.raises(ImproperlyConfigured, match="registered twice"):

        @registry.tool(description="d", name="dup", read_only=True, mirrors_no_route="test")
        def second(ctx: CallContext) -> Out: ...


def test_a_tool_declares_at_most_one_mirror_declaration():
    """Mirrors are optional (a project without REST declares none), but not both kinds."""
    with pytest.raises(ImproperlyConfigured, match="at most one of mirrors"):

        @Registry().tool(
            description="d", name="m", read_only=True, mirrors="me", mirrors_no_route="both"
        )
        def fn(ctx: CallContext) -> Out: ...

    for kwargs in ({}, {"mirrors": ""}, {"mirrors_no_route": ""}):
        registry = Registry()
        registry.tool(description="d", name="m", read_only=True, **kwargs)(_plain)  # type: ignore[arg-type]
        assert registry.specs()[0].mirrors == ()


def _plain(ctx: CallContext) -> Out: ...


def test_the_first_parameter_must_be_the_call_context():
    with pytest.raises(ImproperlyConfigured, match="CallContext"):

        @Registry().tool(description="d", name="noctx", read_only=True, mirrors_no_route="t")
        def fn(*, value: int) -> Out: ...

    with pytest.raises(ImproperlyConfigured, match="CallContext"):

        @Registry().tool(description="d", name="wrongctx", read_only=True, mirrors_no_route="t")
        def fn2(ctx: dict) -> Out: ...


BANNED = [
    HttpRequest,
    TenantContext,
    ActorContext,
    RowScope,
    type(connection),
    CursorWrapper,
    typing.Optional[TenantContext],  # noqa: UP045 - the Optional spelling is the point
    TenantContext | None,
    typing.Annotated[ActorContext, "x"],
    list[RowScope],
    Callable[[], Any],
    type(__import__("django.db").db.connections),
    type(__import__("django.apps").apps.apps),
]


@mutation(
    "mcp_tools/authoring/spec.py",
    find="    from django.apps.registry import Apps\n",
    replace="    return ()\n    from django.apps.registry import Apps\n",
)
@pytest.mark.parametrize("annotation", BANNED, ids=repr)
def test_banned_parameter_types_are_refused(annotation):
    """Guard 7's rule at registration. Mutation: empty ``_banned_types`` → red."""
    assert banned_parameter_type(annotation) is not None

    def fn(ctx: CallContext, *, sneaky: Any) -> Out: ...

    fn.__annotations__["sneaky"] = annotation
    with pytest.raises(ImproperlyConfigured, match="sneaky"):
        Registry().tool(description="d", name="sneaky", read_only=True, mirrors_no_route="t")(fn)


def test_parameters_must_be_keyword_only_and_annotated():
    with pytest.raises(ImproperlyConfigured, match="keyword-only"):

        @Registry().tool(description="d", name="pos", read_only=True, mirrors_no_route="t")
        def fn(ctx: CallContext, value: int, other: int) -> Out: ...

    with pytest.raises(ImproperlyConfigured, match="annotation"):

        @Registry().tool(description="d", name="unann", read_only=True, mirrors_no_route="t")
        def fn2(ctx: CallContext, *, value) -> Out: ...


def test_write_tools_get_a_required_idempotency_key_and_reads_do_not():
    registry = Registry()

    @registry.tool(description="d", name="w", mirrors_no_route="t")
    def write(ctx: CallContext, *, as_of_date: str) -> Out: ...

    @registry.tool(description="d", name="r", read_only=True, mirrors_no_route="t")
    def read(ctx: CallContext, *, as_of_date: str) -> Out: ...

    w, r = registry.specs()[1], registry.specs()[0]
    assert w.input_schema["required"] == ["asOfDate", IDEMPOTENCY_KEY_ALIAS]
    key = w.input_schema["properties"][IDEMPOTENCY_KEY_ALIAS]
    assert (key["type"], key["minLength"], key["maxLength"]) == ("string", 1, 255)
    assert IDEMPOTENCY_KEY_ALIAS not in r.input_schema["properties"]
    assert w.input_schema["additionalProperties"] is False
    assert w.output_schema is not None and "replayed" in w.output_schema["required"]
    assert w.wire_definition()["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert r.wire_definition()["annotations"]["readOnlyHint"] is True
    assert r.wire_definition()["annotations"]["destructiveHint"] is False


def test_idempotency_key_is_reserved():
    with pytest.raises(ImproperlyConfigured, match="reserved"):

        @Registry().tool(description="d", name="k", mirrors_no_route="t")
        def fn(ctx: CallContext, *, idempotency_key: str) -> Out: ...


class Loose(BaseModel):
    a: int


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


def test_a_model_argument_must_refuse_unknown_fields():
    with pytest.raises(ImproperlyConfigured, match="forbid"):

        @Registry().tool(description="d", name="loose", read_only=True, mirrors_no_route="t")
        def fn(ctx: CallContext, args: Loose) -> Out: ...

    registry = Registry()

    @registry.tool(description="d", name="strict", mirrors_no_route="t")
    def fn2(ctx: CallContext, args: Strict) -> Out: ...

    (spec,) = registry.specs()
    assert spec.input_schema["required"] == ["a", IDEMPOTENCY_KEY_ALIAS]


def test_return_types_are_required_and_writes_need_a_model():
    with pytest.raises(ImproperlyConfigured, match="return annotation"):

        @Registry().tool(description="d", name="noret", read_only=True, mirrors_no_route="t")
        def fn(ctx: CallContext): ...

    with pytest.raises(ImproperlyConfigured, match="write tool must return"):

        @Registry().tool(description="d", name="wtext", mirrors_no_route="t")
        def fn2(ctx: CallContext) -> str: ...


def test_an_async_read_tool_runs_on_the_loop_and_other_async_tools_are_refused():
    registry = Registry()

    @registry.tool(name="a", read_only=True, mirrors_no_route="t", description="d")
    async def fn(ctx: CallContext, *, n: int) -> Out: ...

    (spec,) = registry.specs()
    assert spec.on_loop is True
    assert spec.input_schema["required"] == ["n"]
    assert spec.output_schema is not None  # the awaited value's model, not a coroutine's
    with pytest.raises(ImproperlyConfigured, match="async def tool must be read_only"):

        @Registry().tool(name="w", mirrors_no_route="t", description="d")
        async def write(ctx: CallContext) -> Out: ...

    with pytest.raises(ImproperlyConfigured, match="cannot run as a task"):

        @Registry().tool(
            name="t", read_only=True, mirrors_no_route="t", description="d", task_support="optional"
        )
        async def task(ctx: CallContext) -> Out: ...


def test_missing_descriptions_are_refused():
    with pytest.raises(ImproperlyConfigured, match="description"):

        @Registry().tool(name="nodesc", read_only=True, mirrors_no_route="t")
        def fn2(ctx: CallContext) -> Out:
            pass


# --- walks over every registered tool (the real registry, test tools included) ----------------

ALL_TOOLS = default_registry.specs()


def test_the_walk_covers_real_tools():
    assert len(ALL_TOOLS) >= 5


@mutation(
    "mcp_tools/authoring/registry.py",
    find="        self._tools[spec.name] = spec\n",
    replace=(
        '        self._tools[spec.name] = __import__("dataclasses").replace(spec, fn=lambda *, x: '
        "x)\n"
    ),
)
@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda s: s.name)
def test_every_tool_takes_the_call_context_first(spec):
    """Guard 6. Mutation: register a tool whose first parameter is not ``CallContext`` by
    appending a ``ToolSpec`` with ``dataclasses.replace(spec, fn=lambda *, x: x)`` to the
    registry → red (registration itself refuses it, so the walk re-checks the live callable)."""
    params = list(inspect.signature(spec.fn).parameters.values())
    assert params and typing.get_type_hints(spec.fn)[params[0].name] is CallContext


@mutation(
    Edit(
        "mcp_tools/authoring/registry.py",
        find="        self._tools[spec.name] = spec\n",
        replace=(
            "        self._tools[spec.name] = "
            '__import__("dataclasses").replace(spec, fn=_takes_request)\n'
        ),
    ),
    Edit(
        "mcp_tools/authoring/registry.py",
        find="default_registry = Registry()\n",
        replace=(
            "from django.http import HttpRequest  # noqa: E402\n\n\n"
            "def _takes_request(ctx: CallContext, *, request: HttpRequest) -> None:\n"
            "    return None\n\n\n"
            "default_registry = Registry()\n"
        ),
    ),
)
@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda s: s.name)
def test_no_tool_takes_ambient_identity_a_db_handle_or_a_locator(spec):
    """Guard 7. Mutation: register a ``ToolSpec`` whose fn takes ``request: HttpRequest``
    (bypassing ``build_spec``) → red."""
    hints = typing.get_type_hints(spec.fn, include_extras=True)
    for param in list(inspect.signature(spec.fn).parameters.values())[1:]:
        assert banned_parameter_type(hints[param.name]) is None, param.name


@mutation(
    "mcp_tools/authoring/registry.py",
    find="        self._tools[spec.name] = spec\n",
    replace=(
        '        self._tools[spec.name] = __import__("dataclasses").replace(spec, mirrors=(), '
        "mirrors_no_route=None)\n"
    ),
)
@pytest.mark.parametrize("spec", ALL_TOOLS, ids=lambda s: s.name)
def test_every_tool_declares_a_mirror_or_a_reason(spec):
    """Guard 13. Mutation: ``dataclasses.replace(spec, mirrors=(), mirrors_no_route=None)`` in
    the registry → red."""
    assert bool(spec.mirrors) != bool(spec.mirrors_no_route)


@mutation(
    Edit(
        "mcp_tools/authoring/rules.py",
        find=(
            "            args_model = create_model(  # type: ignore[call-overload]\n"
            "                arg_model_name,\n"
            "                __base__=user_model,\n"
            "                **{IDEMPOTENCY_KEY_FIELD: _idempotency_key_field()},\n"
            "            )\n"
        ),
        replace="            args_model = user_model\n",
    ),
    Edit(
        "mcp_tools/authoring/rules.py",
        find=(
            "        if not read_only:\n"
            "            fields[IDEMPOTENCY_KEY_FIELD] = _idempotency_key_field()\n"
        ),
        replace="",
    ),
    Edit(
        "mcp_tools/authoring/rules.py",
        find="    if not read_only and (\n        IDEMPOTENCY_KEY_ALIAS not in",
        replace="    if False and (\n        IDEMPOTENCY_KEY_ALIAS not in",
    ),
)
@pytest.mark.parametrize("spec", [s for s in ALL_TOOLS if not s.read_only], ids=lambda s: s.name)
def test_every_write_tool_takes_a_required_idempotency_key(spec):
    """Guard 21 (keyed on read_only being false). Mutation: skip the injection in
    ``build_spec`` (and its self-check) → red."""
    schema = spec.input_schema
    assert IDEMPOTENCY_KEY_ALIAS in schema["required"]
    assert schema["properties"][IDEMPOTENCY_KEY_ALIAS]["type"] == "string"
    assert spec.args_model.model_fields["idempotency_key"].is_required()


@pytest.mark.parametrize(
    "errors",
    [{"NotDotted": "when"}, {"Flock.Not Found": "when"}, {"Flock.NotFound": " "}],
    ids=["not dotted", "space", "no description"],
)
def test_a_declared_error_code_is_dotted_words_with_a_description(errors):
    with pytest.raises(ImproperlyConfigured, match="error code"):

        @Registry().tool(
            description="d", name="e", read_only=True, mirrors_no_route="t", errors=errors
        )
        def fn(ctx: CallContext) -> Out: ...


@mutation(
    "mcp_tools/authoring/spec.py",
    find="framework = FRAMEWORK_ERRORS + (() if self.read_only else WRITE_ERRORS)",
    replace="framework = FRAMEWORK_ERRORS",
)
def test_the_reference_lists_the_framework_codes_then_the_tools_own():
    """Mutation: drop ``WRITE_ERRORS`` from ``ToolSpec.error_codes`` → red."""
    from mcp_tools.authoring.reference import render_tool

    registry = Registry()
    registry.tool(description="d", name="w", mirrors_no_route="t", errors={"Farm.Closed": "x."})(
        _plain
    )
    spec = registry.specs()[0]
    codes = [code for code, _ in spec.error_codes()]
    assert codes == [
        "Tool.InvalidArguments",
        "Tool.InternalError",
        "Idempotency.KeyReused",
        "Idempotency.InProgress",
        "Farm.Closed",
    ]
    assert all(f"| `{code}` |" in render_tool(spec) for code in codes)
