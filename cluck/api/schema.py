"""OpenAPI generation that understands ``cluck.api.base.MethodRoutes``.

A ``MethodRoutes`` path is served by a plain dispatcher function, which drf-spectacular skips
(it only enumerates ``APIView`` callbacks). This enumerator expands such a pattern into one
endpoint per HTTP method, each backed by the route's own ``APIView`` — so every named route
shows up in ``/api/schema/`` with its own serializers, permissions and responses. (The
security scheme of ``TenancyAuthentication`` is ``tenancy.openapi``'s, as in any project.)
"""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, URLResolver
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator


class MethodRoutesEndpointEnumerator(EndpointEnumerator):
    def _get_api_endpoints(self, patterns: Any, prefix: str) -> list[Any]:
        if patterns is None:
            patterns = self.patterns
        endpoints: list[Any] = []
        for pattern in patterns:
            method_routes = getattr(getattr(pattern, "callback", None), "method_routes", None)
            if isinstance(pattern, URLPattern) and method_routes is not None:
                path_regex = prefix + str(pattern.pattern)
                path = self.get_path_from_regex(path_regex)
                for method, view in method_routes._views.items():
                    if self.should_include_endpoint(path, view):
                        endpoints.append((path, path_regex, method, view))
            elif isinstance(pattern, URLResolver):
                endpoints.extend(
                    self._get_api_endpoints(pattern.url_patterns, prefix + str(pattern.pattern))
                )
            else:
                endpoints.extend(super()._get_api_endpoints([pattern], prefix))
        return endpoints


class CluckSchemaGenerator(SchemaGenerator):
    endpoint_inspector_cls = MethodRoutesEndpointEnumerator
