"""A tool's answer made into a result without redoing what its adapter did (issue 37).

A drf read whose data is already plain JSON (``contrib.drf.plain_json``) is its structured
result as is (``execution.results.PlainJSON``), not validated into ``Payload`` and dumped
back; every other answer still goes through the declared model. The structured payload is
encoded once: its text copy and the response body share that encoding
(``rpc.jsonrpc.Encoded``, spliced by ``result_bytes``).
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from enum import IntEnum
from typing import Any

import pytest
from pydantic import BaseModel
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from mcp_tools.authoring.registry import Registry
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.catalogue.surfaces import activated, build_catalogue
from mcp_tools.contrib.drf.requests import plain_json, read_answer
from mcp_tools.exceptions import ToolError
from mcp_tools.execution import results
from mcp_tools.execution.results import PlainJSON
from mcp_tools.rpc import jsonrpc
from tenancy import AUTHENTICATED
from tests.mcp_tools.test_drf_route_calls import _called
from tests.mutations import mutation

PAGE: dict[str, Any] = {
    "count": 2,
    "next": None,
    "results": [{"name": 'Tea "green" ☕', "price": "2.00", "ok": True, "n": 1.5}],
}


class Greeting(BaseModel):
    text: str


def _registry() -> Registry:
    registry = Registry()

    @registry.tool(
        name="greets_with_a_checked_dict",
        read_only=True,
        policy=AUTHENTICATED,
        description="Declares Greeting, returns a PlainJSON that fits it.",
    )
    def checked(ctx: CallContext) -> Greeting:
        return PlainJSON({"text": "hello"})  # type: ignore[return-value]

    @registry.tool(
        name="greets_with_a_page",
        read_only=True,
        policy=AUTHENTICATED,
        description="Returns the model it declares.",
    )
    def page(ctx: CallContext) -> Greeting:
        return Greeting(text=json.dumps(PAGE))

    return registry


def _spec(name: str) -> ToolSpec:
    (spec,) = [spec for spec in _registry().specs() if spec.name == name]
    return spec


@mutation(
    "mcp_tools/execution/results.py",
    find="if spec.plain_results and type(value) is PlainJSON:",
    replace="if type(value) is PlainJSON:",
)
@mutation(
    "mcp_tools/execution/results.py",
    find="if spec.plain_results and type(value) is PlainJSON:",
    replace="if spec.plain_results and isinstance(value, dict):",
)
def test_only_a_checked_answer_of_a_plain_results_tool_skips_the_model() -> None:
    """Mutation: any tool's ``PlainJSON`` skips its model, or any dict of a ``plain_results``
    tool does → a body that broke its declared model (a dict instead of ``Greeting``) is
    answered as a success → red."""
    spec = _spec("greets_with_a_checked_dict")
    with pytest.raises(ToolError) as refused:
        results.success_result(spec, PlainJSON({"text": "hello"}))
    assert refused.value.code == "Tool.ResultNotModel"
    plain = dataclasses.replace(spec, plain_results=True)
    with pytest.raises(ToolError) as unchecked:
        results.success_result(plain, {"text": "hello"})
    assert unchecked.value.code == "Tool.ResultNotModel"
    done = results.success_result(plain, PlainJSON(PAGE))
    assert done["structuredContent"] == PAGE
    assert json.loads(done["content"][0]["text"]) == PAGE


@mutation(
    "mcp_tools/contrib/drf/view.py",
    find="return PlainJSON(structured(data))",
    replace="return structured(data)",
)
def test_a_drf_read_of_plain_json_is_taken_as_checked_and_nothing_else_is() -> None:
    """Mutation: the view's checked data comes back unmarked → it is validated into
    ``Payload`` and dumped back on every call (the work this shortcut saves) → red. A Decimal
    is rendered as over REST and is never marked."""
    assert type(_called(PAGE)) is PlainJSON
    rendered = _called({"price": Decimal("2.50")})
    assert type(rendered) is dict and rendered == {"price": 2.5}


@mutation(
    "mcp_tools/rpc/jsonrpc.py",
    find='+ structured.encoded + b"}"',
    replace='+ _dumps(dict(structured, spliced=True)) + b"}"',
)
@mutation(
    "mcp_tools/rpc/jsonrpc.py",
    find='comma = b"," if len(rest) > 2 else b""',
    replace='comma = b","',
)
def test_the_response_splices_the_one_encoding_of_the_structured_payload() -> None:
    """The response body holds the structured payload the text copy encodes, byte for byte,
    and parses to what encoding the whole result would. Mutation: splice something else, or a
    comma after an empty rest → the response differs from the result, or is no JSON → red."""
    result = results.structured_result(PAGE)
    text = result["content"][0]["text"]
    assert text == jsonrpc.dumps(PAGE).decode()
    body = jsonrpc.result_bytes(7, result)
    assert text.encode() in body
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": json.loads(jsonrpc.dumps(result)),
    }
    alone = jsonrpc.result_bytes(7, {"structuredContent": jsonrpc.encoded(PAGE)})
    assert json.loads(alone)["result"] == {"structuredContent": PAGE}


@pytest.mark.django_db(transaction=True)
@mutation(
    "mcp_tools/rpc/jsonrpc.py",
    find='+ structured.encoded + b"}"',
    replace='+ _dumps({}) + b"}"',
)
def test_over_mcp_the_structured_content_is_what_its_text_copy_says(mcp_client: Any) -> None:
    """Mutation: the response splices another encoding than the payload's → the client reads
    a ``structuredContent`` its text copy does not say → red."""
    client = mcp_client("Owner")
    catalogue = build_catalogue(_registry(), page_size=50, server_name="t", server_version="1")
    with activated(catalogue):
        result = client.call("greets_with_a_page")["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"text": json.dumps(PAGE)}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="    if kind is dict or (kind is not list and isinstance(value, dict)):",
    replace="    if kind is dict:",
)
@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="    return isinstance(value, str | int)  # bool is an int",
    replace="    return False",
)
def test_the_plain_json_check_takes_subclasses_as_before() -> None:
    """The exact-type fast path asks ``isinstance`` for the rest, as the check always did.
    Mutation: only exact dicts, or no scalar subclass → DRF's ``ReturnDict`` page or an
    ``IntEnum`` is rendered and parsed again (correct, but the cost this check saves) → red."""

    class Size(IntEnum):
        LARGE = 3

    serializer: Any = None  # what a view's data holds, not what made it
    rows = ReturnList(
        [ReturnDict({"size": Size.LARGE}, serializer=serializer)], serializer=serializer
    )
    assert plain_json(ReturnDict({"results": rows}, serializer=serializer))
    assert not plain_json(ReturnDict({"results": [Decimal("1")]}, serializer=serializer))


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="_PLAIN_DECODER: Final = json.JSONDecoder(parse_constant=_no_constant)",
    replace="_PLAIN_DECODER: Final = json.JSONDecoder()",
)
def test_a_rendered_read_is_checked_plain_only_without_nan() -> None:
    """A Ninja read's body is parsed JSON: plain, but for ``NaN``/``Infinity`` (Python's
    parser takes them). Mutation: parse them too → a NaN reaches the structured result as
    is (the model would have dumped it as ``null``; encoded, it is no JSON) → red."""
    assert read_answer(b'{"count":1,"results":[{"a":"\\u2615"}]}') == {
        "count": 1,
        "results": [{"a": "☕"}],
    }
    assert type(read_answer(b'[{"a":1}]')) is PlainJSON
    nan = read_answer(b'{"a":NaN}')
    assert type(nan) is dict
    assert type(read_answer(b"")) is dict
