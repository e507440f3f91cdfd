"""The authorization code flow in process: consent for one membership, tokens bound to it."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import FarmFactory, MembershipFactory
from tests.tenancy.oauth.flow import grant_tokens, mcp, refresh

pytestmark = pytest.mark.django_db


def test_an_approved_grant_lists_and_calls_the_farms_tools_as_the_member():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    assert tokens["access_token"].startswith("ck_oat_")
    assert tokens["refresh_token"].startswith("ck_ort_")
    assert tokens["expires_in"] == 3600
    listed = mcp(Client(), tokens["access_token"], "tools/list")
    assert listed.status_code == 200, listed.content
    names = {tool["name"] for tool in listed.json()["result"]["tools"]}
    assert "cluck_list_flocks" in names
    me = mcp(Client(), tokens["access_token"], "tools/call", {"name": "cluck_list_flocks"})
    assert me.status_code == 200 and not me.json()["result"]["isError"], me.content
    renewed = refresh(Client(), tokens["client_id"], tokens["refresh_token"])
    assert renewed.status_code == 200, renewed.content
    assert mcp(Client(), renewed.json()["access_token"], "tools/list").status_code == 200
    assert mcp(Client(), tokens["access_token"], "tools/list").status_code == 401
