"""django-mcp-server's peer project (``bench/peers/__init__.py``)."""

from bench.peers.project.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "mcp_server", "bench.peers.django_mcp_server"]  # noqa: F405
ROOT_URLCONF = "bench.peers.django_mcp_server.urls"
# Stateless, like /mcp and the other peers: no Django session per MCP session.
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "bench", "stateless": True}
# Only bench_add on the server (its default adds a get_server_instructions tool).
DJANGO_MCP_GET_SERVER_INSTRUCTIONS_TOOL = False
