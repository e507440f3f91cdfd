"""``ninja_tool`` at registration: the operation found, its schemas, and mistakes refused.

No server: the operations are registered into a registry of their own (the calls themselves are
tests/shop/test_ninja_tools.py's, against a running shop).

Without ``from __future__ import annotations``: Ninja reads ``Query[...]`` from the signature.
"""

import os
import subprocess
import sys
from decimal import Decimal
from typing import Annotated, Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from ninja import Field, FilterLookup, FilterSchema, Header, NinjaAPI, Query, Schema
from ninja.pagination import PageNumberPagination, paginate

from mcp_tools.authoring.registry import Registry
from mcp_tools.ninja import TenancyAuth, ninja_tool
from tests.mutations import mutation

api = NinjaAPI(urls_namespace="test-ninja-registration", auth=TenancyAuth())


class ItemOut(Schema):
    id: int
    label: str


class ItemIn(Schema):
    label: str = Field(min_length=1, max_length=20)
    weight: Decimal = Field(ge=Decimal("0.1"), max_digits=5, decimal_places=1)


class ItemFilter(FilterSchema):
    label: Annotated[str | None, FilterLookup("label__icontains")] = None


@api.get("/items", response=list[ItemOut], operation_id="list_items")
@paginate(PageNumberPagination)
def list_items(request: Any, filters: Query[ItemFilter]) -> Any:
    """Items, filtered by label.

    Not shown: the rest of the docstring."""
    return []


@api.post("/items", response={201: ItemOut}, operation_id="add_item")
def add_item(request: Any, payload: ItemIn) -> Any:
    raise NotImplementedError


@api.get("/items/{item_id}", response=ItemOut, operation_id="get_item")
def get_item(request: Any, item_id: int, trace: Header[str]) -> Any:
    raise NotImplementedError


def test_a_list_operation_is_a_read_tool_with_its_filter_and_page_as_arguments() -> None:
    spec = ninja_tool(api, "list_items", name="items_list", registry=Registry())
    assert spec.read_only is True
    assert spec.description == "Items, filtered by label."
    assert set(spec.input_schema["properties"]) == {"label", "page", "page_size"}
    assert spec.input_schema["properties"]["page"]["minimum"] == 1
    assert spec.output_schema is not None
    assert set(spec.output_schema["properties"]) == {"items", "count"}


@mutation(
    "mcp_tools/contrib/drf/requests.py",
    find="(default_registry if registry is None else registry).add(tool)",
    replace="(registry or default_registry).add(tool)",
)
def test_a_tool_given_an_empty_registry_lands_there_and_nowhere_else() -> None:
    """A registry of one's own that is still empty is a registry, not "none given".

    Mutation: ``registry or default_registry`` (an empty ``Registry`` is falsy: its length is
    0) → red (the tool lands in the project's default registry and is served to every
    caller, as this test's module once leaked ``items_list`` into the A2A listing)."""
    from mcp_tools.authoring.registry import default_registry

    own = Registry()
    ninja_tool(api, "list_items", name="items_only_here", registry=own)
    assert "items_only_here" in {spec.name for spec in own.specs()}
    assert "items_only_here" not in {spec.name for spec in default_registry.specs()}


def test_a_create_operation_is_a_write_tool_with_the_body_fields_as_arguments() -> None:
    spec = ninja_tool(
        api, "/items", method="POST", name="items_add", description="Add.", registry=Registry()
    )
    assert spec.read_only is False and spec.write_unit is not None
    properties = spec.input_schema["properties"]
    assert set(properties) == {"label", "weight", "idempotencyKey"}
    assert properties["label"]["maxLength"] == 20
    assert spec.input_schema["additionalProperties"] is False
    assert spec.output_schema is not None
    assert set(spec.output_schema["required"]) >= {"id", "label", "replayed"}


@mutation(
    "mcp_tools/ninja/tool.py",
    find="                    if not by_path and op_id != wanted:\n",
    replace="                    if False:\n",
)
def test_an_unknown_operation_is_refused_naming_the_apis_operations() -> None:
    """Mutation: any operation stands for the one named — the first is published instead."""
    with pytest.raises(ImproperlyConfigured, match="add_item, get_item, list_items"):
        ninja_tool(api, "list_itemz", name="items_typo", description="x", registry=Registry())
    with pytest.raises(ImproperlyConfigured, match="method="):
        ninja_tool(api, "/items", name="items_which", description="x", registry=Registry())


@mutation(
    "mcp_tools/ninja/tool.py",
    find="            if source not in SOURCES:\n",
    replace="            if False:\n",
)
def test_a_header_parameter_cannot_be_an_argument() -> None:
    """A header is the HTTP client's, not the model's: a start-up error, never a silent drop.

    Mutation: the header parameter passes as an argument the request never carries."""
    with pytest.raises(ImproperlyConfigured, match="a header parameter"):
        ninja_tool(api, "get_item", name="items_get", description="x", registry=Registry())


@mutation(
    "mcp_tools/ninja/auth.py",
    find="from django.http import HttpRequest\n",
    replace="import ninja  # noqa: F401\nfrom django.http import HttpRequest\n",
)
def test_importing_the_toolkit_never_imports_ninja() -> None:
    """django-ninja is an optional extra: ``mcp_tools`` and even ``mcp_tools.ninja`` import
    without it; only registering an operation (which has one) needs it.

    Mutation: mcp_tools.ninja imports ninja at module level — a project without the extra
    that imports every module of the toolkit (its checks, its reference) would fail."""
    code = (
        "import sys, django; django.setup(); import mcp_tools, mcp_tools.ninja; "
        "assert 'ninja' not in sys.modules, sorted(m for m in sys.modules if 'ninja' in m)"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "cluck.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
