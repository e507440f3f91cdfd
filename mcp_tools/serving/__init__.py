"""The HTTP edge: the ``/mcp`` view, the ASGI application and uvicorn protocol, the body cap,
error pages, streaming and the server card."""
