"""``/a2a`` params fuzzing: every method, params generated as arbitrary JSON built from the
specification's field names (and any others), plus ``SendMessage`` messages whose parts,
invocation and metadata are arbitrary.

Each reply is HTTP 200 with a result or a JSON-RPC error whose code is one of the stable ones
this endpoint answers with (docs/a2a.md); never a 5xx, never -32603 (an internal error: no
bound is near in this test). Bounded for CI: ``CLUCK_FUZZ_EXAMPLES`` examples per method
(default 25), derandomized (``CLUCK_FUZZ_RANDOM=1`` to explore).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_tools.params import METHODS
from tests.a2a_tools.conftest import A2AClient
from tests.mutations import mutation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

EXAMPLES = int(os.environ.get("CLUCK_FUZZ_EXAMPLES", "25"))
DERANDOMIZE = os.environ.get("CLUCK_FUZZ_RANDOM") != "1"
STABLE_CODES = {-32600, -32602, -32001, -32002, -32003, -32004, -32005}
FIELDS = [
    "message", "messageId", "role", "parts", "data", "text", "raw", "url", "mediaType",
    "metadata", "taskId", "contextId", "skill", "arguments", "idempotencyKey", "configuration",
    "historyLength", "acceptedOutputModes", "returnImmediately", "id", "pageSize", "pageToken",
    "status", "statusTimestampAfter", "includeArtifacts", "tenant", "extensions",
    "taskPushNotificationConfig", "referenceTaskIds",
]  # fmt: skip
ENUMS = ["ROLE_USER", "ROLE_AGENT", "ROLE_UNSPECIFIED", "TASK_STATE_COMPLETED", "application/json"]
SKILLS = ["mcptest_whoami", "mcptest_record_note", "cluck_list_flocks", "no_such_skill"]
# Text as it comes, and the strings no store can keep (NUL, a lone surrogate), and long ones.
text = st.text(max_size=12) | st.sampled_from(["", "a\x00b", "x\ud800", "t" * 300])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
    | st.sampled_from(ENUMS + SKILLS)
)
keys = st.sampled_from(FIELDS) | text
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=4),
    max_leaves=10,
)
part = st.fixed_dictionaries(
    {},
    optional={
        "data": st.fixed_dictionaries(
            {"skill": st.sampled_from(SKILLS)}, optional={"arguments": json_values}
        )
        | json_values,
        "text": text,
        "mediaType": st.sampled_from(["application/json", "text/plain", ""]),
        "metadata": json_values,
    },
)
message = st.fixed_dictionaries(
    {"messageId": text, "role": st.sampled_from(ENUMS)},
    optional={
        "parts": st.lists(part, max_size=2),
        "metadata": st.dictionaries(keys, json_values, max_size=2),
        "taskId": text,
        "contextId": text,
    },
)
params = (
    st.dictionaries(keys, json_values, max_size=5)
    | st.fixed_dictionaries({"message": message}, optional={"configuration": json_values})
    | st.fixed_dictionaries({"id": text}, optional={"historyLength": scalars})
)


@pytest.fixture
def owner(a2a_client: Any) -> A2AClient:
    client: A2AClient = a2a_client("Owner")
    return client


@mutation("a2a_tools/params.py", find="where = _unstorable(params)", replace="where = None")
@pytest.mark.parametrize("method", sorted(METHODS))
@override_settings(MCP_TOOLS_RATE="1000000/m")
def test_any_params_get_a_result_or_a_stable_error_never_a_500(
    owner: A2AClient, method: str
) -> None:
    """Mutation: drop the ``_unstorable`` check from ``parse_params`` → red (a lone surrogate
    reaches protobuf's parser, a NUL PostgreSQL: a 500)."""

    @settings(
        max_examples=EXAMPLES,
        derandomize=DERANDOMIZE,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(params=params)
    def check(params: dict[str, Any]) -> None:
        response = owner.message(method, params)
        assert response.status_code == 200, (response.status_code, response.content[:300])
        reply = json.loads(response.content)
        if "error" in reply:
            assert reply["error"]["code"] in STABLE_CODES, reply

    check()
