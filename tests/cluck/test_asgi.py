"""The project's ASGI handler: the synchronous middleware chain runs in one thread per request."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from asgiref.sync import iscoroutinefunction

from cluck.asgi import SyncMiddlewareASGIHandler, application
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.testapps.idem.models import SideEffect


def test_the_middleware_chain_is_built_synchronous() -> None:
    """Mutation: drop the ``load_middleware`` override (Django's async chain, one thread hop
    per middleware method) → red."""
    assert isinstance(application, SyncMiddlewareASGIHandler)
    assert not iscoroutinefunction(application._middleware_chain)


@pytest.mark.django_db(transaction=True)
def test_an_async_view_is_served_inside_the_idempotent_unit_over_asgi() -> None:
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
