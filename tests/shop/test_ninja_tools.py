"""The shop's django-ninja operations published with ``ninja_tool`` (list, retrieve, create).

The same storefront as test_drf_tools.py (its fixture: the shop, its DRF API and its Ninja API
under uvicorn). REST is driven with httpx, MCP with the official ``mcp`` SDK client. Each guard
compares what the Ninja operation answers over REST with what its tool answers, per role.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.mutations import Edit, mutation
from tests.shop.test_drf_tools import Storefront, one, storefront  # noqa: F401 (the fixture)
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PRODUCTS = "/api/v1/shop/ninja/products"
OWNER, CLERK, HARBOUR = "owner@main.example", "clerk@main.example", "owner@harbour.example"
LIST, GET, CREATE = (
    "shop_ninja_list_products",
    "shop_ninja_get_product",
    "shop_ninja_create_product",
)


def create_over_rest(rest: httpx.Client, body: dict[str, Any], key: str) -> httpx.Response:
    # The canonical JSON the tool sends (sorted keys, no spaces): one body, one fingerprint.
    return rest.post(
        PRODUCTS,
        content=json.dumps(body, sort_keys=True, separators=(",", ":")),
        headers={"Idempotency-Key": key, "Content-Type": "application/json"},
    )


@mutation(
    Edit(
        "mcp_tools/ninja/tool.py",
        find="        if self.operation.auth_callbacks:\n",
        replace="        if False:\n",
    ),
    Edit(
        "mcp_tools/ninja/tool.py",
        find="            response = view(request, **kwargs)\n",
        replace=(
            "            import copy\n"
            "            unguarded = copy.copy(self.operation)\n"
            "            unguarded.auth_callbacks = []\n"
            "            response = unguarded.run(request, **kwargs)\n"
        ),
    ),
)
def test_every_role_is_admitted_or_refused_through_mcp_exactly_as_over_rest(
    storefront: Storefront,  # noqa: F811
) -> None:
    """Admin and ReadOnly both list; only Admin creates: the ReadOnly clerk is refused over REST
    (403) and through MCP (``Auth.Forbidden``, Ninja's own message) alike.

    Mutation: the tool calls the operation with its auth removed (and claims without asking
    it) — the clerk's create then succeeds through MCP while REST refuses it."""
    tea = {"name": "Chai", "price": "3.10"}
    for email, may_create in ((OWNER, True), (CLERK, False)):
        role = email.split("@")[0]
        with storefront.rest(email) as rest:
            created = create_over_rest(rest, {**tea, "name": f"Chai {role}"}, f"rest-{role}")
            listed = rest.get(PRODUCTS)
        assert listed.status_code == 200, listed.text
        assert created.status_code == (201 if may_create else 403), created.text
        listed_mcp, created_mcp = storefront.mcp(
            email,
            [
                (LIST, {}),
                (CREATE, {**tea, "name": f"Mcp chai {role}", "idempotencyKey": f"mcp-{role}"}),
            ],
        )
        assert one(listed_mcp)["items"] == listed.json()["items"]
        if may_create:
            assert one(created_mcp)["name"] == f"Mcp chai {role}"
        else:
            error = tool_error(created_mcp)
            assert error["code"] == "Auth.Forbidden", error
            assert error["message"] == created.json()["detail"]
            assert error["data"]["status"] == 403


@mutation(
    "tests/shop/storefront/ninja_api.py",
    find="return filters.filter(Product.objects.for_tenant(request.tenant))",
    replace="return filters.filter(Product.all_tenants.all())",
)
@mutation(
    "tests/shop/storefront/ninja_api.py",
    find="return get_object_or_404(Product.objects.for_tenant(request.tenant), pk=product_id)",
    replace="return get_object_or_404(Product.all_tenants.all(), pk=product_id)",
)
def test_only_the_callers_stores_products_are_listed_or_found(
    storefront: Storefront,  # noqa: F811
) -> None:
    """Main's owner never sees the harbour's products: not in the list, and a harbour product's
    id is ``Http.NotFound`` through MCP as it is 404 over REST.

    Mutation: the list's or the retrieve's queryset stops narrowing to the request's tenant —
    the tool runs the operation's own queryset, so the tenant must reach it."""
    with storefront.rest(HARBOUR) as rest:
        harbour = rest.get(PRODUCTS, params={"page_size": 50}).json()["items"]
    with storefront.rest(OWNER) as rest:
        missing = rest.get(f"{PRODUCTS}/{harbour[0]['id']}")
    assert {p["name"] for p in harbour} >= {"Rope", "Tea towel"}
    assert missing.status_code == 404, missing.text
    listed, found, mine = storefront.mcp(
        OWNER,
        [
            (LIST, {"page_size": 50}),
            (GET, {"product_id": harbour[0]["id"]}),
            (LIST, {"name": "towel"}),
        ],
    )
    names = {product["name"] for product in one(listed)["items"]}
    assert names.isdisjoint({"Rope", "Tea towel"}), names
    assert {"Tea", "Teapot", "Coffee"} <= names
    error = tool_error(found)
    assert error["code"] == "Http.NotFound" and error["data"]["status"] == 404, error
    assert one(mine) == {"items": [], "count": 0}


@mutation(
    "mcp_tools/ninja/tool.py",
    find="for n in self.query_names if n in values}",
    replace="for n in () if n in values}",
)
def test_filters_and_page_size_reach_the_operation(storefront: Storefront) -> None:  # noqa: F811
    """The name and price filters, the page and the page size the tool is given are the ones the
    operation applies: the tool's page is REST's page for the same query.

    Mutation: the tool drops its query arguments — the operation answers its default page."""
    query: dict[str, Any] = {"name": "tea", "max_price": "2.00", "page": 2, "page_size": 1}
    with storefront.rest(OWNER) as rest:
        over_rest = rest.get(PRODUCTS, params=query)
    assert over_rest.status_code == 200, over_rest.text
    (page,) = storefront.mcp(OWNER, [(LIST, query)])
    content = one(page)
    assert content["count"] == 2  # Tea and Teapot (not Coffee: the name; not Chai: the price)
    assert [p["name"] for p in content["items"]] == ["Teapot"]  # page 2 of one each, by name
    assert content == over_rest.json()


# What Ninja refuses over REST (422), and the tool's arguments must refuse too.
REFUSED_BODIES: list[dict[str, Any]] = [
    {"name": "Mug"},  # no price
    {"price": "1.00"},  # no name
    {"name": "", "price": "1.00"},
    {"name": "   ", "price": "1.00"},  # no visible character
    {"name": "x" * 101, "price": "1.00"},
    {"name": "Mug", "price": "0.00"},  # below the minimum
    {"name": "Mug", "price": "12345678901"},  # more than max_digits
    {"name": "Mug", "price": "1.001"},  # more than decimal_places
    {"name": "Mug", "price": "cheap"},
    {"name": None, "price": "1.00"},
]
REFUSED_QUERIES: list[dict[str, Any]] = [
    {"page": 0},
    {"page_size": 0},
    {"page": "first"},
    {"min_price": "cheap"},
]


@mutation(
    "mcp_tools/ninja/tool.py",
    find="                fields[leaf] = (info.annotation, info)\n",
    replace="                fields[leaf] = (Any, info.default)\n",
)
@mutation(
    "tests/shop/storefront/ninja_api.py",
    find='    name: str = Field(min_length=1, max_length=100, pattern=r"\\S")\n',
    replace="    name: str\n",
)
def test_the_input_schema_refuses_what_ninja_refuses(storefront: Storefront) -> None:  # noqa: F811
    """Every body and query Ninja answers 422 over REST is refused by the tool's own arguments
    (``Tool.InvalidArguments``, before any claim); what Ninja accepts, the tool accepts.

    Mutation: the tool's arguments lose their types and bounds (Ninja then refuses them:
    ``Validation.Failed``, not the schema), or the Schema's name constraints go (REST
    then accepts a blank name)."""
    with storefront.rest(OWNER) as rest:
        for index, body in enumerate(REFUSED_BODIES):
            answer = create_over_rest(rest, body, f"bad-{index}")
            assert answer.status_code == 422, (body, answer.text)
        for query in REFUSED_QUERIES:
            answer = rest.get(PRODUCTS, params=query)
            assert answer.status_code == 422, (query, answer.text)
    calls = [
        *(
            (CREATE, {**body, "idempotencyKey": f"bad-{i}"})
            for i, body in enumerate(REFUSED_BODIES)
        ),
        (CREATE, {"name": "Mug", "price": "1.00", "colour": "red", "idempotencyKey": "bad-x"}),
        *((LIST, query) for query in REFUSED_QUERIES),
        (LIST, {"page": 1, "page_size": 2, "min_price": "0.50"}),
    ]
    *refused, accepted = storefront.mcp(OWNER, calls)
    for (_, arguments), result in zip(calls, refused, strict=False):
        assert tool_error(result)["code"] == "Tool.InvalidArguments", (arguments, result)
    assert one(accepted)["count"] >= 3


@mutation(
    "mcp_tools/ninja/tool.py",
    find='            operation_key=sha256_hex(f"{request.method}:{request.path}"),\n',
    replace='            operation_key=sha256_hex(f"mcp:{request.method}:{request.path}"),\n',
)
def test_a_create_replays_once_and_shares_its_key_with_rest(
    storefront: Storefront,  # noqa: F811
) -> None:
    """The same key and arguments twice: one product, the second answer a replay of the first;
    a REST POST with that key and the canonical body is that same execution.

    Mutation: the tool claims in a key space of its own — REST then runs the create again,
    and Ninja refuses the name the first call took (422), a second side effect attempted."""
    kettle = {"name": "Kettle", "price": "19.90"}
    first, again, other_key = storefront.mcp(
        OWNER,
        [
            (CREATE, {**kettle, "idempotencyKey": "kettle-1"}),
            (CREATE, {**kettle, "idempotencyKey": "kettle-1"}),
            (CREATE, {**kettle, "idempotencyKey": "kettle-2"}),
        ],
    )
    created = one(first)
    assert created["replayed"] is False and created["name"] == "Kettle"
    assert one(again) == {**created, "replayed": True}
    # A new key is a new write: Ninja's own check refuses the name the first call took.
    error = tool_error(other_key)
    assert error["code"] == "Validation.Failed", error
    assert error["data"]["errors"][0]["field"] == "name"
    assert error["data"]["errors"][0]["code"] == "taken"
    with storefront.rest(OWNER) as rest:
        answer = create_over_rest(rest, kettle, "kettle-1")
    assert answer.status_code == 201, answer.text
    assert answer.headers.get("Idempotent-Replayed") == "true"
    assert answer.json()["id"] == created["id"]


def test_the_tools_schemas_are_the_operations(storefront: Storefront) -> None:  # noqa: F811
    (tools,) = storefront.mcp(OWNER, [("list", None)])
    listed = {name: tool.model_dump(mode="json", by_alias=True) for name, tool in tools.items()}
    create = listed[CREATE]
    assert set(create["inputSchema"]["properties"]) == {"name", "price", "idempotencyKey"}
    assert create["inputSchema"]["additionalProperties"] is False
    assert create["inputSchema"]["properties"]["name"]["maxLength"] == 100
    assert {"id", "name", "price", "replayed"} <= set(create["outputSchema"]["properties"])
    query = listed[LIST]["inputSchema"]["properties"]
    assert set(query) == {"name", "min_price", "max_price", "page", "page_size"}
    assert set(listed[LIST]["outputSchema"]["properties"]) == {"items", "count"}
    assert listed[GET]["inputSchema"]["required"] == ["product_id"]
