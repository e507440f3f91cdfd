"""Money: one rule on both boundaries (issue 12, item 2).

The rule (``Caller.sees_money``): every money value is the money tier's (``SALES_ACCESS``).
For each declared role, every farm REST route (computed from the URL resolver: the views of
``cluck.api``) and every farm MCP tool (the registry) is called, and the money each answer
carries is *computed* from it: any ``{"amount", "currency"}`` object, or a known money key with
a value. Then, per role:

- each tool shows exactly the money fields its mirrored routes show;
- a role outside the money tier sees no money anywhere; one inside it does (not vacuous).
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from cluck.caller import Caller
from cluck.models import Customer, DailyEntry, Farm, SalesOrder
from cluck.roles import FARM_ROLES, SALES_ACCESS
from cluck.services.daily_entries import daily_entry_record
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from cluck.services.payments import payment_record
from idempotency.markers import all_views, view_class_of
from mcp_tools.authoring.prompts import default_prompts
from mcp_tools.authoring.registry import default_registry
from mcp_tools.authoring.resources import default_resources
from tests.cluck.mcp_helpers import Tools
from tests.factories import (
    CustomerFactory,
    FlockFactory,
    MembershipFactory,
    SaleGradeFactory,
    bearer_for,
    provisioned_farm,
    sellable_lot,
)
from tests.mutations import mutation

# Tools run in worker threads on their own connections: what they read must be committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

MONEY_KEYS = frozenset(
    {"amount", "total", "unitPrice", "lineTotal", "paid", "outstanding", "confirmedTotal"}
)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def money_fields(payload: Any, *, with_null: bool = False) -> set[str]:
    """The keys under which money appears anywhere in ``payload`` (``with_null``: a known
    money key counts even when its value is null — hidden money is absent, not null)."""
    found: set[str] = set()
    stack = [payload]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, dict) and set(value) == {"amount", "currency"}:
                    found.add(key)
                    continue  # inside a money object, "amount" is not another money field
                if key in MONEY_KEYS and (value is not None or with_null):
                    found.add(key)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def farm_routes() -> list[tuple[str, str]]:
    """(route name, method) of every farm REST route: views of ``cluck.api``."""
    routes: set[tuple[str, str]] = set()
    for _route, name, view_func in all_views():
        if name is None:
            continue
        method_routes = getattr(view_func, "method_routes", None)
        for method in METHODS:
            if method_routes is not None and method_routes.by_method.get(method, ("",))[0] != name:
                continue
            found = view_class_of(view_func, method)
            if found is None or not found[0].__module__.startswith("cluck.api"):
                continue
            if hasattr(found[0], method.lower()):
                routes.add((name, method))
    return sorted(routes)


ROUTES = farm_routes()
FARM_TOOLS = [spec for spec in default_registry.specs() if spec.name.startswith("cluck_")]
FARM_RESOURCES = [
    *(spec.name for spec in default_resources.resources() if spec.name.startswith("cluck_")),
    *(spec.name for spec in default_resources.templates() if spec.name.startswith("cluck_")),
]
FARM_PROMPTS = [spec.name for spec in default_prompts.specs() if spec.name.startswith("cluck_")]


@dataclass
class World:
    farm: Farm
    customer: Customer
    grade_id: int
    flock_id: int
    draft_order: SalesOrder
    confirmed_order: SalesOrder
    draft_entry: DailyEntry
    second_entry: DailyEntry  # the tool submits this one; the route submits draft_entry


def build_world() -> World:
    farm = provisioned_farm()
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today() - dt.timedelta(days=2))
    customer = CustomerFactory.create(farm=farm)
    caller = Caller.system(farm, label="test:money")
    draft_order = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=10)],
    )
    confirmed_order = sales_order_create(
        caller=caller,
        customer_id=customer.pk,
        lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=20, unit_price="10.00")],
    )
    sales_order_confirm(caller=caller, order_id=confirmed_order.pk)
    payment_record(caller=caller, order_id=confirmed_order.pk, amount="50.00", method="Cash")
    flock = FlockFactory.create(farm=farm, placement_date=farm.today() - dt.timedelta(days=30))
    draft_entry, second_entry = (
        daily_entry_record(
            caller=caller,
            flock_id=flock.pk,
            date=farm.today() - dt.timedelta(days=days),
            total_eggs=0,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=0,
        ).entry
        for days in (1, 3)
    )
    return World(
        farm,
        customer,
        grade.pk,
        flock.pk,
        draft_order,
        confirmed_order,
        draft_entry,
        second_entry,
    )


def _write(path: str, body: dict[str, Any] | None = None) -> Callable[[APIClient], Any]:
    return lambda client: client.post(
        path, json.dumps(body or {}), content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()),
    )  # fmt: skip


def _read(path: str) -> Callable[[APIClient], Any]:
    return lambda client: client.get(path)


# (route name, method) → the request, given the world. Reads first, writes after (see below).
RECIPES: dict[tuple[str, str], Callable[[World], Callable[[APIClient], Any]]] = {
    ("flock-list", "GET"): lambda w: _read(reverse("flock-list")),
    ("flock-detail", "GET"): lambda w: _read(reverse("flock-detail", args=[w.flock_id])),
    ("egg-grade-list", "GET"): lambda w: _read(reverse("egg-grade-list")),
    ("stock-summary", "GET"): lambda w: _read(reverse("stock-summary")),
    ("daily-entry-list", "GET"): lambda w: _read(reverse("daily-entry-list")),
    ("daily-entry-detail", "GET"): lambda w: _read(
        reverse("daily-entry-detail", args=[w.draft_entry.pk])
    ),
    ("customer-list", "GET"): lambda w: _read(reverse("customer-list")),
    ("customer-detail", "GET"): lambda w: _read(reverse("customer-detail", args=[w.customer.pk])),
    ("customer-balance-list", "GET"): lambda w: _read(reverse("customer-balance-list")),
    ("sales-order-list", "GET"): lambda w: _read(reverse("sales-order-list")),
    ("sales-order-detail", "GET"): lambda w: _read(
        reverse("sales-order-detail", args=[w.confirmed_order.pk])
    ),
    ("order-payment-list", "GET"): lambda w: _read(
        reverse("order-payment-list", args=[w.confirmed_order.pk])
    ),
    ("customer-create", "POST"): lambda w: _write(
        reverse("customer-create"), {"name": "Aling Nena", "phone": "0917"}
    ),
    ("sales-order-create", "POST"): lambda w: _write(
        reverse("sales-order-create"),
        {"customerId": w.customer.pk, "lines": [{"eggGradeId": w.grade_id, "quantity": 5}]},
    ),
    ("sales-order-confirm", "POST"): lambda w: _write(
        reverse("sales-order-confirm", args=[w.draft_order.pk])
    ),
    ("payment-record", "POST"): lambda w: _write(
        reverse("payment-record", args=[w.confirmed_order.pk]),
        {"amount": "10.00", "method": "Cash"},
    ),
    ("daily-entry-record", "POST"): lambda w: _write(
        reverse("daily-entry-record"),
        {
            "flockId": w.flock_id,
            "date": w.farm.today().isoformat(),
            "totalEggs": 10,
            "crackedEggs": 0,
            "dirtyEggs": 0,
            "mortalityCount": 0,
        },
    ),
    ("daily-entry-submit", "POST"): lambda w: _write(
        reverse("daily-entry-submit", args=[w.draft_entry.pk])
    ),
}

# tool → the calls that cover its mirrored routes (a list and a detail where it fuses both).
TOOL_CALLS: dict[str, Callable[[World], list[dict[str, Any]]]] = {
    "cluck_list_flocks": lambda w: [{}],
    "cluck_list_egg_grades": lambda w: [{}],
    "cluck_read_stock": lambda w: [{}],
    "cluck_stock_summary": lambda w: [{}],
    "cluck_list_daily_entries": lambda w: [{}],
    "cluck_list_customers": lambda w: [{}],
    "cluck_list_orders": lambda w: [{}, {"orderId": w.confirmed_order.pk}],
    "cluck_read_receivables": lambda w: [{}],
    "cluck_record_daily_entry": lambda w: [
        {
            "flock": w.flock_id,
            "date": (w.farm.today() - dt.timedelta(days=2)).isoformat(),
            "totalEggs": 3,
            "crackedEggs": 0,
            "dirtyEggs": 0,
            "mortalityCount": 0,
            "idempotencyKey": str(uuid.uuid4()),
        }
    ],
    "cluck_submit_daily_entry": lambda w: [
        {"dailyEntryId": w.second_entry.pk, "idempotencyKey": str(uuid.uuid4())}
    ],
    "cluck_production_report": lambda w: [
        {
            "fromDate": (w.farm.today() - dt.timedelta(days=31)).isoformat(),
            "toDate": w.farm.today().isoformat(),
        }
    ],
}

# resource → (the URI read, the tool whose money it must show exactly; None: no money at all).
RESOURCE_READS: dict[str, Callable[[World], tuple[str, str | None]]] = {
    "cluck_egg_grades": lambda w: ("farm://grades", "cluck_list_egg_grades"),
    "cluck_flock_record_card": lambda w: (f"farm://flocks/{w.flock_id}", None),
    "cluck_day_entries": lambda w: (f"farm://days/{w.draft_entry.date.isoformat()}", None),
}
# prompt → its arguments; a prompt carries no money for anyone.
PROMPT_GETS: dict[str, Callable[[World], dict[str, str]]] = {
    "cluck_summarise_day": lambda w: {
        "date": w.draft_entry.date.isoformat(),
        "flock": str(w.flock_id),
    },
}


def test_every_farm_route_and_tool_has_a_recipe() -> None:
    assert set(RECIPES) == set(ROUTES)
    assert set(TOOL_CALLS) == {spec.name for spec in FARM_TOOLS}
    assert set(RESOURCE_READS) == set(FARM_RESOURCES)
    assert set(PROMPT_GETS) == set(FARM_PROMPTS)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # a Markdown card: money would show as a JSON money key, never as prose


def _resource_money(tools: Tools, uri: str) -> tuple[set[str], set[str]] | None:
    reply = tools.rpc("resources/read", {"uri": uri})
    if reply.get("error", {}).get("code") == -32602:
        return None  # hidden from this role, like a 403 route
    assert "result" in reply, (uri, reply)
    contents = [_parsed(item["text"]) for item in reply["result"]["contents"]]
    return money_fields(contents), money_fields(contents, with_null=True)


def _prompt_money(
    tools: Tools, name: str, arguments: dict[str, str]
) -> tuple[set[str], set[str]] | None:
    reply = tools.rpc("prompts/get", {"name": name, "arguments": arguments})
    if reply.get("error", {}).get("code") == -32602:
        return None  # hidden, or the flock is outside this role's rows
    assert "result" in reply, (name, reply)
    embedded = [
        _parsed(message["content"]["resource"]["text"])
        for message in reply["result"]["messages"]
        if message["content"]["type"] == "resource"
    ]
    assert embedded, reply  # the day's entries at least: not vacuous
    return money_fields(embedded), money_fields(embedded, with_null=True)


def _member(farm: Farm, role: str) -> tuple[APIClient, Tools]:
    membership = MembershipFactory.create(
        tenant=farm, roles=FARM_ROLES.stored_for(role), user__password=None
    )
    bearer = bearer_for(membership)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer}")
    return client, Tools(bearer)


@mutation(
    "cluck/caller.py",
    find="        return evaluate(SALES_ACCESS, self.actor)",
    replace="        return True",
)
@mutation(
    "cluck/api/shapes.py",
    find="        if not instance.money_visible:",
    replace="        if False:",
)
@mutation(
    "cluck/mcp/commerce.py",
    find="                    unit_price=money_out(line.unit_price),",
    replace="                    unit_price=None,",
)
@mutation(
    "cluck/mcp/resources.py",
    find="def egg_grades(ctx: CallContext) -> GradeList:\n    return list_egg_grades(ctx)\n",
    replace=(
        "def egg_grades(ctx: CallContext) -> GradeList:\n"
        "    from cluck.mcp._shared import Money, MoneyOut\n"
        "    from cluck.models import EggGrade\n"
        "\n"
        "    listed, farm = list_egg_grades(ctx), caller_of(ctx).farm\n"
        "    grades = EggGrade.objects.for_tenant(farm)\n"
        "    prices = dict(grades.values_list('pk', 'unit_price_minor'))\n"
        "    for grade in listed.grades:\n"
        "        grade.unit_price = MoneyOut.of(Money.of(prices[grade.egg_grade_id], farm))\n"
        "    return listed\n"
    ),
)
@pytest.mark.parametrize("role", [role.name for role in FARM_ROLES])
def test_each_role_sees_the_same_money_on_every_route_and_every_tool(role: str) -> None:
    """Mutations, each seen red: (1) ``Caller.sees_money`` always true (money for every role,
    as the REST routes had it) → a Worker and a ReadOnly see money; (2) the REST serializers
    without ``TieredMoneyMixin``'s drop → hidden money shows as ``"total": null`` on REST but
    is absent from the tools; (3) ``cluck_list_orders`` dropping the lines' ``unitPrice``
    (``unit_price=None`` in ``_order_item``) → the tool shows less than its routes; (4) the
    ``farm://grades`` resource (``cluck.mcp.resources.egg_grades``) filling each grade's list
    price in from the model itself instead of what the selector handed over → a Worker and a
    ReadOnly see money in it.
    """
    world = build_world()
    client, tools = _member(world.farm, role)
    sees_money = SALES_ACCESS.allows_role(FARM_ROLES[role])

    rest: dict[str, set[str]] = {}
    keys_seen: set[str] = set()  # money keys present at all, null values included
    ordered = sorted(ROUTES, key=lambda route: route[1] != "GET")  # reads before writes
    for name, method in ordered:
        response = RECIPES[(name, method)](world)(client)
        if response.status_code == 403:
            continue
        assert 200 <= response.status_code < 300, (name, method, response.content)
        body = response.json() if response.content else {}
        rest[name] = money_fields(body)
        keys_seen |= money_fields(body, with_null=True)

    visible = tools.names()
    mcp: dict[str, set[str]] = {}
    for spec in sorted(FARM_TOOLS, key=lambda s: not s.read_only):  # reads before writes
        if spec.name not in visible:
            continue
        fields: set[str] = set()
        for arguments in TOOL_CALLS[spec.name](world):
            result = tools.ok(spec.name, arguments)
            fields |= money_fields(result)
            keys_seen |= money_fields(result, with_null=True)
        mcp[spec.name] = fields

    for spec in FARM_TOOLS:
        if spec.name in mcp:
            mirrored = set().union(*(rest[route] for route in spec.mirrors if route in rest))
            assert mcp[spec.name] == mirrored, (spec.name, mcp[spec.name], mirrored)

    # Resources and prompts are a third and fourth way in: the same rule.
    for name, read_resource in RESOURCE_READS.items():
        uri, mirrored_tool = read_resource(world)
        read_money = _resource_money(tools, uri)
        if read_money is None:
            continue
        fields, with_null = read_money
        keys_seen |= with_null
        assert fields == mcp.get(mirrored_tool or "", set()), (name, fields)
        mcp[name] = fields
    for name, prompt_arguments in PROMPT_GETS.items():
        got_money = _prompt_money(tools, name, prompt_arguments(world))
        if got_money is None:
            continue
        fields, with_null = got_money
        keys_seen |= with_null
        assert fields == set(), (name, fields)

    everything = set().union(*rest.values(), *mcp.values())
    if sees_money:
        assert {"total", "unitPrice", "lineTotal", "paid", "outstanding"} <= everything
    else:
        assert everything == set(), {k: v for k, v in {**rest, **mcp}.items() if v}
        assert keys_seen == set()  # absent, not null
