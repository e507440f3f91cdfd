"""Placeholder pass-through; the /mcp body cap is being built."""

from django.utils.deprecation import MiddlewareMixin


class BodyCapMiddleware(MiddlewareMixin):
    pass
