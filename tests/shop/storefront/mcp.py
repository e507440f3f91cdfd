"""The product API's actions as MCP tools (its DRF ViewSet and its Ninja operations), next to
catalog/mcp.py's hand-written ones."""

from mcp_tools.contrib.drf import drf_tool
from mcp_tools.ninja import ninja_tool

from storefront.api import ProductViewSet
from storefront.ninja_api import api as ninja_api

drf_tool(
    ProductViewSet,
    "list",
    name="shop_search_products",
    description="The products of this store, searchable by name and paged (as GET /products/).",
    icons=[{"src": "https://shop.example/icons/products.png", "mimeType": "image/png"}],
)
drf_tool(
    ProductViewSet,
    "create",
    name="shop_create_product",
    description="Add a product to this store (as POST /products/). Staff only.",
)
ninja_tool(
    ninja_api,
    "list_products",
    name="shop_ninja_list_products",
    description="The products of this store, filtered and paged (as GET /ninja/products).",
)
ninja_tool(
    ninja_api,
    "/products/{product_id}",
    method="GET",
    name="shop_ninja_get_product",
    description="One product of this store (as GET /ninja/products/{product_id}).",
)
ninja_tool(
    ninja_api,
    "create_product",
    name="shop_ninja_create_product",
    description="Add a product to this store (as POST /ninja/products). Staff only.",
)
