"""The token check's read: token + membership + user + tenant in one statement, compiled once.

Every request runs this read. Compiling and materialising the equivalent
``select_related(...).get()`` cost about 0.7 ms of every authenticated request. The SQL text
depends only on the models, so it is built once per database alias. The data is still read
fresh from the database on every call: the cache holds SQL, never rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections, models, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import Col

from tenancy.models import AccessToken, Membership

Converter = Callable[[Any, Any, BaseDatabaseWrapper], Any]


@dataclass(frozen=True)
class _Part:
    """One model's slice of the row: where it starts, its fields and their DB converters."""

    model: type[models.Model]
    start: int
    attnames: tuple[str, ...]
    columns: tuple[tuple[Col, tuple[Converter, ...]], ...]

    def build(self, alias: str, row: tuple[Any, ...], connection: BaseDatabaseWrapper) -> Any:
        converted = []
        values = row[self.start : self.start + len(self.attnames)]
        for value, (col, converters) in zip(values, self.columns, strict=True):
            for convert in converters:
                value = convert(value, col, connection)
            converted.append(value)
        return self.model.from_db(alias, self.attnames, converted)


@dataclass(frozen=True)
class _Plan:
    sql: str
    parts: tuple[_Part, ...]  # token, membership, user, tenant
    membership_fk: models.ForeignKey[Any, Any]
    user_fk: models.ForeignKey[Any, Any]
    tenant_fk: models.ForeignKey[Any, Any]


_plans: dict[str, _Plan | None] = {}


def _related(model: type[models.Model], name: str) -> tuple[models.ForeignKey[Any, Any], Any]:
    field = model._meta.get_field(name)
    assert isinstance(field, models.ForeignKey)
    return field, field.related_model


def _column(field: Any) -> str:
    column = field.column
    assert isinstance(column, str), field
    return column


def _plan_for(alias: str) -> _Plan | None:
    """The statement for ``alias``; ``None`` when a model's fields span tables (inheritance)."""
    connection = connections[alias]
    quote = connection.ops.quote_name
    membership_fk, _ = _related(AccessToken, "membership")
    user_fk, user_model = _related(Membership, "user")
    tenant_fk, tenant_model = _related(Membership, "tenant")
    tables = (
        ("t", AccessToken),
        ("m", Membership),
        ("u", user_model),
        ("n", tenant_model),
    )
    if any(model._meta.parents for _, model in tables):
        return None
    parts = []
    selected = []
    for table_alias, model in tables:
        fields = model._meta.concrete_fields
        columns = []
        for field in fields:
            col = field.get_col(table_alias)
            converters = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            columns.append((col, tuple(converters)))
            selected.append(f"{table_alias}.{quote(_column(field))}")
        start = len(selected) - len(fields)
        parts.append(_Part(model, start, tuple(f.attname for f in fields), tuple(columns)))

    def join(table_alias: str, model: Any, fk: Any, from_alias: str) -> str:
        return (
            f"JOIN {quote(model._meta.db_table)} {table_alias} ON {table_alias}."
            f"{quote(_column(fk.target_field))} = {from_alias}.{quote(_column(fk))}"
        )

    sql = (
        f"SELECT {', '.join(selected)} FROM {quote(AccessToken._meta.db_table)} t "
        f"{join('m', Membership, membership_fk, 't')} "
        f"{join('u', user_model, user_fk, 'm')} "
        f"{join('n', tenant_model, tenant_fk, 'm')} "
        f"WHERE t.{quote(_column(AccessToken._meta.get_field('digest')))} = %s"
    )
    return _Plan(sql, tuple(parts), membership_fk, user_fk, tenant_fk)


def fetch_token(token_digest: str) -> AccessToken | None:
    """The token whose digest is ``token_digest``, with membership, user and tenant attached."""
    alias = router.db_for_read(AccessToken)
    try:
        plan = _plans[alias]
    except KeyError:
        plan = _plans.setdefault(alias, _plan_for(alias))
    if plan is None:
        return (
            AccessToken.objects.using(alias)
            .select_related("membership", "membership__user", "membership__tenant")
            .filter(digest=token_digest)
            .first()
        )
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(plan.sql, [token_digest])
        row = cursor.fetchone()
    if row is None:
        return None
    token, membership, user, tenant = (part.build(alias, row, connection) for part in plan.parts)
    plan.user_fk.set_cached_value(membership, user)
    plan.tenant_fk.set_cached_value(membership, tenant)
    plan.membership_fk.set_cached_value(token, membership)
    assert isinstance(token, AccessToken)
    return token
