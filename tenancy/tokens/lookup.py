"""The token check's read: token + membership + user + tenant in one statement, compiled once.

Every request runs this read. Compiling and materialising the equivalent
``select_related(...).get()`` cost about 0.7 ms of every authenticated request. The SQL text
depends only on the models, so it is built once per database alias. The data is still read
fresh from the database on every call: the cache holds SQL, never rows.

On PostgreSQL the same statement can also count the caller's request on tenancy's rate
counter table (``tenancy.rates.throttling.PendingCount``): a data-modifying ``WITH`` upserts the
counter row, so the count costs no round trip of its own. The counter's key needs the
membership id, which never changes for a token: it is remembered per token digest after the
first check, and that first request is counted separately. The upsert only counts a token
that is unrevoked, unexpired and of its membership's current credential epoch, so a dead
token cannot spend a live member's budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, Protocol

from django.db import connections, models, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import Col
from django.utils import timezone

from tenancy.members import get_membership_model, related_paths
from tenancy.models import AccessToken, RateCounter
from tenancy.process import ProcessObject

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
    # The same read with the rate count (PostgreSQL only; ``None`` elsewhere).
    counted_sql: str | None = None


class CountingCheck(Protocol):
    """What the check needs of a count it carries (``tenancy.rates.throttling.PendingCount``)."""

    value: int | None

    def prepare(self, membership_id: int) -> tuple[str, int]: ...


# Process state (mcp_tools.operator.process): the compiled read per database alias, and token
# digest → membership id (a token never changes membership; bounded by MAX_REMEMBERED).
PLANS: Final = ProcessObject[dict[str, "_Plan | None"]](
    "tokens.plans", dict, kind="cache", renew=dict.clear
)
_plans = PLANS.get()
MEMBERSHIPS: Final = ProcessObject[dict[str, int]](
    "tokens.memberships", dict, kind="cache", renew=dict.clear
)
_memberships = MEMBERSHIPS.get()
MAX_REMEMBERED: Final = 10_000


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
    membership_fk, membership_model = _related(AccessToken, "membership")
    user_fk, user_model = _related(membership_model, membership_model.USER_FIELD)
    tenant_fk, tenant_model = _related(membership_model, membership_model.TENANT_FIELD)
    tables = (
        ("t", AccessToken),
        ("m", membership_model),
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

    token_table = quote(AccessToken._meta.db_table)
    digest_column = quote(_column(AccessToken._meta.get_field("digest")))
    rest = (
        f"FROM {token_table} t "
        f"{join('m', membership_model, membership_fk, 't')} "
        f"{join('u', user_model, user_fk, 'm')} "
        f"{join('n', tenant_model, tenant_fk, 'm')} "
        f"WHERE t.{digest_column} = %s"
    )
    sql = f"SELECT {', '.join(selected)} {rest}"
    counted_sql = None
    if connection.vendor == "postgresql" and router.db_for_write(RateCounter) == alias:
        counted_sql = f"{_counting_cte(quote, membership_fk)} SELECT {', '.join(selected)}, "
        counted_sql += f"(SELECT value FROM counted) {rest}"
    return _Plan(sql, tuple(parts), membership_fk, user_fk, tenant_fk, counted_sql)


def _counting_cte(quote: Callable[[str], str], membership_fk: Any) -> str:
    """``WITH counted AS (upsert … RETURNING value)``: django-ratelimit's ``add`` + ``incr``.

    Parameters: key, expires, digest, membership id, now (token expiry), now, now (window).
    A live row is incremented; a missing or expired one starts again at 1 with the new expiry.
    """
    counter = quote(RateCounter._meta.db_table)
    key, value, expires = (quote(_column(RateCounter._meta.get_field(f))) for f in _COUNTER)
    token = {f: quote(_column(AccessToken._meta.get_field(f))) for f in _TOKEN_LIVENESS}
    member_pk = quote(_column(membership_fk.target_field))
    membership = get_membership_model()
    member_epoch = quote(_column(membership._meta.get_field("credential_epoch")))
    member_column = quote(_column(membership_fk))
    return (
        f"WITH counted AS (INSERT INTO {counter} AS c ({key}, {value}, {expires}) "
        f"SELECT %s, 1, %s FROM {quote(AccessToken._meta.db_table)} ct "
        f"JOIN {quote(membership._meta.db_table)} cm ON cm.{member_pk} = ct.{member_column} "
        f"WHERE ct.{token['digest']} = %s AND ct.{member_column} = %s "
        f"AND ct.{token['revoked_at']} IS NULL "
        f"AND (ct.{token['expires_at']} IS NULL OR ct.{token['expires_at']} > %s) "
        f"AND ct.{token['credential_epoch']} = cm.{member_epoch} "
        f"ON CONFLICT ({key}) DO UPDATE SET "
        f"{value} = CASE WHEN c.{expires} <= %s THEN 1 ELSE c.{value} + 1 END, "
        f"{expires} = CASE WHEN c.{expires} <= %s THEN EXCLUDED.{expires} ELSE c.{expires} END "
        f"RETURNING c.{value} AS value)"
    )


def _membership_relations() -> tuple[str, str, str]:
    return ("membership", *related_paths("membership"))


_COUNTER: Final = ("key", "value", "expires")
_TOKEN_LIVENESS: Final = ("digest", "revoked_at", "expires_at", "credential_epoch")


def fetch_token(token_digest: str, *, count: CountingCheck | None = None) -> AccessToken | None:
    """The token whose digest is ``token_digest``, with membership, user and tenant attached.

    With ``count``, the same statement also counts the request on the rate counter table when
    it can (PostgreSQL, a token seen before by this process) and sets ``count.value``; it is
    left ``None`` when the caller must count separately.
    """
    alias = router.db_for_read(AccessToken)
    try:
        plan = _plans[alias]
    except KeyError:
        plan = _plans.setdefault(alias, _plan_for(alias))
    if plan is None:
        return (
            AccessToken.objects.using(alias)
            .select_related(*_membership_relations())
            .filter(digest=token_digest)
            .first()
        )
    connection = connections[alias]
    membership_id = _memberships.get(token_digest) if count is not None else None
    with connection.cursor() as cursor:
        if count is not None and membership_id is not None and plan.counted_sql is not None:
            key, seconds = count.prepare(membership_id)
            now = timezone.now()
            expires = now + timedelta(seconds=seconds)
            params: list[Any] = [key, expires, token_digest, membership_id]
            params += [now, now, now, token_digest]
            cursor.execute(plan.counted_sql, params)
            row = cursor.fetchone()
            if row is not None:
                count.value = row[-1]
        else:
            cursor.execute(plan.sql, [token_digest])
            row = cursor.fetchone()
    if row is None:
        return None
    token, membership, user, tenant = (part.build(alias, row, connection) for part in plan.parts)
    if membership_id is None:
        if len(_memberships) >= MAX_REMEMBERED:
            _memberships.clear()
        _memberships[token_digest] = membership.pk
    plan.user_fk.set_cached_value(membership, user)
    plan.tenant_fk.set_cached_value(membership, tenant)
    plan.membership_fk.set_cached_value(token, membership)
    assert isinstance(token, AccessToken)
    return token
