"""App config: discover every installed app's ``mcp.py`` and prepare the surfaces once."""

from __future__ import annotations

from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class McpToolsConfig(AppConfig):
    name = "mcp_tools"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from mcp_tools import checks  # noqa: F401  (registers the system checks)
        from mcp_tools.observability import connect as connect_observability
        from mcp_tools.registry import default_registry
        from mcp_tools.surfaces import prepare

        # Like admin.py: importing an app's mcp.py registers its tools. A broken catalogue
        # raises ImproperlyConfigured here, so no command (check, runserver, migrate) starts.
        autodiscover_modules("mcp")
        prepare(default_registry)
        connect_observability()  # observability: its system checks, the metrics' receivers
