"""App config: project the prepared MCP surfaces to A2A skills once, after ``mcp_tools``."""

from __future__ import annotations

from django.apps import AppConfig
from django.core.exceptions import ImproperlyConfigured


class A2AToolsConfig(AppConfig):
    name = "a2a_tools"
    verbose_name = "A2A skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.apps import apps

        if not apps.is_installed("mcp_tools"):
            raise ImproperlyConfigured("a2a_tools projects mcp_tools' tools: install mcp_tools")
        names = [config.name for config in apps.get_app_configs()]
        if names.index("a2a_tools") < names.index("mcp_tools"):
            raise ImproperlyConfigured(
                "List a2a_tools after mcp_tools in INSTALLED_APPS: it projects the catalogue "
                "mcp_tools prepares"
            )
        from a2a_tools.purge import EXPIRING
        from mcp_tools.management import retention

        retention.register(EXPIRING)
        from a2a_tools import checks

        if not checks.sdk_installed():
            return  # a2a_tools.E001 names the extra; /a2a is not routed (a2a_tools.urls)
        from a2a_tools.skills import projection

        # Like the MCP catalogue: a broken projection stops every command at start-up.
        projection()
