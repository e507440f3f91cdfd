"""Shared model plumbing for tenant-owned rows."""

from __future__ import annotations

from typing import Any

from django.db import models

from tenancy.scoping import TenantScopedManager


class TenantOwned(models.Model):
    """Abstract base: a ``farm`` FK, a fail-closed ``objects`` and a plain ``all_tenants``."""

    farm = models.ForeignKey("cluck.Farm", on_delete=models.CASCADE, related_name="+")

    all_tenants: models.Manager[Any] = models.Manager()
    objects = TenantScopedManager("farm")

    class Meta:
        abstract = True
        default_manager_name = "all_tenants"
        base_manager_name = "all_tenants"
