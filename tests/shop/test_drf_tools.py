"""The shop's DRF ``ModelViewSet`` published with ``drf_tool(…, "list")`` and ``(…, "create")``
(its Ninja API's tools: test_ninja_tools.py, on this module's storefront fixture).

The shop runs as its own project (a copy, ``storefront.settings``: the shop plus its REST API)
under uvicorn; REST is driven with httpx, MCP with the official ``mcp`` SDK client and the
TypeScript SDK. Each guard compares what the view does over REST with what the tool does.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.clients import node
from tests.mutations import mutation
from tests.project_harness import copy_files
from tests.shop.harness import PROJECT, Shop, shop_env
from tests.shop.mcp_story import mcp_session
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SETTINGS = "storefront.settings"
PRODUCTS = "/api/v1/shop/products/"
MEMBERS = [
    ("main", "owner@main.example", "Admin"),
    ("main", "clerk@main.example", "ReadOnly"),
    ("harbour", "owner@harbour.example", "Admin"),
]
SETUP = """
import io, json
from django.core.management import call_command
from catalog.models import Product, Store

tokens = {}
for code, email, role in %(members)r:
    store, _ = Store.objects.get_or_create(code=code, defaults={"name": code.title()})
    call_command("add_member", tenant=code, email=email, role=role, stdout=io.StringIO())
    out = io.StringIO()
    call_command("issue_token", tenant=code, email=email, stdout=out)
    tokens[email] = out.getvalue().strip()
for code, names in {"main": ["Tea", "Teapot", "Coffee"], "harbour": ["Tea towel", "Rope"]}.items():
    store = Store.objects.get(code=code)
    for name in names:
        Product.all_tenants.create(store=store, name=name, price="2.00")
print("TOKENS=" + json.dumps(tokens))
"""


class Storefront:
    def __init__(self, url: str, tokens: dict[str, str]) -> None:
        self.url = url
        self.tokens = tokens

    def rest(self, email: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.tokens[email]}"},
            timeout=30,
        )

    def mcp(self, email: str, steps: Sequence[tuple[str, dict[str, Any] | None]]) -> list[Any]:
        """Run ``(tool, arguments)`` steps (``("list", None)`` lists) in one SDK session."""

        async def run() -> list[Any]:
            done: list[Any] = []
            async with mcp_session(self.url, self.tokens[email]) as session:
                for name, arguments in steps:
                    if name == "list":
                        listed = await session.list_tools()
                        done.append({tool.name: tool for tool in listed.tools})
                    else:
                        result = await session.call_tool(name, arguments or {})
                        done.append(
                            result.model_dump(mode="json", by_alias=True, exclude_none=True)
                        )
            return done

        return asyncio.run(run())


@pytest.fixture(scope="module")
def storefront(tmp_path_factory: Any) -> Iterator[Storefront]:
    path = copy_files(
        PROJECT,
        ("manage.py", "shop", "catalog", "storefront"),
        Path(tmp_path_factory.mktemp("storefront")) / "shop",
    )
    shop = Shop(path, env=shop_env(DJANGO_SETTINGS_MODULE=SETTINGS))
    shop.manage("migrate", "-v", "0")
    out = shop.manage("shell", "-c", SETUP % {"members": MEMBERS})
    (line,) = [line for line in out.splitlines() if line.startswith("TOKENS=")]
    with shop.serve("uvicorn") as url:
        yield Storefront(url, json.loads(line.removeprefix("TOKENS=")))


def one(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, result
    content: dict[str, Any] = result["structuredContent"]
    return content


@mutation(
    "mcp_tools/contrib/drf/view.py",
    find='                "handle_exception": handle_exception,\n',
    replace=(
        '                "handle_exception": handle_exception,\n'
        '                "check_permissions": lambda view, request: None,\n'
    ),
)
def test_the_permission_class_refuses_through_mcp_exactly_as_over_rest(
    storefront: Storefront,
) -> None:
    """A ReadOnly clerk: 403 over REST, and the same refusal (code, message) through MCP.

    Red if the drf tool skipped the view's permission classes."""
    tea = {"name": "Chai", "price": "3.10"}
    with storefront.rest("clerk@main.example") as rest:
        refused = rest.post(PRODUCTS, json=tea, headers={"Idempotency-Key": "clerk-rest"})
    assert refused.status_code == 403, refused.text
    (result,) = storefront.mcp(
        "clerk@main.example",
        [("shop_create_product", {**tea, "idempotencyKey": "clerk-mcp"})],
    )
    error = tool_error(result)
    assert error["code"] == "Auth.Forbidden", error
    assert error["message"] == refused.json()["detail"]
    assert error["data"]["status"] == 403


@mutation(
    "tests/shop/storefront/api.py",
    find="return Product.objects.for_tenant(self.request._request.tenant)",
    replace="return Product.all_tenants.all()",
)
def test_another_stores_products_never_appear(storefront: Storefront) -> None:
    """Red if the view's get_queryset stopped filtering by the request's tenant: the tool
    runs the view's own queryset, so the test pins that the tenant reaches it."""
    listed, searched = storefront.mcp(
        "owner@main.example",
        [
            ("shop_search_products", {"page_size": 50}),
            ("shop_search_products", {"search": "towel"}),
        ],
    )
    names = {product["name"] for product in one(listed)["results"]}
    assert "Rope" not in names and "Tea towel" not in names, names
    assert {"Tea", "Teapot", "Coffee"} <= names
    assert one(searched)["results"] == [] and one(searched)["count"] == 0


@mutation(
    "mcp_tools/contrib/drf/view.py",
    find="self.query_names if name in values}",
    replace="() if name in values}",
)
def test_the_filter_and_page_size_from_the_arguments_reach_the_queryset(
    storefront: Storefront,
) -> None:
    """Red if the tool's query arguments (search, ordering, page_size) did not reach the view."""
    (page,) = storefront.mcp(
        "owner@main.example",
        [("shop_search_products", {"search": "Tea", "page_size": 1, "ordering": "-name"})],
    )
    with storefront.rest("owner@main.example") as rest:
        over_rest = rest.get(
            PRODUCTS, params={"search": "Tea", "page_size": 1, "ordering": "-name"}
        )
    assert over_rest.status_code == 200, over_rest.text
    content = one(page)
    assert content["count"] == 2  # Tea and Teapot, not Coffee (the search)
    assert [p["name"] for p in content["results"]] == ["Teapot"]  # one per page, by -name
    assert content["results"] == over_rest.json()["results"]
    assert content["next"] is not None and "page_size=1" in content["next"]


# What the serializer refuses over REST (400), and the tool's arguments must refuse too.
REFUSED: list[dict[str, Any]] = [
    {"name": "Mug"},  # no price
    {"price": "1.00"},  # no name
    {"name": "", "price": "1.00"},
    {"name": "   ", "price": "1.00"},  # blank once DRF strips it
    {"name": "x" * 101, "price": "1.00"},
    {"name": "Mug", "price": "0.00"},  # below min_value
    {"name": "Mug", "price": "-1"},
    {"name": "Mug", "price": "12345678901"},  # more than max_digits
    {"name": "Mug", "price": "1.001"},  # more than decimal_places
    {"name": "Mug", "price": "cheap"},
    {"name": None, "price": "1.00"},
    {"name": "Mug", "price": "1.00", "colour": "red"},  # unknown field
]


@mutation(
    "mcp_tools/contrib/drf/schemas.py",
    find='            info["max_length"] = field.max_length\n        if field.min_length',
    replace="            pass\n        if field.min_length",
)
def test_the_input_schema_rejects_what_the_serializer_rejects(storefront: Storefront) -> None:
    """Every body the serializer refuses over REST is refused by the tool's arguments.

    Red if a serializer constraint (here max_length) were lost from the input schema."""
    with storefront.rest("owner@main.example") as rest:
        for index, body in enumerate(REFUSED):
            if "colour" in body:
                continue  # DRF ignores unknown fields; the tool refuses them (strict schema)
            answer = rest.post(PRODUCTS, json=body, headers={"Idempotency-Key": f"bad-{index}"})
            assert answer.status_code == 400, (body, answer.text)
    calls = [
        ("shop_create_product", {**body, "idempotencyKey": f"bad-{index}"})
        for index, body in enumerate(REFUSED)
    ]
    for body, result in zip(REFUSED, storefront.mcp("owner@main.example", calls), strict=True):
        assert tool_error(result)["code"] == "Tool.InvalidArguments", (body, result)


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find='            operation_key=sha256_hex(f"{request.method}:{request.path}"),\n',
    replace='            operation_key=sha256_hex(f"mcp:{request.method}:{request.path}"),\n',
)
def test_a_create_replays_once_and_shares_its_key_with_rest(storefront: Storefront) -> None:
    """Red if the drf write claimed in its own key space instead of the route's (REST would
    then write the kettle a second time: the serializer refuses the taken name, 400)."""
    kettle = {"name": "Kettle", "price": "19.90"}
    first, again, taken = storefront.mcp(
        "owner@main.example",
        [
            ("shop_create_product", {**kettle, "idempotencyKey": "kettle-1"}),
            ("shop_create_product", {**kettle, "idempotencyKey": "kettle-1"}),
            ("shop_create_product", {**kettle, "idempotencyKey": "kettle-2"}),
        ],
    )
    created, replayed = one(first), one(again)
    assert created["replayed"] is False and created["name"] == "Kettle"
    assert replayed == {**created, "replayed": True}
    # A new key is a new write: the serializer refuses the name now taken.
    error = tool_error(taken)
    assert error["code"] == "Validation.Failed"
    assert error["data"]["errors"][0]["field"] == "name"
    # The same key and body over REST is the same operation: the stored answer, not a write.
    body = json.dumps(kettle, sort_keys=True, separators=(",", ":"))
    with storefront.rest("owner@main.example") as rest:
        answer = rest.post(
            PRODUCTS,
            content=body,
            headers={"Idempotency-Key": "kettle-1", "Content-Type": "application/json"},
        )
    assert answer.status_code == 201, answer.text
    assert answer.headers.get("Idempotent-Replayed") == "true"
    assert answer.json()["id"] == created["id"]


def test_a_rest_create_replays_through_mcp(storefront: Storefront) -> None:
    mug = {"name": "Mug", "price": "6.00"}
    body = json.dumps(mug, sort_keys=True, separators=(",", ":"))
    with storefront.rest("owner@main.example") as rest:
        answer = rest.post(
            PRODUCTS,
            content=body,
            headers={"Idempotency-Key": "mug-1", "Content-Type": "application/json"},
        )
    assert answer.status_code == 201, answer.text
    (result,) = storefront.mcp(
        "owner@main.example", [("shop_create_product", {**mug, "idempotencyKey": "mug-1"})]
    )
    assert one(result) == {**answer.json(), "replayed": True}


def test_the_typescript_sdk_lists_and_calls_the_drf_and_ninja_tools(
    storefront: Storefront, tmp_path: Path
) -> None:
    node.require(node.SDK_DRIVER, node.SDK, node.SDK_2026)
    ninja_saucer = {"name": "Ninja saucer", "price": "2.50", "idempotencyKey": "ts-ninja"}
    steps = [
        {"op": "list"},
        {"op": "call", "name": "shop_search_products", "arguments": {"search": "Tea"}},
        {
            "op": "call",
            "name": "shop_create_product",
            "arguments": {"name": "Saucer", "price": "2.50", "idempotencyKey": "ts-saucer"},
        },
        {
            "op": "call",
            "name": "shop_create_product",
            "arguments": {"name": "Saucer", "price": "2.50", "idempotencyKey": "ts-saucer"},
        },
        # The same API in django-ninja (tests/shop/storefront/ninja_api.py), through ninja_tool.
        {"op": "call", "name": "shop_ninja_list_products", "arguments": {"name": "tea"}},
        {"op": "call", "name": "shop_ninja_create_product", "arguments": ninja_saucer},
    ]
    plan = {
        "url": f"{storefront.url}/mcp",
        "sessions": [
            {
                "name": era,
                "bearer": storefront.tokens["owner@main.example"],
                "era": era,
                "steps": steps,
            }
            for era in ("2025-11-25", "2026-07-28")
        ],
    }
    run = subprocess.run(
        [str(node.NODE), str(node.SDK_DRIVER)],
        input=json.dumps(plan),
        cwd=node.CLIENTS,
        env=node.client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    handshake, modern = json.loads(run.stdout)["sessions"]
    for session in (handshake, modern):
        listed, searched, created, replayed, ninja_listed, _ = (
            step["result"] for step in session["steps"]
        )
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert {"shop_search_products", "shop_create_product"} <= set(tools)
        assert {"shop_ninja_list_products", "shop_ninja_create_product"} <= set(tools)
        assert ninja_listed["isError"] is False, ninja_listed
        assert {p["name"] for p in ninja_listed["structuredContent"]["items"]} == {"Tea", "Teapot"}
        # Icons reach the client in both eras.
        assert tools["shop_search_products"]["icons"][0]["mimeType"] == "image/png"
        assert searched["isError"] is False, searched
        assert {p["name"] for p in searched["structuredContent"]["results"]} == {"Tea", "Teapot"}
    first = handshake["steps"][2]["result"]["structuredContent"]
    assert first["replayed"] is False
    assert handshake["steps"][3]["result"]["structuredContent"] == {**first, "replayed": True}
    # The other era, same key and arguments: still the one execution.
    assert modern["steps"][2]["result"]["structuredContent"] == {**first, "replayed": True}
    # The ninja create: written once in the first era, replayed in the second.
    ninja_first = handshake["steps"][5]["result"]["structuredContent"]
    assert ninja_first["replayed"] is False and ninja_first["name"] == "Ninja saucer"
    ninja_again = modern["steps"][5]["result"]["structuredContent"]
    assert ninja_again == {**ninja_first, "replayed": True}
