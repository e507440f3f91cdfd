"""The shop's own tests of its MCP tools: in-process, no server, no token
(mcp_tools.testing.client).

Run from the shop's directory: ``pytest catalog/tests.py --ds=shop.settings`` (pytest-django;
the toolkit's pytest plugin provides ``mcp_client_for`` and ``mcp_era``).
"""

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from mcp_tools.testing.client import (
    MCPClient,
    assert_replays_once,
    assert_tenant_isolated,
    assert_tool_invisible,
)

from catalog.models import Product, Store

# Tools run in worker threads with their own connections: the test's rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def corner() -> Store:
    return Store.objects.create(code="corner", name="Corner Shop")


@pytest.fixture
def member(mcp_client_for: Callable[..., MCPClient], mcp_era: str) -> Callable[..., MCPClient]:
    """``member(store, email, role)`` → a client acting as that member, in each era."""

    def make(store: Store, email: str, role: str) -> MCPClient:
        call_command("add_member", tenant=store.code, email=email, role=role, verbosity=0)
        user = get_user_model().objects.get(email=email)
        return mcp_client_for(user=user, tenant=store, era=mcp_era)

    return make


def test_a_member_lists_this_stores_products(corner: Store, member: Any) -> None:
    Product.all_tenants.create(store=corner, name="Tea", price="4.50")
    client = member(corner, "clerk@corner.example", "ReadOnly")
    result = client.call_tool("shop_list_products")
    assert not result.is_error
    assert [(p["name"], p["price"]) for p in result.structured["products"]] == [("Tea", "4.50")]


def test_a_read_only_member_never_sees_add_product(corner: Store, member: Any) -> None:
    clerk = member(corner, "clerk@corner.example", "ReadOnly")
    assert_tool_invisible(clerk, "shop_add_product")


def test_another_stores_products_never_appear(corner: Store, member: Any) -> None:
    harbour = Store.objects.create(code="harbour", name="Harbour Stores")
    Product.all_tenants.create(store=harbour, name="Harbour Rope", price="9.00")
    Product.all_tenants.create(store=corner, name="Tea", price="4.50")
    owner = member(corner, "owner@corner.example", "Admin")
    assert_tenant_isolated(owner, "shop_list_products", foreign=["Harbour Rope"])


def test_adding_a_product_replays_once(corner: Store, member: Any) -> None:
    owner = member(corner, "owner@corner.example", "Admin")
    replay = assert_replays_once(owner, "shop_add_product", {"name": "Tea", "price": "4.50"})
    assert replay.structured["product"]["name"] == "Tea"


def test_a_taken_name_is_a_tool_error(corner: Store, member: Any) -> None:
    Product.all_tenants.create(store=corner, name="Tea", price="4.50")
    owner = member(corner, "owner@corner.example", "Admin")
    result = owner.call_tool(
        "shop_add_product", {"name": "Tea", "price": "5.00"}, idempotency_key="k"
    )
    assert result.error_code == "Product.NameTaken"


def test_an_invalid_price_never_reaches_the_tool(corner: Store, member: Any) -> None:
    owner = member(corner, "owner@corner.example", "Admin")
    result = owner.call_tool(
        "shop_add_product", {"name": "Tea", "price": "-1"}, idempotency_key="k"
    )
    assert result.error_code == "Tool.InvalidArguments"
