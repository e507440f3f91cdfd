from django.apps import AppConfig


class McpToolsConfig(AppConfig):
    name = "mcp_tools"
    verbose_name = "MCP tools"
    default_auto_field = "django.db.models.BigAutoField"
