"""ASGI entry point (``uvicorn cluck.asgi:application``). Needs no lifespan support."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")
application = get_asgi_application()
