"""The farm's URLconf mounted under ``elsewhere/``: ``/mcp`` is ``/elsewhere/mcp`` (mcp_call)."""

from django.urls import include, path

urlpatterns = [path("elsewhere/", include("cluck.urls"))]
