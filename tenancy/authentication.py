"""Deprecated: moved to ``tenancy.drf_authentication``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.drf_authentication", old=__name__)
