"""ASGI entry point of Harbor: ``uvicorn config.asgi:application --lifespan off``."""

import os

from mcp_tools.serving.asgi import get_asgi_application

# If DJANGO_SETTINGS_MODULE is unset, default to the local settings
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
application = get_asgi_application()
