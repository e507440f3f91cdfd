"""Fail-closed tenant-owned querysets.

A tenant-scoped manager refuses to run a query until it was narrowed with ``for_tenant(...)``
to a *resolved* tenant. The explicit, greppable escape hatch is ``.unscoped("<reason>")``
(admin, migrations, management commands); Django's own machinery (admin forms, cascades) uses a
plain default manager.

Two ways to adopt it:

- a new model: ``objects = TenantScopedManager(tenant_field="store")`` beside a plain default
  manager (``all_tenants``), so every query through ``objects`` must name its tenant;
- an existing model: keep ``objects`` as it is and add the scoped manager under another name,
  ``scoped = TenantScopedManager(tenant_field="store")`` — or, to keep your own queryset
  methods, ``scoped = ScopedQuerySet.as_manager()`` where ``ScopedQuerySet`` puts
  ``TenantScopedQuerySetMixin`` before your queryset class. Existing ``Model.objects`` calls
  keep working while new code moves to ``Model.scoped.for_tenant(...)``.

System check ``tenancy.W001`` warns when a scoped manager is a model's default or base manager.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from django.db import models

from tenancy.context import TenantContext
from tenancy.exceptions import TenantNotResolvedError

if TYPE_CHECKING:
    _QuerySetBase = models.QuerySet[Any]
else:
    _QuerySetBase = object


class TenantScopedQuerySetMixin(_QuerySetBase):
    """The fail-closed behaviour, for a project's own ``QuerySet`` subclass to adopt.

    Put it first: ``class ScopedProductQuerySet(TenantScopedQuerySetMixin, ProductQuerySet)``,
    with ``tenant_field`` naming the foreign key to the tenant. Every way a query runs (fetch,
    iterate, count, exists, aggregate, update, delete) raises ``TenantNotResolvedError`` until
    ``for_tenant`` or ``unscoped`` cleared it.
    """

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


class TenantScopedQuerySet(TenantScopedQuerySetMixin, models.QuerySet[Any]):
    """A plain ``QuerySet`` that fails closed until narrowed to a tenant."""


def is_tenant_scoped(manager: Any) -> bool:
    """Whether ``manager``'s querysets fail closed (a ``TenantScopedQuerySetMixin`` queryset)."""
    queryset_class = getattr(manager, "_queryset_class", None)
    return isinstance(queryset_class, type) and issubclass(
        queryset_class, TenantScopedQuerySetMixin
    )


class TenantScopedManager(models.Manager[Any]):
    """Manager whose querysets fail closed until narrowed to a tenant.

    ``objects`` of a new model, or a second manager (``scoped``) of an existing one whose
    ``objects`` must keep working. ``TenantScopedManager.from_queryset(ScopedQuerySet)`` takes
    a queryset class that includes ``TenantScopedQuerySetMixin``.
    """

    _queryset_class = TenantScopedQuerySet

    def __init__(self, tenant_field: str | None = None) -> None:
        """``tenant_field``: the foreign key to the tenant; ``None`` keeps the queryset class's
        own (``"tenant"`` unless it says otherwise)."""
        super().__init__()
        self.tenant_field = tenant_field

    def deconstruct(self) -> Any:
        # Keep migrations free of this manager: historical models use plain managers.
        return super().deconstruct()

    def get_queryset(self) -> Any:
        if not is_tenant_scoped(self):
            raise TypeError(
                f"{type(self).__name__}: the queryset class must include "
                "TenantScopedQuerySetMixin, or its queries would not fail closed"
            )
        qs: Any = super().get_queryset()
        if self.tenant_field is not None:
            qs.tenant_field = self.tenant_field
        return qs

    def for_tenant(self, tenant: TenantContext | Any) -> Any:
        return self.get_queryset().for_tenant(tenant)

    def unscoped(self, reason: str) -> Any:
        return self.get_queryset().unscoped(reason)
