"""Deprecated: moved to ``tenancy.rates.throttling``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.rates.throttling", old=__name__)
