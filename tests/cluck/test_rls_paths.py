"""Row-level security on the other paths tool code runs on (issue 35): the in-process
``MCPClient`` in both eras, ``manage.py mcp_call``, an A2A skill, a ``drf_tool``, and a task
run by each engine's worker (``manage.py db_worker``, ``manage.py rqworker``). The careless
read sees only its farm."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from cluck.devredis import redis_server
from mcp_tools.testing.client import ERAS, MCPClient
from tests.a2a_tools.conftest import A2AClient, artifact_data
from tests.careless import seen_only
from tests.cluck.test_rls import two_farms
from tests.factories import bearer_for
from tests.mcp_tools.test_task_engine import Engine, _create, _settled
from tests.mutations import mutation

pytestmark = [pytest.mark.postgres]


def _mcp_call(member: Any, era: str) -> Any:
    out = io.StringIO()
    call_command(
        "mcp_call",
        "rls_careless_read",
        *("--tenant", member.tenant.code, "--email", member.user.email, "--era", era),
        stdout=out,
        stderr=io.StringIO(),
    )
    return json.loads(out.getvalue())  # the structured result, as a client sees it


PATHS = [*(f"MCPClient {era}" for era in ERAS), *(f"mcp_call {era}" for era in ERAS), "A2A"]


def _careless_read(path: str, member: Any) -> Any:
    kind, _, era = path.partition(" ")
    if kind == "MCPClient":
        return MCPClient(membership=member, era=era).call_tool("rls_careless_read").structured
    if kind == "mcp_call":
        return _mcp_call(member, era)
    return artifact_data(A2AClient(bearer_for(member)).task("rls_careless_read"))


@pytest.mark.parametrize("path", PATHS)
@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_sees_only_its_farm_on_every_in_process_path(
    rls_on: None, path: str
) -> None:
    """Mutation: the set_config left out of a read → each path reaches the other farm → red."""
    mine, _, client = two_farms()
    seen_only(_careless_read(path, client.membership), mine.pk)


@pytest.mark.parametrize("era", ERAS)
@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_drf_view_behind_a_drf_tool_sees_only_its_farm(rls_on: None, era: str) -> None:
    """``rls_careless_drf_read`` publishes a REST view whose queryset forgets the tenant; the
    view runs on the tool's worker thread, in the read's transaction under the tools' role.

    Mutation: the set_config left out of a read → the view's queryset reaches the other farm
    → red."""
    mine, _, client = two_farms()
    reply = MCPClient(membership=client.membership, era=era).call_tool("rls_careless_drf_read")
    assert reply.structured == {"farms": [mine.pk], "count": 2}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.mark.e2e
@pytest.mark.parametrize("engine_name", ["db", "rq"])
@mutation(
    "mcp_tools/tasks/run.py",
    find="if rls.enabled() and connection.in_atomic_block:",
    replace="if False:",
)
@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_task_on_each_engine_worker_sees_only_its_farm(
    rls_on: None, redis_url: str, engine_name: str
) -> None:
    """The task is created over /mcp by a server and run by the engine's worker
    (``db_worker``, or ``rqworker`` on Redis), both processes with ``CLUCK_RLS=1``: the
    worker's run of the tool takes the role on its own connection.

    Mutation: the set_config left out of a read → the worker's run reaches the other farm
    → red; the task's progress written inside the read's read-only transaction → the task
    fails → red."""
    mine, _, client = two_farms()
    bearer = client.bearer
    assert bearer is not None
    with tempfile.TemporaryDirectory(prefix="cluck-rls-task-") as where:
        engine = Engine(engine_name, redis_url, Path(where))
        engine.env["CLUCK_RLS"] = "1"
        with engine.server() as url, engine.worker():
            task_id = _create(url, bearer, "rls_careless_task_read", {})
            task = _settled(url, bearer, task_id)
    assert task["status"] == "completed", task
    seen_only(task["result"]["structuredContent"], mine.pk)
