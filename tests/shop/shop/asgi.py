"""ASGI entry point: ``uvicorn shop.asgi:application --lifespan off``."""

import os

from mcp_tools.serving.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")
application = get_asgi_application()
