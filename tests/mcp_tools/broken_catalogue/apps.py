from django.apps import AppConfig


class BrokenCatalogueConfig(AppConfig):
    """Installed only by a subprocess test: its mcp.py collides with a fixture tool's name."""

    name = "tests.mcp_tools.broken_catalogue"
    label = "mcp_broken_catalogue"
