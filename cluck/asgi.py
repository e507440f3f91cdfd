"""ASGI entry point (``uvicorn cluck.asgi:application``). Needs no lifespan support."""

from __future__ import annotations

import os

from mcp_tools.serving.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")
application = get_asgi_application()
