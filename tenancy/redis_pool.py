"""Deprecated: moved to ``tenancy.rates.redis_pool``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.rates.redis_pool", old=__name__)
