"""Input requests without a session (2026-07-28): InputRequiredResult and the request state.

The request state is the only thing kept between rounds, and it is kept by the client: so it
must be authenticated, bound to who asked what with which arguments, expiring and one-time.
Each refusal below is a guard; its docstring names the mutation that turns it red.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from unittest import mock

import pytest
from django.utils import timezone

from mcp_tools import conf
from mcp_tools.asking import requeststate
from tests.factories import MembershipFactory, bearer_for
from tests.mcp_tools.conftest import McpClient
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db(transaction=True)
ELICIT: dict[str, Any] = {"elicitation": {}}
TOOL = "test_input_required_result_request_state"


def _call(
    client: Any, name: str = TOOL, *, arguments: dict[str, Any] | None = None, **extra: Any
) -> Any:
    params = {"name": name, "arguments": arguments or {}, **extra}
    return client.modern("tools/call", params, capabilities=ELICIT)


def _round_one(client: Any, name: str = TOOL, **kwargs: Any) -> dict[str, Any]:
    result = json.loads(_call(client, name, **kwargs).content)["result"]
    assert result["resultType"] == "input_required", result
    return result


def _answer(first: dict[str, Any], content: dict[str, Any] | None = None) -> dict[str, Any]:
    (key,) = first["inputRequests"]
    return {key: {"action": "accept", "content": content or {"ok": True}}}


def _refusal(response: Any) -> str:
    assert response.status_code == 400, response.content
    error = json.loads(response.content)["error"]
    assert error["code"] == -32602, error
    reason: str = error["data"]["reason"]
    return reason


def test_a_question_then_its_answer_with_the_signed_state(mcp_client):
    client = mcp_client()
    first = _round_one(client)
    assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
    assert first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
    done = json.loads(
        _call(client, inputResponses=_answer(first), requestState=first["requestState"]).content
    )["result"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "state-ok: confirmed"


@mutation(
    "mcp_tools/asking/requeststate.py",
    find="        payload = signing.loads(token, salt=SALT, max_age=ttl)\n",
    replace=(
        '        payload = __import__("json").loads(\n'
        '            __import__("zlib").decompress(\n'
        '                signing.b64_decode(token.split(":")[0][1:].encode())\n'
        "            )\n"
        "        )\n"
    ),
)
def test_a_tampered_state_is_refused(mcp_client):
    """Mutation: in ``requeststate.open_state`` decode the payload without verifying its
    signature (``signing.loads`` → a plain base64/JSON decode) → red."""
    client = mcp_client()
    first = _round_one(client)
    state = first["requestState"]
    payload, _, signature = state.rpartition(":")
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    for forged in (f"{payload}:{flipped}", state + "-TAMPERED", "not-a-state", 12):
        response = _call(client, inputResponses=_answer(first), requestState=forged)
        if forged == 12:  # not even a string: the SDK's params validation answers
            assert response.status_code == 400
            continue
        assert _refusal(response) == "tampered"


@mutation(
    Edit(
        "mcp_tools/asking/requeststate.py",
        find="payload = signing.loads(token, salt=SALT, max_age=ttl)",
        replace="payload = signing.loads(token, salt=SALT)",
    ),
    Edit(
        "mcp_tools/asking/requeststate.py",
        find="    if expires <= timezone.now().timestamp():",
        replace="    if False:",
    ),
)
def test_an_expired_state_is_refused(mcp_client):
    """Mutation: drop ``max_age`` from ``signing.loads`` *and* the ``x`` expiry check in
    ``requeststate.open_state`` → red."""
    client = mcp_client()
    first = _round_one(client)
    ttl = conf.get("REQUEST_STATE_TTL_SECONDS")
    later = timezone.now() + dt.timedelta(seconds=ttl + 5)
    with (
        mock.patch("django.core.signing.time.time", return_value=later.timestamp()),
        mock.patch("mcp_tools.asking.requeststate.timezone.now", return_value=later),
    ):
        response = _call(client, inputResponses=_answer(first), requestState=first["requestState"])
    assert _refusal(response) == "expired"


@mutation(
    "mcp_tools/asking/requeststate.py",
    find='    if payload.get("b") != binding.as_list():',
    replace="    if False:",
)
def test_a_state_is_bound_to_tenant_actor_tool_and_arguments(mcp_client):
    """Mutation: in ``requeststate.open_state`` skip the ``payload["b"] != binding`` check →
    red (another member, another farm, another tool or other arguments would be accepted)."""
    owner = mcp_client()
    first = _round_one(owner)
    answers, state = _answer(first), first["requestState"]
    colleague = McpClient(
        bearer_for(MembershipFactory(tenant=owner.membership.tenant, roles=["Admin"]))  # type: ignore[arg-type]
    )
    stranger = mcp_client()
    assert _refusal(_call(colleague, inputResponses=answers, requestState=state)) == "foreign"
    assert _refusal(_call(stranger, inputResponses=answers, requestState=state)) == "foreign"
    other_tool = _call(
        owner,
        "test_input_required_result_tampered_state",
        inputResponses=answers,
        requestState=state,
    )
    assert _refusal(other_tool) == "foreign"
    # Other arguments: a yes to deleting a.txt is not a yes to deleting b.txt.
    asked = _round_one(owner, "confirm_delete", arguments={"filename": "a.txt"})
    other_arguments = _call(
        owner,
        "confirm_delete",
        arguments={"filename": "b.txt"},
        inputResponses={"confirm": {"action": "accept", "content": {"confirm": True}}},
        requestState=asked["requestState"],
    )
    assert _refusal(other_arguments) == "foreign"


@mutation(
    "mcp_tools/execution/runner.py",
    find="            requeststate.redeem(opened)",
    replace="            pass",
)
def test_a_replayed_state_is_refused_on_any_replica(mcp_client):
    """Mutation: skip ``requeststate.redeem`` in ``execution.runner.job`` → red. The redemption is a
    row in the database, so a second replica refuses the replay just the same."""
    client = mcp_client()
    first = _round_one(client)
    kwargs = {"inputResponses": _answer(first), "requestState": first["requestState"]}
    assert json.loads(_call(client, **kwargs).content)["result"]["resultType"] == "complete"
    assert _refusal(_call(client, **kwargs)) == "replayed"


def test_answers_without_a_state_count_only_where_the_tool_allows_it(mcp_client):
    client = mcp_client()
    loose = {"confirm": {"action": "accept", "content": {"ok": True}}}
    asked_again = json.loads(_call(client, inputResponses=loose).content)["result"]
    assert asked_again["resultType"] == "input_required"
    accepted = json.loads(
        _call(
            client,
            "test_input_required_result_elicitation",
            inputResponses={"user_name": {"action": "accept", "content": {"name": "Ann"}}},
        ).content
    )["result"]
    assert accepted["content"][0]["text"] == "Hello, Ann!"


def test_several_rounds_carry_earlier_answers_in_a_fresh_state(mcp_client):
    client = mcp_client()
    name = "test_input_required_result_multi_round"
    first = _round_one(client, name)
    second = json.loads(
        _call(
            client,
            name,
            inputResponses={"step1": {"action": "accept", "content": {"name": "Ann"}}},
            requestState=first["requestState"],
        ).content
    )["result"]
    assert list(second["inputRequests"]) == ["step2"]
    assert second["requestState"] != first["requestState"]
    done = json.loads(
        _call(
            client,
            name,
            inputResponses={"step2": {"action": "accept", "content": {"color": "blue"}}},
            requestState=second["requestState"],
        ).content
    )["result"]
    assert done["content"][0]["text"] == "Ann likes blue"


def test_an_undeclared_capability_is_missing_required_client_capability(mcp_client):
    response = mcp_client().modern("tools/call", {"name": TOOL, "arguments": {}})
    assert response.status_code == 400
    error = json.loads(response.content)["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_the_handshake_era_says_plainly_that_input_requests_are_unavailable(mcp_client):
    result = mcp_client().call(TOOL, {})["result"]
    assert result["isError"] is True
    error = json.loads(result["content"][0]["text"])["error"]
    assert error["code"] == "Client.CapabilityRequired"
    assert "2026-07-28" in error["message"]


def test_request_states_are_signed_with_a_purpose_bound_key(settings):
    binding = requeststate.Binding.of(tenant=1, user=2, method="tools/call", name="t", arguments={})
    state = requeststate.issue(binding, answers={}, pending=["k"])
    assert requeststate.open_state(state, binding).pending == ("k",)
    settings.SECRET_KEY = "another-deployment-" + "x" * 40
    with pytest.raises(requeststate.RequestStateRefusedError) as refused:
        requeststate.open_state(state, binding)
    assert refused.value.reason == "tampered"
