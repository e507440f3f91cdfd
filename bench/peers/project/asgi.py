"""A peer project's ASGI entry point: Django's own handler (``DJANGO_SETTINGS_MODULE`` names
the peer's settings), as a project using the peer would serve it."""

from django.core.asgi import get_asgi_application

application = get_asgi_application()
