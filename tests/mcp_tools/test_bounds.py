"""Concurrency limit and call deadline: stable JSON-RPC errors; a slot outlives its timeout.

Tiny budgets (fractions of a second) because these bounds are about time.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest
from django.db import connection
from django.test import override_settings

from mcp_tools import execution
from tests.mutations import Edit, mutation
from tests.testapps.mcp_fixtures import controls

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _released_afterwards():
    controls.release.clear()
    yield
    controls.release.set()
    _wait_for(lambda: execution.slots.in_use == 0)


def _wait_for(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@mutation(
    "mcp_tools/execution/bounds.py",
    find="            if self.in_use >= limit or self._waiters:\n                return False\n",
    replace="",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1)
def test_a_call_beyond_the_concurrency_limit_is_overloaded(mcp_client):
    """Mutation: make ``_Slots.try_acquire`` always succeed → red."""
    blocked_client, other = mcp_client(), mcp_client()
    outcome = {}

    def blocked_call():
        try:
            outcome["r"] = blocked_client.call("mcptest_block")
        finally:
            connection.close()  # the test client keeps this thread's connection open

    thread = threading.Thread(target=blocked_call)
    thread.start()
    _wait_for(lambda: execution.slots.in_use == 1)
    refused = other.call("mcptest_whoami")
    assert refused["error"]["code"] == execution.OVERLOADED
    controls.release.set()
    thread.join(10)
    assert outcome["r"]["result"]["structuredContent"]["released"] is True
    assert other.call("mcptest_whoami")["result"]["isError"] is False


@mutation(
    Edit(
        "mcp_tools/execution/bounds.py",
        find="                close_old_connections()\n                hold.returned()\n",
        replace="                close_old_connections()\n",
    ),
    Edit(
        "mcp_tools/execution/bounds.py",
        find="        value, error = await asyncio.shield(done)\n",
        replace="        value, error = await asyncio.shield(done)\n        slots.release()\n",
    ),
    Edit(
        "mcp_tools/execution/bounds.py",
        find="    except TimeoutError:\n        raise _timed_out(timeout) from None\n    finally:",
        replace=(
            "    except TimeoutError:\n"
            "        slots.release()\n"
            "        raise _timed_out(timeout) from None\n    finally:"
        ),
    ),
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_CALL_TIMEOUT_SECONDS=0.3)
def test_a_timed_out_tool_keeps_its_slot_until_it_really_returns(mcp_client):
    """The deadline answers the client; the thread still runs and still holds its slot.

    Mutation: release the slot in ``run_bounded`` on timeout instead of in the worker
    thread's ``finally`` → red (the follow-up call would run instead of being overloaded).
    """
    client = mcp_client()
    started = time.monotonic()
    timed_out = client.call("mcptest_block", {"maxSeconds": 10})
    assert timed_out["error"]["code"] == execution.TIMED_OUT
    assert time.monotonic() - started < 5
    assert execution.slots.in_use == 1
    assert client.call("mcptest_whoami")["error"]["code"] == execution.OVERLOADED
    controls.release.set()
    _wait_for(lambda: execution.slots.in_use == 0)
    assert client.call("mcptest_whoami")["result"]["isError"] is False


def _holding_the_only_slot(mcp_client):
    """Start ``mcptest_block`` in a thread and wait until it holds the slot."""
    holder = mcp_client()
    outcome = {}

    def blocked_call():
        try:
            outcome["r"] = holder.call("mcptest_block")
        finally:
            connection.close()

    thread = threading.Thread(target=blocked_call)
    thread.start()
    _wait_for(lambda: execution.slots.in_use == 1)
    return thread, outcome


@mutation(
    "mcp_tools/rpc/replies.py",
    find="    if retry_after is None:\n        return refused\n",
    replace="    return refused\n",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_OVERLOAD_RETRY_AFTER_MS=2000)
def test_an_overloaded_refusal_carries_a_retry_hint(mcp_client):
    """``Retry-After`` on the response and ``retryAfterMs`` (jittered ±50 %) in the error data.

    Mutation: drop the ``Retry-After`` header from the refusal in ``replies.bound_refusal``
    → red.
    """
    thread, _ = _holding_the_only_slot(mcp_client)
    refused = mcp_client().message(
        "tools/call", {"name": "mcptest_whoami"}, **{"MCP-Protocol-Version": "2025-11-25"}
    )
    error = refused.json()["error"]
    assert error["code"] == execution.OVERLOADED
    assert 1000 <= error["data"]["retryAfterMs"] <= 3000
    assert int(refused["Retry-After"]) == error["data"]["retryAfterSeconds"] >= 1
    controls.release.set()
    thread.join(10)


@mutation(
    "mcp_tools/execution/bounds.py",
    find='slots.acquire(limit, float(conf.get("SLOT_WAIT_SECONDS")))',
    replace="slots.acquire(limit, 0)",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_SLOT_WAIT_SECONDS=10)
def test_a_call_waits_for_a_slot_within_the_bound(mcp_client):
    """Mutation: call ``slots.acquire(limit, 0)`` in ``run_bounded`` (ignore the wait bound)
    → red (the waiting call is refused at once)."""
    thread, outcome = _holding_the_only_slot(mcp_client)
    waited = {}

    def waiting_call():
        try:
            waited["r"] = mcp_client().call("mcptest_whoami")
        finally:
            connection.close()

    waiter = threading.Thread(target=waiting_call)
    waiter.start()
    _wait_for(lambda: execution.slots.waiting == 1)
    assert "r" not in waited
    controls.release.set()
    thread.join(10)
    waiter.join(10)
    assert outcome["r"]["result"]["structuredContent"]["released"] is True
    assert waited["r"]["result"]["isError"] is False
    _wait_for(lambda: execution.slots.in_use == 0)


@mutation(
    "mcp_tools/execution/bounds.py",
    find="            if isinstance(exc, TimeoutError):\n                return handed\n",
    replace="            if isinstance(exc, TimeoutError):\n                return True\n",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1, MCP_TOOLS_SLOT_WAIT_SECONDS=0.2)
def test_a_call_still_waiting_at_the_bound_is_overloaded_and_leaves_no_slot_behind(mcp_client):
    """Mutation: in ``_Slots.acquire``, answer ``True`` when the wait times out → red (the
    call runs past the limit, and a slot too many is counted)."""
    thread, _ = _holding_the_only_slot(mcp_client)
    started = time.monotonic()
    refused = mcp_client().call("mcptest_whoami")
    assert refused["error"]["code"] == execution.OVERLOADED
    assert time.monotonic() - started >= 0.2
    assert execution.slots.in_use == 1
    controls.release.set()
    thread.join(10)
    _wait_for(lambda: execution.slots.in_use == 0)


@mutation(
    "mcp_tools/execution/bounds.py",
    find="            if self.draining >= limit:\n                return False\n",
    replace="",
)
@override_settings(MCP_TOOLS_MAX_CONCURRENT_CALLS=1)
def test_a_cancelled_call_frees_its_slot_only_while_the_draining_pool_has_room():
    """A cancelled call's slot is freed at once, its still-running thread counted as draining;
    with the draining pool (as large as the slots) full, the next cancelled call keeps its
    slot, so threads in use never exceed twice the limit. Both return to zero.

    Mutation: drop the draining pool's bound → red (the second cancelled call frees a slot
    too: three threads for a limit of one).
    """

    async def cancelled_while_blocked() -> None:
        call = asyncio.ensure_future(execution.run_bounded(lambda: controls.release.wait(10)))
        await asyncio.sleep(0)  # it takes its slot and hands the work to a thread
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call

    asyncio.run(cancelled_while_blocked())
    assert (execution.slots.in_use, execution.slots.draining) == (0, 1)
    asyncio.run(cancelled_while_blocked())
    assert (execution.slots.in_use, execution.slots.draining) == (1, 1)
    controls.release.set()
    _wait_for(lambda: (execution.slots.in_use, execution.slots.draining) == (0, 0))


@mutation(
    "mcp_tools/call/cancellation.py",
    find="            raise RequestCancelled() from None\n",
    replace="            raise\n",
)
@mutation(
    "mcp_tools/call/cancellation.py",
    find="    finally:\n        _remove(call_key, call)\n",
    replace="    finally:\n        pass\n",
)
def test_notifications_cancelled_reaches_a_call_awaited_for_a_json_answer():
    """Handshake era, no stream: the call awaited by its request (``cancellation.run``) is
    cancelled by the member's notification; the tool is told, the slot freed, the request
    answered ``RequestCancelled`` (-32800), and the id is forgotten once the call is over.

    Mutations: the request sees a bare ``CancelledError`` (as if it had been cancelled itself)
    → red; the finished call stays registered → red (a later notification still finds it).
    """
    from mcp_tools.call import cancellation

    told = threading.Event()

    async def scenario() -> None:
        call = asyncio.ensure_future(
            cancellation.run(
                execution.run_bounded(lambda: controls.release.wait(10), on_cancel=told.set),
                tenant_id=1,
                user_id=2,
                request_id=7,
            )
        )
        await asyncio.sleep(0.05)  # registered, its slot taken, its work in a thread
        assert not cancellation.cancel_notified(1, 3, {"requestId": 7})  # another member
        assert not cancellation.cancel_notified(1, 2, {"requestId": "7"})  # another id
        assert cancellation.cancel_notified(1, 2, {"requestId": 7})
        with pytest.raises(cancellation.RequestCancelled):
            await call
        assert not cancellation.cancel_notified(1, 2, {"requestId": 7})

    asyncio.run(scenario())
    assert told.is_set()
    assert (execution.slots.in_use, execution.slots.draining) == (0, 1)
    controls.release.set()
    _wait_for(lambda: (execution.slots.in_use, execution.slots.draining) == (0, 0))
