"""One key rule on both adapters (issue 12, item 8): the ``Idempotency-Key`` header of a REST
write and the ``idempotencyKey`` argument of an MCP write tool accept exactly the same keys, and
the tool's published ``inputSchema`` says so.

Both record the same day through their own channel (``POST /api/v1/daily-entries/`` and
``cluck_record_daily_entry``, its mirror) with each candidate key.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from rest_framework.test import APIClient

from cluck.models import AuditEvent
from mcp_tools.authoring.registry import default_registry
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_ALIAS
from tests.cluck.mcp_helpers import Tools
from tests.factories import FlockFactory, MembershipFactory, bearer_for, provisioned_farm
from tests.mutations import mutation

# MCP tools run in worker threads on their own connections: what they read must be committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

KEYS = {
    "empty": "",
    "space": " ",
    "spaces": "   ",
    "tab": "\t",
    "inner space": "a b",
    "leading space": " abc",
    "trailing space": "abc ",
    "uuid": str(uuid.UUID(int=7)),
    "agent style": "agent-run-4f2c-1",
    "every visible ascii": "".join(chr(c) for c in range(0x21, 0x7F)),
    "255 characters": "k" * 255,
    "256 characters": "k" * 256,
    "non-ascii": "ключ-1",
    "latin-1": "clé",
    "control": "key\x01",
    "delete": "key\x7f",
    "nul": "key\x00",
}


def _key_schema() -> dict[str, Any]:
    spec = next(s for s in default_registry.specs() if s.name == "cluck_record_daily_entry")
    return dict(spec.input_schema["properties"][IDEMPOTENCY_KEY_ALIAS])


@pytest.fixture
def channels() -> Any:
    farm = provisioned_farm()
    flock = FlockFactory.create(farm=farm, placement_date=farm.today() - dt.timedelta(days=30))
    membership = MembershipFactory.create(tenant=farm, roles=["Admin"], user__password=None)
    bearer = bearer_for(membership)
    rest = APIClient()
    rest.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
    return farm, flock, rest, Tools(bearer)


@mutation(
    "idempotency/keys.py",
    find="    if _KEY_RE.fullmatch(raw) is None:",
    replace="    if False:",
)
@mutation(
    "mcp_tools/authoring/rules.py",
    find="            AfterValidator(_check_idempotency_key),\n",
    replace="",
)
@mutation(
    "idempotency/middleware.py",
    find="        problem = key_problem(raw_key)\n",
    replace=(
        "        problem = (\n"
        '            (KEY_REQUIRED, "missing")\n'
        "            if raw_key is None or not raw_key.strip()\n"
        '            else ("Idempotency.KeyInvalid", "too long")\n'
        "            if len(raw_key) > 255\n"
        "            else None\n"
        "        )\n"
    ),
)
@pytest.mark.parametrize("label", list(KEYS))
def test_rest_mcp_and_the_published_schema_accept_the_same_keys(channels: Any, label: str) -> None:
    """Mutations, each seen red: (1) ``key_problem`` without its character check (only blank
    and length, as the REST adapter had) → "a b" and "ключ-1" pass both adapters while the
    schema refuses them; (2) the MCP key field without ``_check_idempotency_key`` (pydantic
    checks type only) → "   " runs the call while REST refuses it; (3) the REST adapter's old
    gate (``not raw_key.strip()`` and length only) → REST accepts what MCP refuses."""
    farm, flock, rest, tools = channels
    key = KEYS[label]
    day = farm.today().isoformat()
    audits = AuditEvent.all_tenants.filter(farm=farm).count()

    response = rest.post(
        "/api/v1/daily-entries/",
        json.dumps(
            {
                "flockId": flock.pk,
                "date": day,
                "totalEggs": 5,
                "crackedEggs": 0,
                "dirtyEggs": 0,
                "mortalityCount": 0,
            }
        ),
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=key,
    )
    rest_accepted = 200 <= response.status_code < 300
    rest_code = None
    if not rest_accepted:
        assert response.status_code == 400, response.content
        rest_code = response.json()["code"]
        assert rest_code in {"Idempotency.KeyRequired", "Idempotency.KeyInvalid"}

    result = tools.result(
        "cluck_record_daily_entry",
        {
            "flock": flock.pk,
            "date": day,
            "totalEggs": 5,
            "crackedEggs": 0,
            "dirtyEggs": 0,
            "mortalityCount": 0,
            IDEMPOTENCY_KEY_ALIAS: key,
        },
    )
    mcp_accepted = result["isError"] is False
    if not mcp_accepted:
        error = json.loads(result["content"][0]["text"])["error"]
        assert error["code"] == "Tool.InvalidArguments"
        (problem,) = error["data"]["errors"]
        assert problem["field"] == IDEMPOTENCY_KEY_ALIAS
        if problem["code"].startswith("Idempotency."):
            assert problem["code"] == rest_code  # the same rule says the same thing

    schema_accepts = Draft202012Validator(_key_schema()).is_valid(key)
    assert rest_accepted == mcp_accepted == schema_accepts, (rest_accepted, mcp_accepted)
    if not rest_accepted:
        assert AuditEvent.all_tenants.filter(farm=farm).count() == audits


def test_a_visible_ascii_key_is_accepted_by_both() -> None:
    """The rule is not so strict that nothing passes (the matrix above would still agree)."""
    from idempotency import key_problem

    assert key_problem(KEYS["uuid"]) is None
    assert key_problem(KEYS["every visible ascii"]) is None
    assert key_problem(KEYS["255 characters"]) is None
