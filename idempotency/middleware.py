"""Placeholder pass-through; the Idempotency-Key middleware is being built."""

from django.utils.deprecation import MiddlewareMixin


class IdempotencyMiddleware(MiddlewareMixin):
    pass
