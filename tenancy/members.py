"""The membership model in use: tenancy's own, or the project's (``TENANCY_MEMBERSHIP_MODEL``).

Every read and write of memberships inside the toolkit goes through here, by the model's own
field names (``USER_FIELD``, ``TENANT_FIELD``, ``ROLE_FIELD``), never by ``tenancy.Membership``
directly: a project that names its own table must not find a second one being consulted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from tenancy import conf
from tenancy.models import AbstractMembership


def get_membership_model() -> type[AbstractMembership]:
    """The model ``TENANCY_MEMBERSHIP_MODEL`` names (default ``tenancy.Membership``).

    Raises:
        ImproperlyConfigured: the setting names no installed model, or one that does not
            inherit ``AbstractMembership`` (system check ``tenancy.E007`` says the same).
    """
    label = conf.membership_model_label()
    try:
        model = apps.get_model(label, require_ready=False)
    except (ValueError, LookupError) as exc:
        raise ImproperlyConfigured(
            f"{conf.MEMBERSHIP_MODEL_SETTING} refers to {label!r}, which is not an installed model."
        ) from exc
    if not issubclass(model, AbstractMembership):
        raise ImproperlyConfigured(
            f"{conf.MEMBERSHIP_MODEL_SETTING} refers to {label!r}, which does not inherit "
            "tenancy.models.AbstractMembership."
        )
    return model


def memberships(
    *, user: Any = None, tenant: Any = None, live: bool = False
) -> models.QuerySet[Any]:
    """Memberships of ``user`` and/or in ``tenant``; ``live``: not disabled."""
    model = get_membership_model()
    lookup: dict[str, Any] = {}
    if user is not None:
        lookup[model.USER_FIELD] = user
    if tenant is not None:
        lookup[model.TENANT_FIELD] = tenant
    if live:
        lookup["disabled_at__isnull"] = True
    return model._default_manager.filter(**lookup)


def with_user_and_tenant(queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
    model = queryset.model
    return queryset.select_related(model.USER_FIELD, model.TENANT_FIELD)


def create_membership(*, user: Any, tenant: Any, roles: Iterable[str] = ()) -> AbstractMembership:
    model = get_membership_model()
    membership = model(**{model.USER_FIELD: user, model.TENANT_FIELD: tenant})
    membership.set_roles(sorted(set(roles)))
    membership.save()
    return membership


def user_field_path(model: type[AbstractMembership], name: str) -> str:
    """A lookup through the membership's user (``user__email``), by the model's field name."""
    return f"{model.USER_FIELD}__{name}"


def related_paths(prefix: str) -> tuple[str, str]:
    """``select_related`` paths to the user and tenant of the membership at ``prefix``
    (``"membership"`` → ``("membership__user", "membership__tenant")`` by default)."""
    model = get_membership_model()
    return (f"{prefix}__{model.USER_FIELD}", f"{prefix}__{model.TENANT_FIELD}")


def user_lookup(prefix: str) -> str:
    """The lookup of the user of the membership at ``prefix`` (``"membership__user"``)."""
    return f"{prefix}__{get_membership_model().USER_FIELD}"
