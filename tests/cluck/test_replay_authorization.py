"""A stored REST response goes back only to a caller allowed to make the request who made the
original one (issue 12, item 1).

The write routes are *computed*: every URL pattern whose view (or per-method route) answers
POST/PUT/PATCH/DELETE and carries no idempotency marker. A route nobody wrote a request recipe
for fails ``test_every_tracked_write_route_has_a_recipe`` — add one below, with a body that
succeeds for its first admitted role.

For each route, a member of the first admitted role writes with a key; then a *different*
member of every declared role (``cluck.roles.FARM_ROLES``) sends the same key and the
byte-identical body. Nobody but the author ever gets the stored response: a role the route
refuses gets the same 403 as a fresh request from it, an admitted one ``KeyReused`` (or, on a
user-scoped path, its own fresh answer). No refused attempt writes anything, proven by the
absence of audit rows (and of revocations, for the token route, which tenancy does not audit).
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
from cluck.models import AuditEvent, Customer, DailyEntry, Farm, SalesOrder
from cluck.roles import FARM_ROLES
from cluck.services.daily_entries import daily_entry_record
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from idempotency import exemption_of
from idempotency.markers import all_views, view_class_of
from idempotency.middleware import TRACKED_METHODS
from tenancy.markers import IGNORES_AMBIENT_CREDENTIALS, has_marker
from tenancy.models import AccessToken, Membership
from tenancy.oauth.models import ClientAuthorization
from tenancy.permissions import admitted_roles
from tenancy.services import membership_set_roles
from tenancy.tokens import issue_token
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
from tests.tenancy.oauth.flow import grant_tokens

pytestmark = pytest.mark.django_db

# Framework and fixture views: admin (anonymous, so never tracked) and the test apps (plain
# function views exercised by tests/idempotency).
_NOT_FARM_VIEWS = ("django.contrib.admin", "tests.testapps")


@dataclass(frozen=True)
class WriteRoute:
    name: str
    method: str
    view_class: type[Any]

    def __str__(self) -> str:
        return f"{self.method} {self.name}"


def _module_of(view_func: Any) -> str:
    return str(getattr(view_func, "__module__", ""))


def tracked_write_routes() -> list[WriteRoute]:
    """Every (route name, write method) the HTTP adapter tracks, from the URL resolver."""
    found: dict[tuple[str, str], WriteRoute] = {}
    for _route, name, view_func in all_views():
        if _module_of(view_func).startswith(_NOT_FARM_VIEWS) or name is None:
            continue
        if has_marker(view_func, IGNORES_AMBIENT_CREDENTIALS):
            # No bearer is read, so no tenant resolves and the adapter never tracks the route
            # (login, OAuth protocol endpoints and the browser pages signed in by session).
            continue
        routes = getattr(view_func, "method_routes", None)
        methods = (
            [m for m, (route_name, _) in routes.by_method.items() if route_name == name]
            if routes is not None
            else sorted(TRACKED_METHODS)
        )
        for method in methods:
            if method not in TRACKED_METHODS or exemption_of(view_func, method) is not None:
                continue
            found_class = view_class_of(view_func, method)
            if found_class is None:
                continue
            view_class = found_class[0]
            if routes is None and not hasattr(view_class, method.lower()):
                continue
            found[(name, method)] = WriteRoute(name, method, view_class)
    return sorted(found.values(), key=str)


def test_every_api_view_is_class_based_so_the_walk_sees_its_methods() -> None:
    """A plain function view hides which methods it writes with; the walk would miss it."""
    functions = [
        route
        for route, _name, view_func in all_views()
        if route.startswith("api/")
        and not _module_of(view_func).startswith(_NOT_FARM_VIEWS)
        and getattr(view_func, "method_routes", None) is None
        and view_class_of(view_func, "POST") is None
    ]
    assert functions == []


# --- the farm each case runs against -----------------------------------------------------------


@dataclass
class World:
    farm: Farm
    customer: Customer
    grade_id: int
    flock_id: int
    draft_order: SalesOrder
    confirmed_order: SalesOrder
    draft_entry: DailyEntry


def build_world() -> World:
    farm = provisioned_farm()
    grade = SaleGradeFactory.create(farm=farm)
    sellable_lot(grade=grade, quantity=1000, production_date=farm.today() - dt.timedelta(days=2))
    customer = CustomerFactory.create(farm=farm)
    caller = Caller.system(farm, label="test:replay")
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
    flock = FlockFactory.create(farm=farm, placement_date=farm.today() - dt.timedelta(days=30))
    draft_entry = daily_entry_record(
        caller=caller,
        flock_id=flock.pk,
        date=farm.today() - dt.timedelta(days=1),
        total_eggs=0,
        cracked_eggs=0,
        dirty_eggs=0,
        mortality_count=0,
    ).entry
    return World(farm, customer, grade.pk, flock.pk, draft_order, confirmed_order, draft_entry)


@dataclass(frozen=True)
class Request:
    path: str
    body: str


# route name → the author's request (path, body). ``author`` is the author's membership.
Recipe = Callable[[World, Membership], Request]


def _json(value: Any) -> str:
    return json.dumps(value)


def _spare_token(world: World, author: Membership) -> Request:
    token, _ = issue_token(membership=author, name="spare")
    return Request(reverse("me-token-revoke", args=[token.pk]), "")


def _spare_authorization(world: World, author: Membership) -> Request:
    grant_tokens(author)
    authorization = ClientAuthorization.objects.get(membership=author, revoked_at__isnull=True)
    return Request(reverse("me-authorization-revoke", args=[authorization.pk]), "")


RECIPES: dict[str, Recipe] = {
    "customer-create": lambda w, a: Request(
        reverse("customer-create"), _json({"name": "Aling Nena", "phone": "0917"})
    ),
    "sales-order-create": lambda w, a: Request(
        reverse("sales-order-create"),
        _json({"customerId": w.customer.pk, "lines": [{"eggGradeId": w.grade_id, "quantity": 5}]}),
    ),
    "sales-order-confirm": lambda w, a: Request(
        reverse("sales-order-confirm", args=[w.draft_order.pk]), ""
    ),
    "payment-record": lambda w, a: Request(
        reverse("payment-record", args=[w.confirmed_order.pk]),
        _json({"amount": "10.00", "method": "Cash"}),
    ),
    "daily-entry-record": lambda w, a: Request(
        reverse("daily-entry-record"),
        _json(
            {
                "flockId": w.flock_id,
                "date": w.farm.today().isoformat(),
                "totalEggs": 10,
                "crackedEggs": 0,
                "dirtyEggs": 0,
                "mortalityCount": 0,
            }
        ),
    ),
    "daily-entry-submit": lambda w, a: Request(
        reverse("daily-entry-submit", args=[w.draft_entry.pk]), ""
    ),
    "me-token-revoke": _spare_token,
    "me-authorization-revoke": _spare_authorization,
    "mcp-tenant-switches": lambda w, a: Request(
        reverse("mcp-tenant-switches"), _json({"readOnly": True, "disabledTools": []})
    ),
}

ROUTES = tracked_write_routes()
ROLES = [role.name for role in FARM_ROLES]


def test_every_tracked_write_route_has_a_recipe() -> None:
    """The walk is the source of truth; a new write route needs a recipe here."""
    assert {route.name for route in ROUTES} == set(RECIPES)


def _admitted(route: WriteRoute) -> list[str]:
    names = {role.name for role in admitted_roles(route.view_class.permission_classes)}
    return [name for name in ROLES if name in names]


def _member(farm: Farm, role: str) -> tuple[APIClient, Membership]:
    membership = MembershipFactory.create(
        tenant=farm, roles=FARM_ROLES.stored_for(role), user__password=None
    )
    return _client(membership), membership


def _client(membership: Membership) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(membership)}")
    client.raise_request_exception = False
    return client


def _send(client: APIClient, route: WriteRoute, request: Request, key: str) -> Any:
    return client.generic(
        route.method,
        request.path,
        request.body,
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=key,
    )


def _writes(farm: Farm) -> tuple[int, int, int]:
    """What a write leaves behind: audit rows of the farm, and token and OAuth client
    revocations (tenancy's credential routes write no farm audit row)."""
    return (
        AuditEvent.all_tenants.filter(farm=farm).count(),
        AccessToken.objects.filter(membership__tenant_id=farm.pk, revoked_at__isnull=False).count(),
        ClientAuthorization.objects.filter(
            membership__tenant_id=farm.pk, revoked_at__isnull=False
        ).count(),
    )


@mutation(
    "idempotency/middleware.py",
    find=(
        "fingerprint=bound_fingerprint(\n"
        "                fingerprint_bytes(body), user_id=None if user_id is None else "
        "str(user_id)\n"
        "            ),"
    ),
    replace="fingerprint=fingerprint_bytes(body),",
)
@mutation(
    "idempotency/middleware.py",
    find="        if refusal is not None:\n            return refusal\n",
    replace="",
)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", ROUTES, ids=str)
def test_another_member_never_gets_the_authors_stored_response(
    route: WriteRoute, role: str
) -> None:
    """Another member of the same farm, of every role, replays the author's key and body.

    Mutations, each seen red: (1) the HTTP fingerprint without the user
    (``fingerprint=fingerprint_bytes(body)`` in ``IdempotencyMiddleware.process_view``) → an
    admitted member gets the author's 2xx with ``Idempotent-Replayed`` (and, without (2)'s
    check, every role does); (2) ``IDEMPOTENCY_AUTHORIZE_FUNCTION`` returning ``None`` → a
    refused role gets 422 ``KeyReused`` instead of the 403 a fresh request gets.
    """
    world = build_world()
    author_role = _admitted(route)[0]
    author_client, author = _member(world.farm, author_role)
    request = RECIPES[route.name](world, author)
    key = f"author-{uuid.uuid4()}"
    first = _send(author_client, route, request, key)
    assert 200 <= first.status_code < 300, first.content
    written = _writes(world.farm)

    intruder_client, _ = _member(world.farm, role)
    attempt = _send(intruder_client, route, request, key)

    assert "Idempotent-Replayed" not in attempt
    assert not 200 <= attempt.status_code < 300
    assert attempt.content != first.content
    if role not in _admitted(route):
        fresh = _send(intruder_client, route, request, f"fresh-{uuid.uuid4()}")
        assert attempt.status_code == fresh.status_code == 403
        assert attempt.json()["code"] == fresh.json()["code"]
    assert _writes(world.farm) == written

    # The author still gets their own stored response: the guard is not vacuous.
    again = _send(author_client, route, request, key)
    assert again["Idempotent-Replayed"] == "true"
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert _writes(world.farm) == written


DEMOTIONS = [(route, role) for route in ROUTES for role in ROLES if role not in _admitted(route)]


@mutation(
    "idempotency/middleware.py",
    find="        if refusal is not None:\n            return refusal\n",
    replace="",
)
@pytest.mark.parametrize(
    ("route", "role"), DEMOTIONS, ids=[f"{r}-to-{role}" for r, role in DEMOTIONS]
)
def test_an_author_demoted_since_is_refused_before_the_replay(route: WriteRoute, role: str) -> None:
    """The author's role changes to one the route refuses; their retry with the same key and
    body gets the route's 403, not the stored 2xx.

    Mutation: ``IDEMPOTENCY_AUTHORIZE_FUNCTION`` returning ``None`` (no authorization before
    the claim) → the stored 2xx is replayed → red.
    """
    world = build_world()
    author_client, author = _member(world.farm, _admitted(route)[0])
    request = RECIPES[route.name](world, author)
    key = f"author-{uuid.uuid4()}"
    assert 200 <= _send(author_client, route, request, key).status_code < 300
    written = _writes(world.farm)

    membership_set_roles(membership=author, roles=FARM_ROLES.stored_for(role))
    retry = _send(_client(author), route, request, key)

    assert retry.status_code == 403
    assert "Idempotent-Replayed" not in retry
    assert _writes(world.farm) == written
