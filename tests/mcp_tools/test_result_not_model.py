"""A tool declared to return a pydantic model that returns something else (issue 33).

The return annotation becomes the tool's ``outputSchema``; a body that returns a plain dict
(even one that fits the model) broke that promise silently. The registry cannot see what a
body returns, so the check is at call time: the tool error ``Tool.ResultNotModel`` naming the
tool, the model it declares and what it returned — and a write tool's write rolls back with it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from cluck.models import Customer
from mcp_tools.authoring.registry import Registry
from mcp_tools.call.context import CallContext
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from tenancy import AUTHENTICATED
from tests.mutations import mutation

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "2d1b8f0e-9a61-4c1e-8a53-0c7e4f2b9d10"


class Greeting(BaseModel):
    text: str


class Added(BaseModel):
    customer_id: int


def _catalogue() -> Any:
    registry = Registry()

    @registry.tool(
        name="greets_with_a_dict",
        read_only=True,
        policy=AUTHENTICATED,
        description="Declares Greeting, returns a dict that fits it.",
    )
    def greets(ctx: CallContext) -> Greeting:
        return {"text": "hello"}  # type: ignore[return-value]

    @registry.tool(
        name="adds_with_a_dict",
        policy=AUTHENTICATED,
        description="Writes a customer, then returns a dict instead of Added.",
    )
    def adds(ctx: CallContext, *, name: str) -> Added:
        customer = Customer.all_tenants.create(farm=ctx.tenant.instance, name=name)
        return {"customer_id": customer.pk}  # type: ignore[return-value]

    @registry.tool(
        name="greets_properly",
        read_only=True,
        policy=AUTHENTICATED,
        description="Returns the model it declares.",
    )
    def proper(ctx: CallContext) -> Greeting:
        return Greeting(text="hello")

    return build_catalogue(registry, page_size=50, server_name="t", server_version="1")


def _error(reply: dict[str, Any]) -> dict[str, Any]:
    result = reply["result"]
    assert result["isError"] is True, result
    assert "structuredContent" not in result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


@mutation(
    "mcp_tools/execution/results.py",
    find="    if isinstance(value, model):\n        return value.model_dump(",
    replace="    if True:\n        return model.model_validate(value).model_dump(",
)
def test_a_dict_from_a_tool_declared_to_return_a_model_is_refused_naming_the_tool(mcp_client):
    """Mutation: validate whatever the body returned against the model, as before (the dict
    fits it) → the call succeeds → red."""
    client = mcp_client("Owner")
    with activated(_catalogue()):
        error = _error(client.call("greets_with_a_dict"))
        good = client.call("greets_properly")["result"]
    assert error["code"] == "Tool.ResultNotModel"
    assert "greets_with_a_dict" in error["message"] and "Greeting" in error["message"]
    assert error["data"] == {
        "tool": "greets_with_a_dict",
        "declared": "Greeting",
        "returned": "dict",
    }
    assert good["structuredContent"] == {"text": "hello"}


@mutation(
    "mcp_tools/execution/results.py",
    find="    if isinstance(value, model):\n        return value.model_dump(",
    replace="    if True:\n        return model.model_validate(value).model_dump(",
)
def test_a_write_that_returns_a_dict_is_refused_and_writes_nothing(mcp_client):
    """The refusal is raised inside the write's idempotent unit, so what the body wrote rolls
    back. Mutation: validate whatever the body returned, as before (the dict fits Added) → the
    customer is written and the call succeeds → red."""
    client = mcp_client("Owner")
    with activated(_catalogue()):
        reply = client.call("adds_with_a_dict", {"name": "Never Kept", "idempotencyKey": KEY})
    assert _error(reply)["code"] == "Tool.ResultNotModel"
    assert not Customer.all_tenants.filter(name="Never Kept").exists()
