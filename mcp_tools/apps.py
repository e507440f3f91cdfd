"""App config: discover every installed app's ``mcp.py`` and prepare the surfaces once."""

from __future__ import annotations

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import autodiscover_modules


class McpToolsConfig(AppConfig):
    name = "mcp_tools"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from mcp_tools import checks  # noqa: F401  (registers the system checks)
        from mcp_tools.authoring.registry import default_registry
        from mcp_tools.catalogue.surfaces import prepare
        from mcp_tools.management.expiring import register_installed
        from mcp_tools.observability import connect as connect_observability
        from mcp_tools.operator import admin  # noqa: F401  (the admin's autodiscovery looks for mcp_tools.admin)

        # Like admin.py: importing an app's mcp.py registers its tools. A tool that breaks a
        # registration rule is left out and reported by the system check mcp_tools.E009 (with
        # its name and the rule), so `check` says what to change instead of a traceback;
        # runserver and mcp_tools.serving.asgi refuse to start on it.
        with default_registry.deferring_problems():
            autodiscover_modules("mcp")
        try:
            prepare(default_registry)
        except ImproperlyConfigured as problem:  # e.g. TENANCY_ROLES that does not import
            default_registry.problems.append(f"The MCP catalogue cannot be prepared: {problem}")
        connect_observability()  # observability: its system checks, the metrics' receivers
        register_installed()  # what manage.py purge_expired sweeps
