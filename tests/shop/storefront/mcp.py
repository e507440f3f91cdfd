"""Two actions of the product API as MCP tools, next to catalog/mcp.py's hand-written ones."""

from mcp_tools.contrib.drf import drf_tool

from storefront.api import ProductViewSet

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
