"""Customers: field rules (brief §6.8), the by-name keyset list, and name-or-id resolution."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from cluck.caller import Caller
from cluck.errors import FieldError
from cluck.models import AuditEvent, Customer
from cluck.selectors.customers import (
    CustomerAmbiguousError,
    CustomerNotFoundError,
    customer_list,
    customer_resolve,
)
from cluck.services.customers import customer_create
from tests.factories import CustomerFactory, FarmFactory, token_client, write_headers

pytestmark = pytest.mark.django_db


def create(client: Any, body: Any) -> Any:
    return client.post(reverse("customer-create"), body, format="json", **write_headers())


def test_create_trims_turns_blanks_into_null_and_audits() -> None:
    farm = FarmFactory.create()
    client = token_client(farm=farm, roles=[])  # a Worker may sell, so may add a customer

    response = create(
        client,
        {
            "name": "  Mang Tomas  ",
            "phone": "0917 555 0101",
            "email": " ",
            "address": "",
            "note": None,
        },
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["email"], body["address"], body["note"]) == (
        "Mang Tomas",
        None,
        None,
        None,
    )
    assert client.get(reverse("customer-detail", args=[body["id"]])).json() == body
    audit = AuditEvent.all_tenants.get(action="Customer.Create")
    assert (audit.entity_id, audit.farm_id) == (str(body["id"]), farm.pk)


def test_create_lists_every_failing_field() -> None:
    farm = FarmFactory.create()
    with pytest.raises(FieldError) as raised:
        customer_create(
            caller=Caller.system(farm, label="test"),
            name=" ",
            phone="9" * 51,
            email="not-an-email",
            address="a" * 501,
            note="n" * 1001,
        )
    assert [(e["field"], e["code"]) for e in raised.value.errors] == [
        ("name", "Customer.Name.Required"),
        ("phone", "Customer.Phone.TooLong"),
        ("email", "Customer.Email.Invalid"),
        ("address", "Customer.Address.TooLong"),
        ("note", "Customer.Note.TooLong"),
    ]

    response = create(
        token_client(farm=farm, roles=["Sales"]),
        {"name": "x" * 201, "phone": "", "email": "e" * 250 + "@x.io"},
    )
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert [(e["field"], e["code"]) for e in response.json()["errors"]] == [
        ("name", "Customer.Name.TooLong"),
        ("phone", "Customer.Phone.Required"),
        ("email", "Customer.Email.TooLong"),
    ]
    assert not Customer.all_tenants.exists()
    assert not AuditEvent.all_tenants.exists()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"phone": "1"},
        {"name": "A", "phone": "1", "note": "nul \x00 byte"},
        {"name": ["A"], "phone": "1"},
        [],
    ],
)
def test_malformed_create_bodies_are_400(body: Any) -> None:
    response = create(token_client(farm=FarmFactory.create(), roles=["Admin"]), body)
    assert response.status_code == 400, response.content
    assert response.json()["errors"]


def test_list_is_by_name_searchable_and_walks_every_customer_once() -> None:
    farm = FarmFactory.create()
    names = ["Rosa", "Ariel", "rosalinda", "Ben", "Rosa", "Carlo", "Dina"]
    customers = [CustomerFactory.create(farm=farm, name=n) for n in names]
    client = token_client(farm=farm, roles=["Sales"])

    seen: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        body = client.get(reverse("customer-list"), params).json()
        seen += [item["id"] for item in body["items"]]
        if body["nextCursor"] is None:
            break
        params["cursor"] = body["nextCursor"]
    assert sorted(seen) == sorted(c.pk for c in customers)
    assert len(seen) == len(set(seen))
    page = customer_list(caller=Caller.system(farm, label="t"), limit=10)
    assert [c.pk for c in page.items] == seen  # the REST walk is the selector's order

    found = client.get(reverse("customer-list"), {"search": " ROSA "}).json()["items"]
    assert sorted(i["name"] for i in found) == ["Rosa", "Rosa", "rosalinda"]


def test_resolve_by_id_or_exact_name_and_reports_ambiguity() -> None:
    farm = FarmFactory.create()
    caller = Caller.system(farm, label="test")
    nena = CustomerFactory.create(farm=farm, name="Aling Nena")
    twins = [
        CustomerFactory.create(farm=farm, name="Santos"),
        CustomerFactory.create(farm=farm, name="santos"),
    ]
    numbered = CustomerFactory.create(farm=farm, name="7-Eleven Lipa")
    foreign = CustomerFactory.create(name="Foreign Buyer")

    assert customer_resolve(caller=caller, name_or_id=nena.pk) == nena
    assert customer_resolve(caller=caller, name_or_id=str(nena.pk)) == nena
    assert customer_resolve(caller=caller, name_or_id="  aling nena ") == nena
    assert customer_resolve(caller=caller, name_or_id="7-eleven lipa") == numbered

    with pytest.raises(CustomerAmbiguousError) as ambiguous:
        customer_resolve(caller=caller, name_or_id="SANTOS")
    assert [c["customerId"] for c in ambiguous.value.data["candidates"]] == [t.pk for t in twins]

    with pytest.raises(CustomerNotFoundError) as missing:
        customer_resolve(caller=caller, name_or_id="Nena")
    assert missing.value.data["suggestions"] == ["Aling Nena"]
    for other in (foreign.pk, str(foreign.pk), "Foreign Buyer", "", 2**70):
        with pytest.raises(CustomerNotFoundError):
            customer_resolve(caller=caller, name_or_id=other)
