"""Password and active-flag changes bump the credential epoch.

A receiver rather than a service call because Django itself changes passwords (admin,
``changepassword``, password reset) outside any code of ours; missing one would leave old
tokens alive after a password change.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save
from django.dispatch import receiver

User = get_user_model()


def _watched(sender: Any) -> list[str]:
    """The credential fields of the user model: ``password``, and ``is_active`` when it is a
    column (a custom user model may keep it a constant)."""
    names = {field.attname for field in sender._meta.concrete_fields}
    return [name for name in ("password", "is_active") if name in names]


@receiver(pre_save, sender=User, dispatch_uid="tenancy.password_change.detect")
def _detect_password_change(sender: Any, instance: Any, **kwargs: Any) -> None:
    if instance.pk is None:
        return
    fields = _watched(sender)
    old = sender._default_manager.filter(pk=instance.pk).values(*fields).first()
    instance._tenancy_password_changed = old is not None and any(
        old[name] != getattr(instance, name) for name in fields
    )


@receiver(post_save, sender=User, dispatch_uid="tenancy.password_change.bump")
def _bump_on_password_change(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    if not created and getattr(instance, "_tenancy_password_changed", False):
        from tenancy.services import user_credentials_changed

        user_credentials_changed(user=instance)
        instance._tenancy_password_changed = False
