"""Deprecated: moved to ``tenancy.tokens.credentials``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.tokens.credentials", old=__name__)
