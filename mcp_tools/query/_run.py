"""One structured query: checked against the caller's declared fields, narrowed to the tenant,
run bounded (rows, a ``statement_timeout``) and shaped into JSON rows. Never SQL from the agent.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from typing import Any, Final

from django.db import OperationalError, connections, models, transaction
from django.db.models.functions import TruncDay, TruncMonth, TruncWeek
from pydantic import BaseModel

from mcp_tools import CallContext, ToolError
from mcp_tools.execution import CODE_INVALID_ARGUMENTS
from mcp_tools.query._declare import KIND_AGGREGATES, KIND_LOOKUPS, QueryField, QueryModel
from tenancy import rls

CODE_TIMED_OUT: Final = "Query.TimedOut"
_CANCELED: Final = "57014"  # PostgreSQL's query_canceled: the statement_timeout fired
_TRUNC: Final = {"day": TruncDay, "week": TruncWeek, "month": TruncMonth}
_AGGREGATE: Final = {
    "count": models.Count,
    "sum": models.Sum,
    "avg": models.Avg,
    "min": models.Min,
    "max": models.Max,
}


def invalid(location: str, message: str) -> ToolError:
    """The arguments' error (the framework's code and shape), naming where it is wrong."""
    return ToolError(
        CODE_INVALID_ARGUMENTS,
        f"Invalid arguments: {location}: {message}",
        {"errors": [{"field": location, "code": "query", "message": message}]},
    )


def narrowed(declared: QueryModel, ctx: CallContext, using: str) -> models.QuerySet[Any]:
    """The model's rows of the caller's tenant only: the first line (row-level security, when
    on, is the second). Through the model's scoped manager when it has one."""
    model = declared.model
    if declared.scoped_manager is not None:
        manager = getattr(model, declared.scoped_manager)
        return manager.db_manager(using).get_queryset().for_tenant(ctx.tenant)
    attname = model._meta.get_field(declared.tenant_field).attname  # type: ignore[union-attr]
    return model._base_manager.db_manager(using).filter(**{attname: ctx.tenant.id})


def _field(fields: dict[str, QueryField], name: str, location: str, model: str) -> QueryField:
    field = fields.get(name)
    if field is None:
        raise invalid(location, f"{name!r} is no field of {model} you may query")
    return field


def _filtered(qs: Any, args: Any, fields: dict[str, QueryField], model: str, max_in: int) -> Any:
    for index, item in enumerate(args.filters):
        where = f"filters.{index}"
        field = _field(fields, item.field, f"{where}.field", model)
        if item.lookup not in KIND_LOOKUPS[field.kind]:
            raise invalid(f"{where}.lookup", f"{item.lookup!r} does not apply to {item.field!r}")
        value = item.value
        try:
            if item.lookup == "isnull":
                if not isinstance(value, bool):
                    raise ValueError("isnull takes true or false")
            elif item.lookup in ("in", "range"):
                size = 2 if item.lookup == "range" else None
                if (
                    not isinstance(value, list)
                    or not value
                    or len(value) > max_in
                    or (size is not None and len(value) != size)
                ):
                    raise ValueError(
                        "range takes [low, high]"
                        if size
                        else f"in takes a list of 1 to {max_in} values"
                    )
                value = [field.coerce(v) for v in value]
            else:
                value = field.coerce(value)
        except ValueError as exc:
            raise invalid(f"{where}.value", str(exc)) from exc
        qs = qs.filter(**{f"{item.field}__{item.lookup}": value})
    return qs


def _ordering(names: list[str], allowed: dict[str, str], tiebreak: list[str]) -> list[str]:
    order = []
    for index, name in enumerate(names):
        bare = name.removeprefix("-")
        if bare not in allowed:
            raise invalid(f"ordering.{index}", f"{bare!r} is no column you may order by")
        order.append(("-" if name.startswith("-") else "") + allowed[bare])
    return order + [key for key in tiebreak if key not in {o.lstrip("-") for o in order}]


def build(
    declared: QueryModel, ctx: CallContext, args: Any, *, using: str, max_in: int
) -> tuple[Any, list[str], dict[str, str]]:
    """The queryset, its output columns and the map from internal names to them.

    Raises:
        ToolError: ``Tool.InvalidArguments`` naming the field, lookup or value.
    """
    fields = declared.fields_for(ctx.actor)
    model = declared.name
    qs = _filtered(narrowed(declared, ctx, using), args, fields, model, max_in)
    if not args.group_by and not args.aggregates:
        select = args.select or list(fields)
        for index, name in enumerate(select):
            _field(fields, name, f"select.{index}", model)
        order = _ordering(args.ordering, {name: name for name in fields}, ["pk"])
        return qs.order_by(*order).values(*select), list(select), {}
    if args.select:
        raise invalid("select", "a grouped query reads its groupBy and aggregates columns")
    keys: dict[str, Any] = {}
    columns: dict[str, str] = {}
    for index, group in enumerate(args.group_by):
        where = f"groupBy.{index}"
        field = _field(fields, group.field, f"{where}.field", model)
        alias = f"g{index}"
        if group.trunc is None:
            keys[alias] = models.F(group.field)
            columns[alias] = group.field
        elif field.kind not in ("date", "datetime"):
            raise invalid(f"{where}.trunc", f"{group.field!r} is not a date")
        else:
            output = models.DateField() if field.kind == "date" else models.DateTimeField()
            keys[alias] = _TRUNC[group.trunc](group.field, output_field=output)
            columns[alias] = f"{group.field}:{group.trunc}"
    aggregates: dict[str, Any] = {}
    for index, aggregate in enumerate(args.aggregates):
        where = f"aggregates.{index}"
        alias = f"a{index}"
        if aggregate.field is None:
            if aggregate.function != "count":
                raise invalid(f"{where}.field", f"{aggregate.function} needs a field")
            aggregates[alias] = models.Count("pk")
            columns[alias] = "count"
            continue
        field = _field(fields, aggregate.field, f"{where}.field", model)
        if aggregate.function not in KIND_AGGREGATES[field.kind]:
            raise invalid(f"{where}.function", f"{aggregate.function} of {aggregate.field!r}")
        aggregates[alias] = _AGGREGATE[aggregate.function](aggregate.field)
        columns[alias] = f"{aggregate.function}:{aggregate.field}"
    if len(set(columns.values())) != len(columns):
        raise invalid("aggregates", "a column is asked for twice")
    by_column = {column: alias for alias, column in columns.items()}
    order = _ordering(args.ordering, by_column, list(keys))
    if not keys:
        return _Totals(qs, aggregates), list(columns.values()), columns
    grouped = qs.annotate(**keys).values(*keys)
    # Groups without aggregates are the distinct groups (values() alone would not group).
    grouped = grouped.annotate(**aggregates) if aggregates else grouped.distinct()
    grouped = grouped.order_by(*order)
    return grouped, list(columns.values()), columns


class _Totals:
    """An ungrouped aggregate as a one-row 'queryset' (sliced like the others)."""

    def __init__(self, qs: Any, aggregates: dict[str, Any]) -> None:
        self.qs, self.aggregates = qs, aggregates

    def __getitem__(self, page: slice) -> list[dict[str, Any]]:
        return [self.qs.aggregate(**self.aggregates)][page]


def json_value(value: Any) -> Any:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def fingerprint(args: BaseModel) -> str:
    """What a cursor is bound to: the query without its page."""
    query = args.model_dump(mode="json", exclude={"limit", "offset", "cursor"})
    text = json.dumps(query, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(offset: int, bound_to: str) -> str:
    raw = json.dumps({"o": offset, "q": bound_to}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, bound_to: str, max_offset: int) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset = data["o"]
        if data["q"] != bound_to or not isinstance(offset, int) or not 0 <= offset <= max_offset:
            raise ValueError
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid(
            "cursor", "not a cursor of this query (pass nextCursor back unchanged)"
        ) from exc
    return offset


@contextmanager
def bounded(ctx: CallContext, using: str, timeout_ms: int) -> Iterator[None]:
    """A transaction on ``using`` under the tools' role (when row-level security is on there)
    whose statements are cut at ``timeout_ms``.

    On the default database the read path already holds the role in its read-only transaction
    (``mcp_tools.execution``); a replica's connection takes it here.
    """
    connection = connections[using]
    try:
        with ExitStack() as stack:
            if not connection.in_atomic_block:
                stack.enter_context(rls.scoped(ctx.tenant.id, read_only=True, using=using))
            stack.enter_context(transaction.atomic(using=using))
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT set_config('statement_timeout', %s, true)", [f"{timeout_ms}ms"]
                    )
            yield
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) != _CANCELED:
            raise
        raise ToolError(
            CODE_TIMED_OUT,
            f"The query ran past its time bound ({timeout_ms} ms): narrow it with filters, "
            "group less, or ask for a smaller page.",
            {"timeoutMs": timeout_ms},
        ) from exc
