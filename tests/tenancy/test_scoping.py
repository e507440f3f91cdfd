"""Tenant-owned querysets fail closed."""

from __future__ import annotations

import pytest

from cluck.models import AuditEvent, Flock, House
from tenancy import TenantContext, TenantNotResolvedError
from tests.factories import FarmFactory, FlockFactory
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


@mutation(
    "tenancy/scoping.py",
    find="    def _fetch_all(self) -> None:\n        self._check_scoped()\n",
    replace="    def _fetch_all(self) -> None:\n",
)
def test_querying_a_tenant_owned_model_without_a_tenant_raises():
    """Mutation: remove ``self._check_scoped()`` from ``TenantScopedQuerySet._fetch_all`` → red."""
    FlockFactory.create()
    with pytest.raises(TenantNotResolvedError, match="for_tenant"):
        list(Flock.objects.all())
    with pytest.raises(TenantNotResolvedError):
        Flock.objects.filter(name="x").first()
    with pytest.raises(TenantNotResolvedError):
        Flock.objects.get(name="x")


@mutation(
    "tenancy/scoping.py",
    find="    def count(self) -> int:\n        self._check_scoped()\n",
    replace="    def count(self) -> int:\n",
)
@mutation(
    "tenancy/scoping.py",
    find="    def exists(self) -> bool:\n        self._check_scoped()\n",
    replace="    def exists(self) -> bool:\n",
)
@mutation(
    "tenancy/scoping.py",
    find="    def update(self, **kwargs: Any) -> int:\n        self._check_scoped()\n",
    replace="    def update(self, **kwargs: Any) -> int:\n",
)
@mutation(
    "tenancy/scoping.py",
    find="    def delete(self) -> tuple[int, dict[str, int]]:\n        self._check_scoped()\n",
    replace="    def delete(self) -> tuple[int, dict[str, int]]:\n",
)
@mutation(
    "tenancy/scoping.py",
    find=(
        "    def aggregate(self, *args: Any, **kwargs: Any) -> dict[str, Any]:\n"
        "        self._check_scoped()\n"
    ),
    replace="    def aggregate(self, *args: Any, **kwargs: Any) -> dict[str, Any]:\n",
)
@mutation(
    "tenancy/scoping.py",
    find=(
        "    def iterator(self, chunk_size: int | None = None) -> Any:\n"
        "        self._check_scoped()\n"
    ),
    replace="    def iterator(self, chunk_size: int | None = None) -> Any:\n",
)
@pytest.mark.parametrize(
    "operation", ["count", "exists", "update", "delete", "delete-leaf", "aggregate", "iter"]
)
def test_every_query_shape_fails_closed(operation):
    """Mutation: drop the check from any one of count/exists/update/delete/aggregate/iterator
    → the matching case goes red."""
    from django.db.models import Count

    FlockFactory.create()
    qs = Flock.objects.filter(initial_count__gt=0)
    run = {
        "count": qs.count,
        "exists": qs.exists,
        "update": lambda: qs.update(breed="x"),
        "delete": qs.delete,
        # Nothing refers to an audit event: Django deletes it without fetching the rows first
        # (its fast path), so only ``delete``'s own check stands in the way.
        "delete-leaf": AuditEvent.objects.filter(pk__gt=0).delete,
        "aggregate": lambda: qs.aggregate(n=Count("id")),
        "iter": lambda: list(qs.iterator()),
    }[operation]
    with pytest.raises(TenantNotResolvedError):
        run()


@mutation(
    "tenancy/scoping.py",
    find="            if not tenant.is_resolved:",
    replace="            if False:",
)
def test_an_unresolved_tenant_context_is_refused_by_for_tenant():
    """Mutation: let ``for_tenant`` accept an unresolved context (filter on None) → red."""
    with pytest.raises(TenantNotResolvedError, match="unresolved"):
        Flock.objects.for_tenant(TenantContext())


def test_for_tenant_sees_only_that_tenants_rows():
    mine, theirs = FlockFactory.create(), FlockFactory.create()
    tenant = TenantContext()
    tenant.resolve(mine.farm)
    assert list(Flock.objects.for_tenant(tenant)) == [mine]
    assert not Flock.objects.for_tenant(tenant).filter(pk=theirs.pk).exists()
    assert list(Flock.objects.for_tenant(theirs.farm).values_list("pk", flat=True)) == [theirs.pk]


def test_the_escape_hatch_is_explicit_and_needs_a_reason():
    FlockFactory.create(), FlockFactory.create()
    assert Flock.objects.unscoped("test: cross-tenant count").count() == 2
    with pytest.raises(ValueError):
        Flock.objects.unscoped("")


def test_djangos_own_machinery_uses_the_plain_default_manager():
    farm = FarmFactory.create()
    House.all_tenants.create(farm=farm, name="A")
    assert House._default_manager is House.all_tenants
    assert House.all_tenants.count() == 1
