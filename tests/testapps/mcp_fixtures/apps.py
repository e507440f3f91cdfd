from django.apps import AppConfig


class McpFixturesConfig(AppConfig):
    """Test-only tools: the conformance suite's fixtures and controllable tools for guards."""

    name = "tests.testapps.mcp_fixtures"
    label = "mcp_fixtures"
    default_auto_field = "django.db.models.BigAutoField"
