"""Fail-closed tenant-owned querysets.

``Model.objects`` on a tenant-owned model refuses to run a query until it was narrowed with
``for_tenant(...)`` to a *resolved* tenant. The explicit, greppable escape hatch is
``Model.objects.unscoped("<reason>")`` (admin, migrations, management commands); Django's own
machinery (admin forms, cascades) uses the plain ``all_tenants`` default manager.
"""

from __future__ import annotations

from typing import Any, Self

from django.db import models

from tenancy.context import TenantContext
from tenancy.exceptions import TenantNotResolvedError


class TenantScopedQuerySet(models.QuerySet[Any]):
    tenant_field = "tenant"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tenancy_cleared = False

    def _clone(self) -> Self:
        clone = super()._clone()  # type: ignore[misc]
        clone._tenancy_cleared = self._tenancy_cleared
        clone.tenant_field = self.tenant_field
        return clone

    def for_tenant(self, tenant: TenantContext | Any) -> Self:
        """Narrow to one tenant: a resolved ``TenantContext`` or a tenant model instance."""
        if isinstance(tenant, TenantContext):
            if not tenant.is_resolved:
                raise TenantNotResolvedError(
                    f"{self.model.__name__}: for_tenant() got an unresolved tenant"
                )
            tenant_id = tenant.id
        else:
            tenant_id = getattr(tenant, "pk", None)
            if tenant_id is None:
                raise TenantNotResolvedError(f"{self.model.__name__}: for_tenant() got no tenant")
        clone = self.filter(**{f"{self.tenant_field}_id": tenant_id})
        clone._tenancy_cleared = True
        return clone

    def unscoped(self, reason: str) -> Self:
        """Deliberately cross-tenant (admin, migrations, commands). ``reason`` documents why."""
        if not reason:
            raise ValueError("unscoped() needs a reason")
        clone = self.all()
        clone._tenancy_cleared = True
        return clone

    def _check_scoped(self) -> None:
        if not self._tenancy_cleared:
            raise TenantNotResolvedError(
                f"{self.model.__name__} is tenant-owned: call .for_tenant(tenant) first "
                "(or .unscoped(reason) where crossing tenants is intended)"
            )

    def _fetch_all(self) -> None:
        self._check_scoped()
        super()._fetch_all()

    def iterator(self, chunk_size: int | None = None) -> Any:
        self._check_scoped()
        return super().iterator(chunk_size=chunk_size)

    def count(self) -> int:
        self._check_scoped()
        return super().count()

    def exists(self) -> bool:
        self._check_scoped()
        return super().exists()

    def aggregate(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._check_scoped()
        return super().aggregate(*args, **kwargs)

    def update(self, **kwargs: Any) -> int:
        self._check_scoped()
        return super().update(**kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        self._check_scoped()
        return super().delete()


class TenantScopedManager(models.Manager[Any]):
    """Manager whose querysets fail closed until narrowed to a tenant."""

    def __init__(self, tenant_field: str = "tenant") -> None:
        super().__init__()
        self.tenant_field = tenant_field

    def deconstruct(self) -> Any:
        # Keep migrations free of this manager: historical models use plain managers.
        return super().deconstruct()

    def get_queryset(self) -> TenantScopedQuerySet:
        qs = TenantScopedQuerySet(model=self.model, using=self._db, hints=self._hints)  # type: ignore[attr-defined]
        qs.tenant_field = self.tenant_field
        return qs

    def for_tenant(self, tenant: TenantContext | Any) -> TenantScopedQuerySet:
        return self.get_queryset().for_tenant(tenant)

    def unscoped(self, reason: str) -> TenantScopedQuerySet:
        return self.get_queryset().unscoped(reason)
