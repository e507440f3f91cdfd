"""django-mcp-server 0.5.x (``mcp_server``, on mcp 1.x): ``bench_add`` as an ``MCPToolset``."""
