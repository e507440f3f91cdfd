"""Who may call each commerce route, and that other farms' ids read exactly like missing ones.

The expected outcome of the role matrix comes from the policy table of the brief (§5.6),
written out here — not from the views' permission classes, which are what is under test.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cluck.caller import Caller
from cluck.models import Customer, Farm, SalesOrder
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from tests.factories import (
    CustomerFactory,
    FarmFactory,
    SaleGradeFactory,
    sellable_lot,
    token_client,
    write_headers,
)

# Brief §5.6, by effective role. Stored names: Owner = "Admin", Worker = no role at all.
STORED_ROLES = {
    "Owner": ["Admin"],
    "Manager": ["Manager"],
    "Sales": ["Sales"],
    "Worker": [],
    "ReadOnly": ["ReadOnly"],
}
POLICY_ADMITS = {
    "SalesFlow": {"Owner", "Manager", "Sales", "Worker"},
    "SalesAccess": {"Owner", "Manager", "Sales"},
}


@dataclass
class World:
    farm: Farm
    customer: Customer
    grade_id: int
    draft: SalesOrder
    confirmed: SalesOrder


def build_world(farm: Farm | None = None) -> World:
    farm = farm or FarmFactory.create()
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today() - dt.timedelta(days=2))
    customer = CustomerFactory.create(farm=farm)
    caller = Caller.system(farm, label="test:world")
    draft = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=10)],
    )
    confirmed = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=20, unit_price="10.00")],
    )
    sales_order_confirm(caller=caller, order_id=confirmed.pk)
    return World(farm, customer, grade.pk, draft, confirmed)


Call = Callable[[APIClient, World], Any]


def _post(url: str, body: dict[str, Any] | None = None) -> Any:
    return lambda client: client.post(url, body or {}, format="json", **write_headers())


ROUTES: dict[str, tuple[str, int, Call]] = {
    "customer-list": ("SalesFlow", 200, lambda c, w: c.get(reverse("customer-list"))),
    "customer-create": (
        "SalesFlow",
        201,
        lambda c, w: _post(reverse("customer-create"), {"name": "Aling Nena", "phone": "0917"})(c),
    ),
    "customer-balance-list": (
        "SalesAccess",
        200,
        lambda c, w: c.get(reverse("customer-balance-list")),
    ),
    "customer-detail": (
        "SalesFlow",
        200,
        lambda c, w: c.get(reverse("customer-detail", args=[w.customer.pk])),
    ),
    "sales-order-list": ("SalesFlow", 200, lambda c, w: c.get(reverse("sales-order-list"))),
    "sales-order-create": (
        "SalesFlow",
        201,
        lambda c, w: _post(
            reverse("sales-order-create"),
            {"customerId": w.customer.pk, "lines": [{"eggGradeId": w.grade_id, "quantity": 5}]},
        )(c),
    ),
    "sales-order-detail": (
        "SalesFlow",
        200,
        lambda c, w: c.get(reverse("sales-order-detail", args=[w.draft.pk])),
    ),
    "sales-order-confirm": (
        "SalesFlow",
        200,
        lambda c, w: _post(reverse("sales-order-confirm", args=[w.draft.pk]))(c),
    ),
    "order-payment-list": (
        "SalesAccess",
        200,
        lambda c, w: c.get(reverse("order-payment-list", args=[w.confirmed.pk])),
    ),
    "payment-record": (
        "SalesAccess",
        201,
        lambda c, w: _post(
            reverse("payment-record", args=[w.confirmed.pk]),
            {"amount": "50.00", "method": "Cash"},
        )(c),
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("role", list(STORED_ROLES))
@pytest.mark.parametrize("route", list(ROUTES))
def test_each_role_is_admitted_exactly_as_the_route_policy_says(route: str, role: str) -> None:
    policy, success, call = ROUTES[route]
    world = build_world()
    client = token_client(roles=STORED_ROLES[role], farm=world.farm)

    response = call(client, world)

    if role in POLICY_ADMITS[policy]:
        assert response.status_code == success, response.content
    else:
        assert response.status_code == 403, response.content
        assert response.json()["code"] == "Auth.Forbidden"


def test_every_commerce_route_is_in_the_matrix() -> None:
    from cluck.api import commerce_urls

    names = {p.name for p in commerce_urls.urlpatterns}
    assert names == set(ROUTES)


def test_unauthenticated_calls_get_401(db: Any, api_client: APIClient) -> None:
    world = build_world()
    for route, (_, _, call) in ROUTES.items():
        response = call(api_client, world)
        assert response.status_code == 401, route


# --- cross-farm ----------------------------------------------------------------------------

MISSING_ID = 9_000_000_000


def _foreign_vs_missing(client: APIClient, send: Callable[[int], Any], foreign_id: int) -> None:
    foreign = send(foreign_id)
    missing = send(MISSING_ID)
    assert foreign.status_code == missing.status_code, foreign.content
    assert foreign.json() == missing.json()


@pytest.fixture
def two_farms(db: Any) -> tuple[World, APIClient, World]:
    """Farm A's world, and an Owner client of farm B (which has a world of its own)."""
    sunrise = build_world(FarmFactory.create(code="sunrise-x"))
    hillside = build_world(
        FarmFactory.create(code="hillside-x", currency_code="JPY", currency_minor_unit=0)
    )
    client = token_client(roles=["Admin"], farm=hillside.farm)
    return sunrise, client, hillside


@pytest.mark.parametrize(
    "route",
    ["customer-detail", "sales-order-detail", "order-payment-list"],
)
def test_reading_another_farms_id_is_indistinguishable_from_a_missing_id(
    route: str, two_farms: tuple[World, APIClient, World]
) -> None:
    sunrise, client, _ = two_farms
    foreign = sunrise.customer.pk if route == "customer-detail" else sunrise.confirmed.pk
    _foreign_vs_missing(client, lambda i: client.get(reverse(route, args=[i])), foreign)
    assert client.get(reverse(route, args=[foreign])).status_code == 404


def test_confirming_another_farms_order_reads_as_missing_and_changes_nothing(
    two_farms: tuple[World, APIClient, World],
) -> None:
    sunrise, client, _ = two_farms
    url = lambda i: reverse("sales-order-confirm", args=[i])  # noqa: E731
    _foreign_vs_missing(client, lambda i: _post(url(i))(client), sunrise.draft.pk)
    sunrise.draft.refresh_from_db()
    assert sunrise.draft.status == SalesOrder.Status.DRAFT


def test_paying_another_farms_order_reads_as_missing(
    two_farms: tuple[World, APIClient, World],
) -> None:
    sunrise, client, _ = two_farms
    body = {"amount": "1", "method": "Cash"}
    send = lambda i: _post(reverse("payment-record", args=[i]), body)(client)  # noqa: E731
    _foreign_vs_missing(client, send, sunrise.confirmed.pk)
    assert not sunrise.confirmed.payments.exists()


def test_ordering_for_another_farms_customer_or_grade_reads_as_missing(
    two_farms: tuple[World, APIClient, World],
) -> None:
    sunrise, client, hillside = two_farms

    def for_customer(customer_id: int) -> Any:
        body = {
            "customerId": customer_id,
            "lines": [{"eggGradeId": hillside.grade_id, "quantity": 1}],
        }
        return _post(reverse("sales-order-create"), body)(client)

    def for_grade(grade_id: int) -> Any:
        body = {
            "customerId": hillside.customer.pk,
            "lines": [{"eggGradeId": grade_id, "quantity": 1}],
        }
        return _post(reverse("sales-order-create"), body)(client)

    _foreign_vs_missing(client, for_customer, sunrise.customer.pk)
    assert for_customer(sunrise.customer.pk).json()["code"] == "Customer.NotFound"
    _foreign_vs_missing(client, for_grade, sunrise.grade_id)
    assert for_grade(sunrise.grade_id).json()["errors"][0]["code"] == "EggGrade.NotFound"


@pytest.mark.parametrize("route", ["customer-list", "sales-order-list", "customer-balance-list"])
def test_lists_show_only_the_callers_farm(
    route: str, two_farms: tuple[World, APIClient, World]
) -> None:
    sunrise, client, hillside = two_farms
    items = client.get(reverse(route)).json()["items"]
    assert items
    if route == "sales-order-list":
        assert {i["id"] for i in items} == {hillside.draft.pk, hillside.confirmed.pk}
        assert all(i["total"]["currency"] == "JPY" for i in items)
    else:
        key = "id" if route == "customer-list" else "customerId"
        assert {i[key] for i in items} == {hillside.customer.pk}
    assert sunrise.customer.name not in str(items)


def test_a_created_customer_belongs_to_the_callers_farm_only(
    two_farms: tuple[World, APIClient, World],
) -> None:
    sunrise, client, hillside = two_farms
    created = _post(reverse("customer-create"), {"name": "Only Hillside", "phone": "1"})(client)
    assert created.status_code == 201
    sunrise_client = token_client(roles=["Admin"], farm=sunrise.farm)
    foreign = sunrise_client.get(reverse("customer-detail", args=[created.json()["id"]]))
    missing = sunrise_client.get(reverse("customer-detail", args=[MISSING_ID]))
    assert foreign.status_code == 404
    assert foreign.json() == missing.json()
    assert Customer.all_tenants.get(pk=created.json()["id"]).farm_id == hillside.farm.pk
