"""Tools registered for tests only (auto-installed test app; never shipped).

Two groups: the fixtures the official conformance suite calls by name, and ``mcptest_*``
tools whose behaviour the guard tests control.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime as dt
import threading
import time
import uuid
from typing import Annotated, Any

from django.db import connections
from mcp_types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from cluck.roles import OWNER_ONLY, PRODUCTION_WRITE
from mcp_tools import CallCancelled, CallContext, ToolError, tool
from tests.testapps.idem.models import SideEffect
from tests.testapps.mcp_fixtures import controls

FIXTURE = "conformance-suite fixture (test app only)"
TEST_TOOL = "test tool for the mcp_tools guards (test app only)"

# 1x1 red PNG and a 44-byte silent WAV header: minimal valid media.
RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAAB"
    "JRU5ErkJggg=="
)
SILENT_WAV = base64.b64encode(
    b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80>\x00\x00"
    b"\x02\x00\x10\x00data\x00\x00\x00\x00"
).decode()


# --- conformance fixtures ------------------------------------------------------------------


@tool(
    name="test_simple_text",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns a fixed text.",
)
def simple_text(ctx: CallContext) -> str:
    return "This is a simple text response for testing."


@tool(
    name="test_image_content",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns a 1x1 PNG.",
)
def image_content(ctx: CallContext) -> list[ImageContent]:
    return [ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png")]


@tool(
    name="test_audio_content",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns a silent WAV.",
)
def audio_content(ctx: CallContext) -> list[AudioContent]:
    return [AudioContent(type="audio", data=SILENT_WAV, mime_type="audio/wav")]


@tool(
    name="test_embedded_resource",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns an embedded text resource.",
)
def embedded_resource(ctx: CallContext) -> list[EmbeddedResource]:
    return [
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            ),
        )
    ]


@tool(
    name="test_multiple_content_types",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns text, an image and a resource.",
)
def multiple_content_types(ctx: CallContext) -> list[TextContent | ImageContent | EmbeddedResource]:
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="test://mixed-content-resource",
                mime_type="application/json",
                text='{"test":"data","value":123}',
            ),
        ),
    ]


@tool(
    name="test_error_handling",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Always fails.",
)
def error_handling(ctx: CallContext) -> str:
    raise ToolError(
        "Conformance.Intentional", "This tool intentionally returns an error for testing"
    )


# The suite's JSON Schema 2020-12 fixture, verbatim (SEP-1613 / SEP-2106 keywords preserved).
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


class SchemaArguments(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel)
    name: str | None = None
    address: dict[str, str] | None = None
    contact_method: str | None = None
    phone: str | None = None
    email: str | None = None

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        # The suite checks these keywords survive verbatim; pydantic would rename and inline.
        return copy.deepcopy(SCHEMA_2020_12)


@tool(
    name="json_schema_2020_12_tool",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Tool with JSON Schema 2020-12 features",
)
def json_schema_tool(ctx: CallContext, arguments: SchemaArguments) -> str:
    return f"name={arguments.name}"


class CustomHeaderResult(BaseModel):
    region: str
    priority: int


@tool(
    name="test_custom_headers",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Arguments mirrored in Mcp-Param-* headers (SEP-2243).",
)
def custom_headers(
    ctx: CallContext,
    *,
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    priority: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Priority"})] = 0,
    query: str = "",
) -> CustomHeaderResult:
    return CustomHeaderResult(region=region, priority=priority)


@tool(
    name="test_logging_tool",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns text; this server never sends log notifications.",
)
def logging_tool(ctx: CallContext) -> str:
    return "no log notifications are ever sent by this server"


@tool(
    name="test_streaming_elicitation",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Returns text; this server never sends a request on a response stream.",
)
def streaming_elicitation(ctx: CallContext) -> str:
    # server-stateless calls this with the elicitation capability declared and reads the
    # response stream: it must carry no server-to-client request (2026-07-28 asks for input
    # only through an InputRequiredResult). A stateless JSON server has no such stream: the
    # one frame is this result.
    return "no elicitation: this server never sends requests to the client"


class SamplingArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str


@tool(
    name="test_sampling",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks the client's model (sampling/createMessage) and returns its answer.",
)
def sampling(ctx: CallContext, arguments: SamplingArguments) -> str:
    answer = ctx.sample(
        "sample",
        messages=[{"role": "user", "content": {"type": "text", "text": arguments.prompt}}],
        max_tokens=100,
    )
    content = answer.get("content") or {}
    return f"LLM response: {content.get('text') if isinstance(content, dict) else content}"


class ElicitationArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str


class UserDetails(BaseModel):
    username: str = Field(description="User's response")
    email: str = Field(description="User's email address")


@tool(
    name="test_elicitation",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks the user (elicitation/create) for a username and an email.",
)
def elicitation(ctx: CallContext, arguments: ElicitationArguments) -> str:
    answer = ctx.elicit("details", message=arguments.message, schema=UserDetails)
    content = answer.content.model_dump() if isinstance(answer.content, BaseModel) else None
    return f"User response: action={answer.action}, content={content}"


def _elicited(ctx: CallContext, message: str, properties: dict[str, Any]) -> str:
    schema = {"type": "object", "properties": properties}
    request = {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }
    answer = ctx.request_inputs({"form": request})["form"]
    return f"Elicitation completed: action={answer['action']}, content={answer.get('content')}"


@tool(
    name="test_elicitation_sep1034_defaults",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks for a form whose every primitive has a default (SEP-1034).",
)
def elicitation_defaults(ctx: CallContext) -> str:
    return _elicited(
        ctx,
        "Check the defaults",
        {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "default": True},
        },
    )


@tool(
    name="test_elicitation_sep1330_enums",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks for a form with the five enum shapes (SEP-1330).",
)
def elicitation_enums(ctx: CallContext) -> str:
    options = ["option1", "option2", "option3"]
    return _elicited(
        ctx,
        "Pick options",
        {
            "untitledSingle": {"type": "string", "enum": options},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    )


@tool(
    name="test_missing_capability",
    read_only=True,
    mirrors_no_route=FIXTURE,
    requires_client_capabilities=["sampling"],
    description="Needs a client that declares sampling; refused with -32021 before running.",
)
def missing_capability(ctx: CallContext) -> str:
    return "the client declared sampling"


# --- guard test tools ------------------------------------------------------------------------


class WhoAmI(BaseModel):
    tenant_id: int
    user_id: int
    role: str
    protocol_version: str
    is_row_restricted: bool
    as_of_date: dt.date | None = None


@tool(
    name="mcptest_whoami",
    read_only=True,
    mirrors="me",
    title="Who am I",
    description="The caller's identity as the call context sees it.",
)
def whoami(ctx: CallContext, *, as_of_date: dt.date | None = None) -> WhoAmI:
    return WhoAmI(
        tenant_id=ctx.tenant_id,
        user_id=ctx.user_id,
        role=ctx.role.label,
        protocol_version=ctx.protocol_version,
        is_row_restricted=ctx.is_row_restricted,
        as_of_date=as_of_date,
    )


class Report(BaseModel):
    secret: str


@tool(
    name="mcptest_owner_report",
    read_only=True,
    policy=OWNER_ONLY,
    mirrors_no_route=TEST_TOOL,
    description="Owner-only report (role filtering).",
)
def owner_report(ctx: CallContext) -> Report:
    return Report(secret="owners only")


class Note(BaseModel):
    note_id: str
    text: str


@tool(
    name="mcptest_record_note",
    policy=PRODUCTION_WRITE,
    mirrors_no_route=TEST_TOOL,
    destructive=False,
    description="Records a note (write tool).",
)
def record_note(
    ctx: CallContext, *, text: Annotated[str, Field(max_length=200)], pages: int = 1
) -> Note:
    controls.ran("mcptest_record_note")
    return Note(note_id=uuid.uuid4().hex, text=text)


@tool(
    name="mcptest_record_other",
    policy=PRODUCTION_WRITE,
    mirrors_no_route=TEST_TOOL,
    destructive=False,
    description="Records another note (a second write tool).",
)
def record_other(ctx: CallContext, *, text: str, pages: int = 1) -> Note:
    controls.ran("mcptest_record_other")
    return Note(note_id=uuid.uuid4().hex, text=text)


@tool(
    name="mcptest_refuse",
    policy=PRODUCTION_WRITE,
    mirrors_no_route=TEST_TOOL,
    description="A write that fails with a domain error.",
)
def refuse(ctx: CallContext, *, text: str) -> Note:
    controls.ran("mcptest_refuse")
    raise ToolError("Test.Refused", f"refused: {text}", {"text": text})


@tool(
    name="mcptest_crash",
    read_only=True,
    mirrors_no_route=TEST_TOOL,
    description="Fails unexpectedly.",
)
def crash(ctx: CallContext) -> str:
    raise RuntimeError("secret internal detail")


class Blocked(BaseModel):
    released: bool
    thread: str


@tool(
    name="mcptest_block",
    read_only=True,
    mirrors_no_route=TEST_TOOL,
    description="Blocks until released or until maxSeconds pass.",
)
def block(ctx: CallContext, *, max_seconds: float = 5.0) -> Blocked:
    released = controls.release.wait(max_seconds)
    return Blocked(released=released, thread=threading.current_thread().name)


# --- cancellation (tests/mcp_tools/test_cancellation.py, over a real server) -----------------
# What a tool saw is recorded as a SideEffect row: the server runs in another process.


@tool(
    name="mcptest_slow_steps",
    read_only=True,
    mirrors_no_route=TEST_TOOL,
    description="Reports progress `steps` times, `stepSeconds` apart (no checkpoint in between); "
    "records `cancelled:<label>` when it sees its call cancelled.",
)
def slow_steps(
    ctx: CallContext,
    *,
    label: Annotated[str, Field(max_length=100)],
    steps: Annotated[int, Field(ge=1, le=100)] = 3,
    step_seconds: Annotated[float, Field(ge=0, le=30)] = 0.1,
) -> str:
    try:
        for step in range(steps):
            ctx.report_progress(step, steps)
            time.sleep(step_seconds)
    except CallCancelled:
        _observed(str(ctx.tenant_id), f"cancelled:{label}")
        raise
    return f"done {label}"


def _observed(tenant: str, label: str) -> None:
    """Record what a read tool saw, for the test in another process: on a connection of its
    own, since under row-level security the read's own transaction is read-only
    (tenancy.rls) and rolled back."""

    def record() -> None:
        try:
            SideEffect.objects.create(tenant_id=tenant, label=label)
        finally:
            connections.close_all()

    beside = threading.Thread(target=record)
    beside.start()
    beside.join()


@tool(
    name="mcptest_slow_note",
    policy=PRODUCTION_WRITE,
    mirrors_no_route=TEST_TOOL,
    destructive=False,
    description="Writes a `label` row, reports progress `steps` times `stepSeconds` apart, then "
    "works `tailSeconds` more without a checkpoint (write tool).",
)
def slow_note(
    ctx: CallContext,
    *,
    label: Annotated[str, Field(max_length=100)],
    steps: Annotated[int, Field(ge=1, le=100)] = 3,
    step_seconds: Annotated[float, Field(ge=0, le=30)] = 0.1,
    tail_seconds: Annotated[float, Field(ge=0, le=30)] = 0,
) -> Note:
    SideEffect.objects.create(tenant_id=str(ctx.tenant_id), label=label)
    for step in range(steps):
        ctx.report_progress(step, steps)
        time.sleep(step_seconds)
    time.sleep(tail_seconds)
    return Note(note_id=uuid.uuid4().hex, text=label)


# --- declared non-blocking tools (tests/mcp_tools/test_tools_on_the_loop.py) -----------------


class OnLoop(BaseModel):
    thread: str
    label: str
    steps_reported: int


@tool(
    name="mcptest_async_sleep",
    read_only=True,
    mirrors_no_route=TEST_TOOL,
    description="An async def tool: reports progress `steps` times, sleeps `seconds` (awaiting), "
    "and says which thread ran it; records `finished:<label>` or `cancelled:<label>`.",
)
async def async_sleep(
    ctx: CallContext,
    *,
    label: Annotated[str, Field(max_length=100)],
    seconds: Annotated[float, Field(ge=0, le=30)] = 0,
    steps: Annotated[int, Field(ge=0, le=10)] = 0,
) -> OnLoop:
    tenant = str(ctx.tenant_id)
    try:
        for step in range(steps):
            ctx.report_progress(step, steps)
            await asyncio.sleep(0.05)
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        await SideEffect.objects.acreate(tenant_id=tenant, label=f"cancelled:{label}")
        raise
    await SideEffect.objects.acreate(tenant_id=tenant, label=f"finished:{label}")
    return OnLoop(thread=threading.current_thread().name, label=label, steps_reported=steps)
