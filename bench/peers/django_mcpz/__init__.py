"""django-mcpz 1.2.x (``django_mcpz.server.MCPServer``): ``bench_add`` as a ``@server.tool``."""
