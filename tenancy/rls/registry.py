"""Which tables are tenant-owned, and by which column: the settings and ``declare`` calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model

from tenancy import conf

# Declared in code (an app's ready(), next to the model), beside TENANCY_RLS_MODELS.
_declared: dict[str, str] = {}


def declare(model: type[Model] | str, *, field: str) -> None:
    """Declare ``model`` tenant-owned by ``field`` (a foreign key to the tenant, or the
    tenant's key itself), without touching its base class or its managers."""
    label = model if isinstance(model, str) else model._meta.label
    _declared[label] = field


@dataclass(frozen=True)
class Declared:
    """One declared table: its name, the tenant column and that column's SQL type."""

    model: type[Model]
    table: str
    column: str
    sql_type: str


def _labels() -> dict[str, str]:
    return {**dict(conf.get("RLS_MODELS") or {}), **_declared}


def declared(using: str = DEFAULT_DB_ALIAS) -> list[Declared]:
    """Every declared model, in label order.

    Raises:
        LookupError: a label names no installed model.
        django.core.exceptions.FieldDoesNotExist: a declared field is not on its model.
    """
    connection = connections[using]
    tables = []
    for label, field_name in sorted(_labels().items()):
        model: Any = apps.get_model(label)
        field = model._meta.get_field(field_name)
        tables.append(
            Declared(model, model._meta.db_table, field.column, field.db_type(connection))
        )
    return tables


def any_declared() -> bool:
    return bool(_labels())


def enabled(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Tool calls take the role: on (``TENANCY_RLS``), on PostgreSQL, with a table declared."""
    return bool(conf.get("RLS")) and connections[using].vendor == "postgresql" and any_declared()
