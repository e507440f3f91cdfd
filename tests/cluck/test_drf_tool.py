"""The farm's REST stock view published with ``drf_tool`` next to the hand-written tools."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.cluck.mcp_helpers import Tools, demo_bearer, sunrise

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

USERS = ("owner@sunrise.example", "worker@sunrise.example", "owner@hillside.example")


@pytest.fixture(scope="module")
def bearers(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, str]]:
    """The demo farms, committed once (tools read on their worker threads' connections)."""
    with django_db_blocker.unblock():
        call_command("seed_demo", verbosity=0)
        yield {email: demo_bearer(email) for email in USERS}
        call_command("flush", interactive=False, verbosity=0)


def _rest(bearer: str, **params: str) -> Any:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
    response = client.get("/api/v1/stock/", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_stock_tool_answers_what_the_rest_view_answers(bearers: dict[str, str]) -> None:
    for email in USERS:
        tools = Tools(bearers[email])
        assert "cluck_stock_summary" in tools.names()
        assert tools.ok("cluck_stock_summary") == _rest(bearers[email]), email
    day = (sunrise().today() - dt.timedelta(days=3)).isoformat()
    owner = Tools(bearers["owner@sunrise.example"])
    dated = owner.ok("cluck_stock_summary", {"asOfDate": day})
    assert dated["asOfDate"] == day
    assert dated == _rest(bearers["owner@sunrise.example"], asOfDate=day)


def test_the_stock_tool_refuses_what_the_view_refuses(bearers: dict[str, str]) -> None:
    owner = Tools(bearers["owner@sunrise.example"])
    assert owner.error("cluck_stock_summary", {"asOfDate": "soon"})["code"] == (
        "Tool.InvalidArguments"
    )
    assert owner.error("cluck_stock_summary", {"as_of_date": "2026-01-01"})["code"] == (
        "Tool.InvalidArguments"
    )
