"""The farm behind PgBouncer in transaction mode (issue 22): a real uvicorn server whose
``DATABASE_URL`` is Debian's ``pgbouncer`` (``cluck.devpgbouncer``: ``pool_mode = transaction``,
two server connections shared by every client connection), on the demo farms.

Every path that touches the database runs through it: MCP reads, keyed writes and their
replays, a key reused with other arguments, a concurrent burst of one key (one execution),
domain refusals, a task; A2A skills (a keyed write, a long-running one); REST writes with
``Idempotency-Key`` (replay, conflict); an OAuth access token used on ``/mcp`` and refreshed at
the token endpoint. No reply may be an internal error (HTTP 5xx or JSON-RPC -32603): named
prepared statements or any other session state held across transactions show up here as
``DuplicatePreparedStatement`` / ``InvalidSqlStatementName``.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.core.management import call_command

from cluck.models import Farm as FarmModel
from tests.cluck.mcp_helpers import demo_bearer
from tests.deploy.farm import Farm, record_args, tool_error
from tests.mcp_tools.servers import ServerURL, serve
from tests.mutations import mutation
from tests.tenancy.oauth.flow import grant_tokens

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.postgres,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

BURST = 10
# OAuth tokens granted in this process are bound to http://testserver/mcp (the in-process
# flow's resource); the server is told that is its public URL.
SERVER_ENV = {
    "CLUCK_PUBLIC_URL": "http://testserver",
    "MCP_TOOLS_RATE": "100000/m",
    "TENANCY_API_RATE": "100000/m",
    "LOG_LEVEL": "ERROR",
}


@pytest.fixture
def farm_server(pooled_database_url: str) -> Iterator[ServerURL]:
    call_command("seed_demo", verbosity=0)
    with serve(env={**SERVER_ENV, "DATABASE_URL": pooled_database_url}) as url:
        yield url


def _log(url: ServerURL) -> str:
    url.log.seek(0)
    return str(url.log.read().decode(errors="replace"))[-3000:]


def _mcp_story(farm: Farm, day: dt.date) -> dict[str, Any]:
    flocks = farm.call("cluck_list_flocks", {})
    ambiguous = farm.call(
        "cluck_record_daily_entry", {**record_args(day, "House 2 Brown"), "idempotencyKey": "a-1"}
    )
    refusal = tool_error(ambiguous)
    active = next(c for c in refusal["data"]["candidates"] if c["status"] == "Active")
    args = {**record_args(day, active["flockId"]), "idempotencyKey": "rec-1"}
    recorded = farm.call("cluck_record_daily_entry", args)
    replayed = farm.call("cluck_record_daily_entry", args)
    reused = farm.call("cluck_record_daily_entry", {**args, "mortalityCount": 3})
    entry = recorded["structuredContent"]["dailyEntryId"]
    submit = {"idempotencyKey": "sub-1", "dailyEntryId": entry}
    submitted = farm.call("cluck_submit_daily_entry", submit)
    # Submitting a submitted entry under a fresh key: the domain refuses it.
    again = farm.call("cluck_submit_daily_entry", {**submit, "idempotencyKey": "sub-2"})
    return {
        "flocks": flocks,
        "refusal": refusal,
        "active": active["flockId"],
        "recorded": recorded["structuredContent"],
        "replayed": replayed["structuredContent"],
        "reused": tool_error(reused),
        "submitted": submitted["structuredContent"],
        "again": tool_error(again),
    }


def _burst(farm: Farm, flock: str, day: dt.date) -> list[dict[str, Any]]:
    """``BURST`` calls of one keyed write at once, each on a client of its own."""
    args = {**record_args(day, flock), "idempotencyKey": f"burst-{uuid.uuid4().hex[:8]}"}

    def one(_: int) -> dict[str, Any]:
        client = Farm(farm.base, farm.http.headers["Authorization"].removeprefix("Bearer "))
        try:
            return client.call("cluck_record_daily_entry", args)
        finally:
            farm.internal_errors += client.internal_errors
            client.close()

    with ThreadPoolExecutor(max_workers=BURST) as pool:
        results = list(pool.map(one, range(BURST)))
    results.append(farm.call("cluck_record_daily_entry", args))  # after the burst: a replay
    return results


def _task(farm: Farm) -> tuple[str, dict[str, Any]]:
    today = dt.date.today()
    report = {"fromDate": str(today - dt.timedelta(days=90)), "toDate": str(today)}
    created = farm.mcp(
        "tools/call",
        {"name": "cluck_production_report", "arguments": report, "task": {"ttl": 60000}},
    )
    assert "result" in created, created
    return farm.task_outcome(created["result"]["task"]["taskId"])


def _a2a(farm: Farm, flock: str, day: dt.date) -> dict[str, Any]:
    args = record_args(day, flock)
    written = farm.skill("cluck_record_daily_entry", args, key="a2a-1")
    replayed = farm.skill("cluck_record_daily_entry", args, key="a2a-1")
    today = dt.date.today()
    report = {"fromDate": str(today - dt.timedelta(days=60)), "toDate": str(today)}
    started = farm.skill("cluck_production_report", report, returnImmediately=True)
    assert "result" in started, started
    task_id = started["result"]["task"]["id"]
    state = ""
    for _ in range(600):
        task = farm.a2a("GetTask", {"id": task_id})
        state = task["result"]["status"]["state"]
        if state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
            break
        time.sleep(0.1)
    return {"written": written, "replayed": replayed, "task_state": state}


def _rest(farm: Farm) -> dict[str, int]:
    key = f"cust-{uuid.uuid4().hex[:8]}"
    body = {"name": key, "phone": "0917"}
    created = farm.rest("POST", "/api/v1/customers/", key=key, json=body)
    replayed = farm.rest("POST", "/api/v1/customers/", key=key, json=body)
    conflict = farm.rest("POST", "/api/v1/customers/", key=key, json={**body, "phone": "0918"})
    assert created.json() == replayed.json(), (created.text, replayed.text)
    listed = farm.rest("GET", "/api/v1/customers/")
    return {
        "created": created.status_code,
        "replayed": replayed.status_code,
        "conflict": conflict.status_code,
        "conflict_code": conflict.json().get("code"),
        "listed": listed.status_code,
    }


def _oauth(url: str) -> dict[str, Any]:
    from tenancy.models import Membership

    owner = Membership.objects.get(user__email="owner@sunrise.example", tenant__code="sunrise")
    tokens = grant_tokens(owner)
    used = Farm(url, tokens["access_token"])
    try:
        flocks = used.call("cluck_list_flocks", {})
    finally:
        used.close()
    refreshed = httpx.post(
        f"{url}/oauth/token/",
        content=urlencode(
            {
                "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"],
                "client_id": tokens["client_id"],
            }
        ),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=30,
    )
    assert refreshed.status_code == 200, refreshed.text
    again = Farm(url, refreshed.json()["access_token"])
    try:
        second = again.call("cluck_list_flocks", {})
    finally:
        again.close()
    return {"first": flocks, "second": second}


@mutation(
    "cluck/settings.py",
    find='_options["prepare_threshold"] = _prepare_threshold()',
    replace='_options["prepare_threshold"] = 1',
)
def test_every_path_of_the_farm_works_behind_pgbouncer_in_transaction_mode(
    farm_server: ServerURL,
) -> None:
    """Mutation: let psycopg prepare statements again (``prepare_threshold = 1`` in
    cluck/settings.py) → red: server sessions are shared between client connections, so a
    statement prepared on one is "already exists" (``DuplicatePreparedStatement``) or "does not
    exist" (``InvalidSqlStatementName``) on the next: internal errors, as issue 22 saw them."""
    farm_model = FarmModel.objects.get(code="sunrise")
    today = farm_model.today()
    farm = Farm(farm_server, demo_bearer("owner@sunrise.example"))
    try:
        story = _mcp_story(farm, today - dt.timedelta(days=20))
        burst = _burst(farm, story["active"], today - dt.timedelta(days=21))
        task_status, task_result = _task(farm)
        a2a = _a2a(farm, story["active"], today - dt.timedelta(days=22))
        rest = _rest(farm)
        oauth = _oauth(farm_server)
    finally:
        farm.close()
    assert farm.internal_errors == [], (farm.internal_errors, _log(farm_server))

    assert story["flocks"]["isError"] is False
    assert story["refusal"]["code"] == "Flock.Ambiguous"
    assert (story["recorded"]["replayed"], story["replayed"]["replayed"]) == (False, True)
    assert story["replayed"]["dailyEntryId"] == story["recorded"]["dailyEntryId"]
    assert story["reused"]["code"] == "Idempotency.KeyReused"
    assert story["submitted"]["status"] == "Submitted"
    assert story["again"]["code"] not in ("Tool.InternalError",), story["again"]

    # The burst: one execution; every other call replayed it or was told to retry.
    done = [r["structuredContent"] for r in burst if not r.get("isError")]
    refused = [tool_error(r)["code"] for r in burst if r.get("isError")]
    assert [d["replayed"] for d in done].count(False) == 1, burst
    assert len({d["dailyEntryId"] for d in done}) == 1, done
    assert set(refused) <= {"Idempotency.InProgress"}, refused
    assert burst[-1].get("isError") is not True and burst[-1]["structuredContent"]["replayed"]

    assert task_status == "completed", task_result
    assert task_result["result"]["isError"] is False, task_result

    assert "result" in a2a["written"] and "result" in a2a["replayed"], a2a
    assert a2a["task_state"] == "TASK_STATE_COMPLETED", a2a

    assert (rest["created"], rest["replayed"], rest["listed"]) == (201, 201, 200), rest
    assert (rest["conflict"], rest["conflict_code"]) == (422, "Idempotency.KeyReused"), rest

    assert oauth["first"]["isError"] is False and oauth["second"]["isError"] is False
