"""How a drf tool's call runs the view without the REST request's detours (issue 37): a read
takes the view's data as is only when rendering it to JSON and parsing that back would give the
same value; a write's unit and its call share one request (and only for the same arguments).

The end-to-end behaviour (the same answers and refusals over REST and MCP, the TypeScript SDK
validating each structured result against its ``outputSchema``) is pinned by
tests/shop/test_drf_tools.py and tests/cluck/test_drf_tool.py.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mcp_tools.contrib.drf.requests import _django_request, plain_json, share, take
from mcp_tools.contrib.drf.view import _DrfView
from tests.mutations import mutation

ANSWER: dict[str, Any] = {}


class _AnswerView(APIView):
    """Answers ``ANSWER`` to anyone, through DRF's JSON renderer as over REST."""

    permission_classes = [AllowAny]
    throttle_classes: list[Any] = []

    def get(self, request: Request) -> Response:
        return Response(ANSWER)


class _Arguments(BaseModel):
    pass


class _Shouting(JSONRenderer):
    """A project's own JSON renderer: what it writes is not the view's data."""

    def render(self, data: Any, *args: Any, **kwargs: Any) -> bytes:
        return super().render({key.upper(): value for key, value in data.items()}, *args, **kwargs)


class _ShoutingView(_AnswerView):
    renderer_classes = [_Shouting]


def _called(answer: dict[str, Any], view: _DrfView | None = None) -> Any:
    """What the drf tool's call of ``_AnswerView`` (or ``view``) returns for ``answer`` (the
    request handed over as a write's unit hands it, so no route is needed)."""
    ANSWER.clear()
    ANSWER.update(answer)
    view = view or _DrfView("test", _AnswerView, "get", route="unused", serializer_class=None)
    validated = _Arguments()
    share(validated, (_django_request("GET", "/answer/", "", b""), {}))
    return view.call(None, validated)  # type: ignore[arg-type]  # the request is handed over


def _over_rest(answer: dict[str, Any]) -> Any:
    return json.loads(JSONRenderer().render(answer))


@mutation(
    "mcp_tools/contrib/drf/view.py",
    find="if type(renderer) is self.json_renderer and plain_json(data):",
    replace="if type(renderer) is self.json_renderer:",
)
def test_a_read_whose_data_json_would_change_answers_what_rest_renders() -> None:
    """Mutation: take the view's data as is whatever it holds → a Decimal, a datetime and a
    UUID reach the structured result instead of the JSON REST writes for them (a number, DRF's
    timestamp, a string) → red."""
    moment = dt.datetime(2026, 12, 7, 5, 30, 1, 123456, tzinfo=dt.UTC)
    answer = {"price": Decimal("2.50"), "at": moment, "id": uuid.UUID(int=7), "n": 1}
    called = _called(answer)
    assert called == _over_rest(answer)
    assert called == {
        "price": 2.5,
        "at": "2026-12-07T05:30:01.123456Z",
        "id": str(uuid.UUID(int=7)),
        "n": 1,
    }


def test_a_read_of_plain_json_answers_the_same_data() -> None:
    answer = {"count": 2, "next": None, "results": [{"name": "Tea", "price": "2.00", "ok": True}]}
    assert _called(answer) == _over_rest(answer) == answer


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="            if type(key) is not str and not isinstance(key, str):",
    replace="            if False:",
)
@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="        return math.isfinite(value)",
    replace="        return True",
)
def test_only_what_json_parsing_gives_back_is_plain() -> None:
    """Mutation: a dict is plain whatever it holds, or any float is → a nested Decimal or a
    non-string key (JSON makes it a string), a NaN (REST refuses to render it) would be taken
    as is → red."""
    assert plain_json({"a": [1, "x", None, True, 2.5, {"b": []}]})
    assert not plain_json({"a": [{"price": Decimal("1")}]})
    assert not plain_json({1: "one"})
    assert not plain_json({"a": float("nan")})
    assert not plain_json({"a": (1, 2)})
    assert not plain_json({"a": dt.date(2026, 1, 1)})


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="    if entry is not None and entry[0] is validated:",
    replace="    if entry is not None:",
)
def test_a_shared_request_goes_only_to_the_call_with_the_same_arguments() -> None:
    """A write's unit hands its request to the call of the same arguments (one request, as
    REST's middleware and view share one). Mutation: hand it to whatever call comes next on
    the thread → a call would run another call's request → red."""
    first, other = _Arguments(), _Arguments()
    share(first, "first's request")
    assert take(other) is None
    assert take(first) is None  # taken (or dropped) once: never a stale request later
    share(first, "first's request")
    assert take(first) == "first's request"


@mutation(
    "mcp_tools/contrib/drf/view.py",
    find="                return renderer_class(), media_type\n",
    replace="                return self.json_renderer(), media_type\n",
)
def test_the_renderer_negotiated_once_is_the_views_own_on_every_call() -> None:
    """The tool's requests all ask for JSON alike, so the view's negotiation runs at the first
    call only. Mutation: later calls get DRF's JSONRenderer instead of the one the view's
    negotiation chose → the second call answers the data, not what the view renders → red."""
    view = _DrfView("test", _ShoutingView, "get", route="unused", serializer_class=None)
    assert _called({"name": "Tea"}, view) == {"NAME": "Tea"}
    assert _called({"name": "Teapot"}, view) == {"NAME": "Teapot"}
