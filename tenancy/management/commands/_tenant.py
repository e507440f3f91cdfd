"""What the tenancy commands share: the ``--tenant`` option (and its project-noun alias)."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import CommandError, CommandParser

from tenancy import conf


def add_tenant_argument(parser: CommandParser) -> None:
    """``--tenant CODE``, also spelled ``--<noun>`` when ``TENANCY_TENANT_NOUN`` is not
    "tenant" (the farm keeps ``--farm``)."""
    noun = str(conf.get("TENANT_NOUN")).strip().lower().replace(" ", "-")
    flags = ["--tenant"] if noun == "tenant" else ["--tenant", f"--{noun}"]
    parser.add_argument(*flags, dest="tenant", required=True, help=f"The {noun}'s code.")


def tenant_by_code(code: str, *, require_active: bool = True) -> Any:
    """The tenant whose code is ``code``.

    Raises:
        CommandError: no such tenant, or (``require_active``) it is suspended.
    """
    noun = conf.get("TENANT_NOUN")
    model = apps.get_model(conf.get("TENANT_MODEL"))
    code = code.strip().lower()
    lookup = {f"{conf.get('TENANT_CODE_FIELD')}__iexact": code}
    tenant = model._default_manager.filter(**lookup).first()
    if tenant is None:
        raise CommandError(f"No {noun} has the code {code!r}.")
    if require_active and not conf.tenant_is_active(tenant):
        raise CommandError(f"The {noun} {code!r} is suspended.")
    return tenant
