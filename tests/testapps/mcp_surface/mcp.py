"""Resources, prompts, input requests and tasks for tests only (auto-installed test app).

Two groups, as in ``tests.testapps.mcp_fixtures``: the fixtures the official conformance suites
call by name (resources, prompts, completions, progress, logging, input requests, tasks), and
``mcptest_*`` definitions the guard tests control.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Annotated, Any, Literal

from mcp_types import EmbeddedResource, ImageContent, PromptMessage, TextResourceContents
from pydantic import BaseModel, ConfigDict, Field, create_model

from cluck.roles import OWNER_ONLY
from mcp_tools import (
    CallContext,
    FactoryTool,
    ResourceNotFoundError,
    ToolError,
    prompt,
    raw_tool,
    resource,
    resource_template,
    tool,
    tool_factory,
)
from mcp_tools.authoring.prompts import user
from tests.testapps.mcp_surface import controls

FIXTURE = "conformance-suite fixture (test app only)"
TEST_TOOL = "test definition for the mcp_tools guards (test app only)"
RED_PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAAB"
    "JRU5ErkJggg=="
)


# --- resources -----------------------------------------------------------------------------


@resource(
    uri="test://static-text",
    name="static-text",
    mime_type="text/plain",
    description="A static text resource (conformance fixture).",
)
def static_text(ctx: CallContext) -> str:
    return "This is the content of the static text resource."


@resource(
    uri="test://static-binary",
    name="static-binary",
    mime_type="image/png",
    description="A static binary resource: a 1x1 PNG (conformance fixture).",
)
def static_binary(ctx: CallContext) -> bytes:
    return base64.b64decode(RED_PIXEL_PNG)


@resource_template(
    "test://template/{id}/data",
    name="template-data",
    mime_type="application/json",
    description="Data for one id (conformance fixture).",
)
def template_data(ctx: CallContext, *, id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@resource(
    uri="test://owner-only",
    name="owner-only",
    policy=OWNER_ONLY,
    description="Owners only (role filtering).",
)
def owner_only(ctx: CallContext) -> str:
    return "owners only"


def _complete_tenant(ctx: CallContext, value: str, arguments: dict[str, str]) -> list[str]:
    return [v for v in (str(ctx.tenant_id),) if v.startswith(value)]


@resource_template(
    "test://tenants/{tenant}/note",
    name="tenant-note",
    description="A note readable only by members of that tenant (tenant scoping).",
    complete={"tenant": _complete_tenant},
)
def tenant_note(ctx: CallContext, *, tenant: int) -> str:
    if tenant != ctx.tenant_id:
        raise ResourceNotFoundError()
    return f"note of tenant {tenant}"


# --- prompts -------------------------------------------------------------------------------


@prompt(name="test_simple_prompt", description="A simple prompt without arguments.")
def simple_prompt(ctx: CallContext) -> str:
    return "This is a simple prompt for testing."


def _complete_arg1(ctx: CallContext, value: str, arguments: dict[str, str]) -> list[str]:
    return [v for v in ("paris", "park", "party") if v.startswith(value)]


@prompt(
    name="test_prompt_with_arguments",
    description="A prompt with two arguments (conformance fixture).",
    complete={"arg1": _complete_arg1},
)
def prompt_with_arguments(
    ctx: CallContext,
    *,
    arg1: Annotated[str, Field(description="First argument")],
    arg2: Annotated[str, Field(description="Second argument")],
) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt(
    name="test_prompt_with_embedded_resource",
    description="A prompt embedding a resource (conformance fixture).",
)
def prompt_with_embedded_resource(
    ctx: CallContext, *, resource_uri: Annotated[str, Field(description="URI to embed")]
) -> list[PromptMessage]:
    embedded = EmbeddedResource(
        type="resource",
        resource=TextResourceContents(
            uri=resource_uri, mime_type="text/plain", text="Embedded resource content for testing."
        ),
    )
    return [user(embedded), user("Please process the embedded resource above.")]


@prompt(name="test_prompt_with_image", description="A prompt with an image (fixture).")
def prompt_with_image(ctx: CallContext) -> list[PromptMessage]:
    image = ImageContent(type="image", data=RED_PIXEL_PNG, mime_type="image/png")
    return [user(image), user("Please analyze the image above.")]


@prompt(name="mcptest_owner_prompt", policy=OWNER_ONLY, description="Owners only (filtering).")
def owner_prompt(ctx: CallContext) -> str:
    return "owners only"


# --- progress and logging ------------------------------------------------------------------


@tool(
    name="test_tool_with_logging",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Sends three info log messages while it runs.",
)
def tool_with_logging(ctx: CallContext) -> str:
    ctx.log("info", "Tool execution started")
    time.sleep(0.05)
    ctx.log("info", "Tool processing data")
    time.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@tool(
    name="test_tool_with_progress",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Reports progress 0, 50 and 100 of 100.",
)
def tool_with_progress(ctx: CallContext) -> str:
    for step in (0, 50, 100):
        ctx.report_progress(step, 100)
        time.sleep(0.05)
    return "Tool with progress executed successfully"


# --- input requests (2026-07-28 multi-round-trip requests) -----------------------------------


class _Name(BaseModel):
    name: str


class _Ok(BaseModel):
    ok: bool


class _Color(BaseModel):
    color: str


class _Context(BaseModel):
    context: str


def _elicit_request(message: str, field: str) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": "string"}},
                "required": [field],
            },
        },
    }


def _sampling_request(text: str, max_tokens: int) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        },
    }


ROOTS_REQUEST: dict[str, Any] = {"method": "roots/list", "params": {}}


@tool(
    name="test_input_required_result_elicitation",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks for the user's name, then greets them.",
)
def irr_elicitation(ctx: CallContext) -> str:
    # The answer authorizes nothing, so one sent without the request state is accepted too.
    answer = ctx.elicit(
        "user_name", message="What is your name?", schema=_Name, require_state=False
    )
    if not answer.accepted or not isinstance(answer.content, _Name):
        return "No name given."
    return f"Hello, {answer.content.name}!"


@tool(
    name="test_input_required_result_sampling",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks the client's model a question.",
)
def irr_sampling(ctx: CallContext) -> str:
    answer = ctx.sample(
        "capital_question",
        messages=_sampling_request("What is the capital of France?", 100)["params"]["messages"],
        max_tokens=100,
    )
    return f"The model answered: {json.dumps(answer.get('content'))}"


@tool(
    name="test_input_required_result_list_roots",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks the client for its roots.",
)
def irr_list_roots(ctx: CallContext) -> str:
    roots = ctx.list_roots("client_roots")
    return "Roots: " + ", ".join(str(root.get("uri")) for root in roots)


@tool(
    name="test_input_required_result_request_state",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks for a confirmation bound to a signed request state.",
)
def irr_request_state(ctx: CallContext) -> str:
    answer = ctx.elicit("confirm", message="Please confirm", schema=_Ok)
    return "state-ok: confirmed" if answer.accepted else "state-ok: declined"


@tool(
    name="test_input_required_result_tampered_state",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Like the request-state fixture: a tampered state is refused.",
)
def irr_tampered_state(ctx: CallContext) -> str:
    answer = ctx.elicit("confirm", message="Please confirm", schema=_Ok)
    return "confirmed" if answer.accepted else "declined"


@tool(
    name="test_input_required_result_multiple_inputs",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks for a name, a model greeting and the roots in one round.",
)
def irr_multiple_inputs(ctx: CallContext) -> str:
    answers = ctx.request_inputs(
        {
            "user_name": _elicit_request("What is your name?", "name"),
            "greeting": _sampling_request("Generate a greeting", 50),
            "client_roots": ROOTS_REQUEST,
        }
    )
    return f"Got {len(answers)} answers"


@tool(
    name="test_input_required_result_multi_round",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks two questions, one per round.",
)
def irr_multi_round(ctx: CallContext) -> str:
    name = ctx.elicit("step1", message="Step 1: What is your name?", schema=_Name)
    color = ctx.elicit("step2", message="Step 2: What is your favorite color?", schema=_Color)
    if not isinstance(name.content, _Name) or not isinstance(color.content, _Color):
        return "declined"
    return f"{name.content.name} likes {color.content.color}"


@tool(
    name="test_input_required_result_capabilities",
    read_only=True,
    mirrors_no_route=FIXTURE,
    description="Asks only for what the client declared it can answer.",
)
def irr_capabilities(ctx: CallContext) -> str:
    requests: dict[str, Any] = {}
    if ctx.client_supports("sampling"):
        requests["summary"] = _sampling_request("Summarise", 50)
    if ctx.client_supports("elicitation"):
        requests["confirm"] = _elicit_request("Confirm?", "ok")
    if not requests:
        return "nothing to ask"
    return f"Got {len(ctx.request_inputs(requests))} answers"


@prompt(
    name="test_input_required_result_prompt",
    description="A prompt that asks the user for context first.",
)
def irr_prompt(ctx: CallContext) -> str:
    answer = ctx.elicit(
        "user_context", message="What context should the prompt use?", schema=_Context
    )
    context = answer.content.context if isinstance(answer.content, _Context) else "none"
    return f"Use this context: {context}"


# --- tasks (io.modelcontextprotocol/tasks) -------------------------------------------------


@tool(name="greet", read_only=True, mirrors_no_route=FIXTURE, description="Says hello (sync).")
def greet(ctx: CallContext, *, name: str) -> str:
    return f"Hello, {name}!"


@tool(
    name="slow_compute",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    description="Sleeps `seconds` (as a task when the client negotiated tasks).",
)
def slow_compute(
    ctx: CallContext,
    *,
    seconds: Annotated[float, Field(ge=0, le=120)],
    label: Annotated[str, Field(max_length=100)] = "",
) -> str:
    if seconds > 0:
        ctx.continue_as_task()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ctx.check_cancelled()
        time.sleep(0.05)
    return f"Computed {label or 'it'} in {seconds:g} s"


@tool(
    name="failing_job",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="required",
    description="Runs only as a task and always ends with a tool error.",
)
def failing_job(ctx: CallContext) -> str:
    ctx.continue_as_task()
    time.sleep(0.3)
    raise ToolError("Job.Failed", "The job failed on purpose (fixture).")


@tool(
    name="protocol_error_job",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    description="Crashes inside its task (an internal failure).",
)
def protocol_error_job(ctx: CallContext) -> str:
    ctx.continue_as_task()
    raise RuntimeError("fixture crash inside a task")


class _Confirm(BaseModel):
    confirm: bool


@tool(
    name="confirm_delete",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    description="A task that asks for a confirmation before it finishes.",
)
def confirm_delete(ctx: CallContext, *, filename: Annotated[str, Field(max_length=200)]) -> str:
    ctx.continue_as_task()
    answer = ctx.elicit("confirm", message=f"Delete {filename}?", schema=_Confirm)
    if answer.accepted and isinstance(answer.content, _Confirm) and answer.content.confirm:
        return f"Deleted {filename} (pretend)"
    return f"Kept {filename}"


@tool(
    name="multi_input",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    description="A task that asks two questions at once.",
)
def multi_input(ctx: CallContext) -> str:
    ctx.continue_as_task()
    answers = ctx.request_inputs(
        {
            "name": _elicit_request("Your name?", "name"),
            "confirm": _elicit_request("Confirm?", "confirm"),
        }
    )
    return f"Got {len(answers)} answers"


@tool(
    name="test_tool_with_task",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="required",
    description="Asks for a name (input request), then finishes as a task.",
)
def tool_with_task(ctx: CallContext) -> str:
    answer = ctx.elicit("user_name", message="What is your name?", schema=_Name)
    ctx.continue_as_task()
    name = answer.content.name if isinstance(answer.content, _Name) else "nobody"
    return f"Hello, {name}! (from a task)"


# --- guards --------------------------------------------------------------------------------


class _Echo(BaseModel):
    tenant_id: int
    value: str


@tool_factory(
    name="mcptest_factory_echo",
    read_only=True,
    result=_Echo,
    mirrors_no_route=TEST_TOOL,
    description="Echoes one of the caller's own values (an identity factory).",
)
def factory_echo(ctx: CallContext) -> FactoryTool:
    values = tuple(f"tenant-{ctx.tenant_id}-{suffix}" for suffix in ("a", "b"))
    fields: dict[str, Any] = {"value": (Literal.__getitem__(values), ...)}
    arguments = create_model(
        "FactoryEchoArguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    controls.built(arguments)

    def run(ctx: CallContext, args: Any) -> _Echo:
        return _Echo(tenant_id=ctx.tenant_id, value=args.value)

    return FactoryTool(arguments=arguments, run=run)


@raw_tool(
    name="mcptest_raw_echo",
    description="Echoes its raw arguments (unprotected; served only when enabled).",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    read_only=True,
)
def raw_echo(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]}


@tool(
    name="mcptest_streamed_count",
    read_only=True,
    mirrors_no_route=TEST_TOOL,
    description="Reports `steps` progress notifications, then returns.",
)
def streamed_count(ctx: CallContext, *, steps: Annotated[int, Field(ge=0, le=50)] = 3) -> str:
    for step in range(steps):
        ctx.report_progress(step + 1, steps, f"step {step + 1}")
    return f"counted {steps}"
