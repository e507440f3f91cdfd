"""DRF views as tools: one action of an ``APIView``/``ViewSet``, run for real, as the caller.

``drf_tool(ProductViewSet, "list", name="shop_products")`` registers one tool. A call builds a
Django request for the view's own route (the tool's arguments become the query string or the
JSON body), marks it with the ``CallContext``'s tenant, actor and row scope, and runs the view
through ``as_view()`` — ``dispatch`` → ``initial`` (authentication, permissions, throttles) →
the handler (``get_queryset``, filter backends, pagination, serializer validation) →
``handle_exception`` → ``finalize_response`` — exactly as a REST request would. Only
authentication is the caller's: the MCP endpoint already authenticated the bearer, so the view's
authenticators are replaced by one that reads the resolved actor (``TenancyAuthentication``);
everything after it is the view's own.

The input schema is what the view accepts (the serializer's writable fields, the filter
backends' and the paginator's query parameters, the route's lookup); the output schema is what
it answers (the serializer's readable fields; a list in its paginated envelope). An error the
view answers becomes a tool error with the code tenancy's problem handler gives it over REST
(``Auth.Forbidden``, ``Validation.Failed`` with ``data.errors``, ``Http.NotFound``,
``Http.RateLimited`` with ``data.retryAfterSeconds``).

A write action is a write tool whose ``idempotencyKey`` claims in the HTTP adapter's key space
of the same route: operation ``METHOD:PATH``, the same caller key, and the fingerprint of the
JSON body the tool sends (its arguments, canonical JSON: sorted keys, no spaces) bound to the
caller. A REST request with that key and body and an MCP call with that key and arguments are
one execution; both adapters store and replay the view's 2xx response.
"""

from mcp_tools.contrib.drf.tool import drf_tool

__all__ = ["drf_tool"]
