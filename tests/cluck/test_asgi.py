"""The project's ASGI handler: the synchronous middleware chain runs in one thread per request."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from asgiref.sync import iscoroutinefunction

from mcp_tools.serving.asgi import SyncMiddlewareASGIHandler
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import mutation
from tests.testapps.idem.models import SideEffect


@pytest.fixture(scope="session")
def application(django_db_setup: Any, django_db_blocker: Any) -> Any:
    """``cluck.asgi.application``, imported once the test database exists: building it runs
    the start-up checks, and row-level security's read the database (tenancy.rls)."""
    with django_db_blocker.unblock():
        from cluck.asgi import application

    return application


async def _get(application: Any, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        return await http.get(path)


@mutation(
    "mcp_tools/serving/asgi.py",
    find=(
        "    def load_middleware(self, is_async: bool = False) -> None:\n"
        "        super().load_middleware(is_async=False)\n"
    ),
    replace="",
)
def test_the_middleware_chain_is_built_synchronous(application: Any) -> None:
    """Mutation: drop the ``load_middleware`` override (Django's async chain, one thread hop
    per middleware method) → red."""
    assert isinstance(application, SyncMiddlewareASGIHandler)
    assert not iscoroutinefunction(getattr(application, "_middleware_chain"))  # noqa: B009


@pytest.mark.django_db(transaction=True)
def test_an_async_view_is_served_inside_the_idempotent_unit_over_asgi(application: Any) -> None:
    """Tracked write to an async view over real ASGI: runs once, the retry replays.

    The view's ``sync_to_async`` write must land on the request's thread (inside the unit's
    transaction) for the replay to find the published result.
    """
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    headers = {"Authorization": f"Bearer {bearer_for(membership)}", "Idempotency-Key": "asgi-1"}

    async def post_twice() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return [
                await http.post("/idem-test/async/", json={}, headers=headers) for _ in range(2)
            ]

    first, again = asyncio.run(post_twice())
    assert first.status_code == 201, first.text
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    effects: list[Any] = list(SideEffect.objects.values_list("label", flat=True))
    assert effects == ["async"]


@mutation(
    "mcp_tools/serving/asgi.py",
    find="sync_to_async(self._serve, thread_sensitive=False, executor=self.request_threads)",
    replace="sync_to_async(self._serve, thread_sensitive=True)",
)
@pytest.mark.parametrize("view", ["sync", "async"])
def test_requests_run_in_the_request_thread_pool(application: Any, view: str) -> None:
    """Sync views, and the sync work of async views, run in a long-lived request thread.

    Mutation: run ``_serve`` with ``thread_sensitive=True`` and no executor (no per-request
    context here, so asgiref's one process-wide thread) → red.
    """
    names = {
        asyncio.run(_get(application, f"/asgi-probe/{view}/")).json()["thread"] for _ in range(3)
    }
    assert all(name.startswith("request") for name in names), names


@mutation(
    "cluck/settings.py",
    find='_options["prepare_threshold"] = _prepare_threshold()',
    replace='_options["prepare_threshold"] = 5',
)
@pytest.mark.postgres
@pytest.mark.django_db
def test_nothing_is_prepared_on_postgresql_unless_the_operator_opts_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Named prepared statements live in one server session, which a pooler in transaction
    mode does not give a connection (issue 22): by default the hot token check, run many
    times on one connection, leaves none; ``CLUCK_DB_PREPARE_THRESHOLD`` opts back in.

    Mutation: prepare after five runs again in cluck/settings.py → red (a prepared statement).
    """
    from django.db import connection

    from cluck.settings import _prepare_threshold
    from tenancy.tokens import check_token

    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    raw = bearer_for(membership)
    for _ in range(8):
        check_token(raw)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%tenancy_accesstoken%"],
        )
        assert cursor.fetchone()[0] == 0
    assert _prepare_threshold() is None
    monkeypatch.setenv("CLUCK_DB_PREPARE_THRESHOLD", "5")
    assert _prepare_threshold() == 5


@mutation(
    "mcp_tools/serving/asgi.py",
    find=(
        "        if declared is not None and declared > limit:\n"
        "            await self._refuse(send, *too_large(limit), jsonrpc)\n"
        "            return\n"
    ),
    replace="",
)
def test_a_declared_oversized_body_is_refused_before_the_handler_reads_it(
    application: Any,
) -> None:
    """``Content-Length`` over the route's cap: 413 without a single ``receive`` call, so the
    body is neither read nor spooled to a temporary file, and the connection is closed.

    Mutation: drop the ``declared > limit`` refusal in ``SyncMiddlewareASGIHandler.handle``
    → red (Django's ``read_body`` calls ``receive``).
    """
    received: list[Any] = []
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        received.append(1)
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"content-length", b"52428800"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
    }
    asyncio.run(application(scope, receive, send))
    assert received == []
    assert sent[0]["status"] == 413
    assert (b"connection", b"close") in sent[0]["headers"]
