"""Deprecated: moved to ``tenancy.rates.counters``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.rates.counters", old=__name__)
