"""An existing model adopts tenant scoping beside its ``objects``, which keeps working."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from django.db import models

from tenancy import TenantContext, TenantNotResolvedError
from tenancy.checks import check_scoped_managers
from tenancy.scoping import TenantScopedManager
from tests.factories import FarmFactory
from tests.mutations import mutation
from tests.testapps.legacy.models import Memo, Note

pytestmark = pytest.mark.django_db


def _resolved(tenant) -> TenantContext:
    context = TenantContext()
    context.resolve(tenant)
    return context


@mutation(
    "tenancy/scoping.py",
    find="        clone._tenancy_cleared = self._tenancy_cleared\n",
    replace="",
)
def test_objects_keeps_working_and_the_scoped_manager_fails_closed() -> None:
    """Mutation: a clone forgets it was narrowed (``_clone``) → red: the project's own
    ``pinned()`` after ``for_tenant`` refuses to run."""
    mine, theirs = FarmFactory.create(), FarmFactory.create()
    Note.objects.create(account=mine, title="a", pinned=True)
    Note.objects.create(account=theirs, title="b", pinned=True)
    # The project's existing calls, manager and queryset methods are untouched.
    assert Note._default_manager is Note.objects
    assert Note.objects.pinned().count() == 2
    assert sorted(Note.objects.values_list("title", flat=True)) == ["a", "b"]
    # The scoped name refuses until narrowed, then keeps the project's own methods.
    with pytest.raises(TenantNotResolvedError):
        list(Note.scoped.pinned())
    with pytest.raises(TenantNotResolvedError):
        Note.scoped.count()
    assert [n.title for n in Note.scoped.for_tenant(_resolved(mine)).pinned()] == ["a"]
    assert Note.scoped.unscoped("test: both tenants").pinned().count() == 2


def test_a_tenant_scoped_manager_as_second_manager_leaves_objects_alone() -> None:
    mine, theirs = FarmFactory.create(), FarmFactory.create()
    Memo.objects.create(tenant=mine, text="x")
    Memo.objects.create(tenant=theirs, text="y")
    assert Memo._default_manager is Memo.objects and Memo.objects.count() == 2
    with pytest.raises(TenantNotResolvedError):
        Memo.scoped.exists()
    assert list(Memo.scoped.for_tenant(theirs).values_list("text", flat=True)) == ["y"]


@mutation(
    "tenancy/scoping.py",
    find="        if not is_tenant_scoped(self):\n",
    replace="        if False:\n",
)
def test_a_scoped_manager_over_a_queryset_without_the_mixin_is_refused() -> None:
    """Mutation: accept a plain queryset class → red (its queries would run unscoped)."""
    manager = TenantScopedManager.from_queryset(models.QuerySet)()
    manager.model = Memo
    with pytest.raises(TypeError, match="TenantScopedQuerySetMixin"):
        manager.get_queryset()


@mutation(
    "tenancy/checks.py",
    find="            if is_tenant_scoped(manager):\n",
    replace="            if False:\n",
)
def test_a_scoped_default_manager_is_a_warning() -> None:
    """Mutation: never warn → red."""
    plain: models.Manager[Any] = models.Manager()
    scoped = TenantScopedManager()
    scoped.name = "objects"
    model = SimpleNamespace(
        _meta=SimpleNamespace(label="legacy.Ticket"), _default_manager=scoped, _base_manager=plain
    )
    config = SimpleNamespace(get_models=lambda: [model, Note, Memo])
    warnings = check_scoped_managers(app_configs=[config])
    assert [(w.id, w.obj) for w in warnings] == [("tenancy.W001", model)]
    assert check_scoped_managers() == []  # the farm, the shop-like test apps: all plain defaults
