"""Deployment checks of the farm project (``manage.py check --deploy``)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.security, deploy=True)
def check_secret_key_source(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A key generated under var/ is fine on loopback; a deployment sets its own."""
    if getattr(settings, "SECRET_KEY_FILE", None) is None:
        return []
    return [
        checks.Warning(
            f"SECRET_KEY was generated for this installation ({settings.SECRET_KEY_FILE}).",
            hint="Set SECRET_KEY in the environment of a deployed server.",
            id="cluck.W001",
        )
    ]
