"""Routes: ``/healthz``, ``/readyz`` and ``/metrics`` (404 until a guard is configured).

Include them off the public API path, e.g. ``path("", include("mcp_tools.observability.urls"))``.
"""

from django.urls import path

from mcp_tools.observability.health import healthz, readyz
from mcp_tools.observability.metrics import metrics_view

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
]
