from django.apps import AppConfig


class McpSurfaceConfig(AppConfig):
    """Test-only resources, prompts, input requests and tasks: the conformance suites'
    fixtures for the whole MCP surface, and controllable ones for the guards."""

    name = "tests.testapps.mcp_surface"
    label = "mcp_surface"
    default_auto_field = "django.db.models.BigAutoField"
