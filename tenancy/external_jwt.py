"""Deprecated: moved to ``tenancy.idp.external_jwt``; this path works until the next release."""

from tenancy._moved import moved_to

__getattr__ = moved_to("tenancy.idp.external_jwt", old=__name__)
