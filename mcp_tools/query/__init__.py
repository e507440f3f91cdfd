"""``mcp_tools.query``: a tenant-safe, read-only query tool over models a project declares.

    from mcp_tools.query import QueryModel, query_tool

    query_tool(
        name="acme_query",
        description="Ask this organisation's projects and tasks.",
        models=[QueryModel("projects.Project", fields=["name", "created_at", "owner__name"])],
    )

The agent sends a structured query (a model, filters from a fixed set of lookups, ordering,
``groupBy`` with date truncation, aggregates, a page): never SQL. The tool is an identity
factory (``@tool_factory``): its input schema lists only the models and fields this caller
may use; every query is narrowed to the caller's tenant in the ORM and runs in the read path's
transaction under row-level security when that is on; rows are bounded by ``max_rows``, joins
by the declared paths (``max_depth``), time by a ``statement_timeout``; the query is kept in
the stored call audit. Docs: docs/mcp_tools.md, "A tenant-safe query tool".
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Annotated, Any, Final, Literal

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections
from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model
from pydantic.alias_generators import to_camel

from mcp_tools import CallContext, FactoryTool, tool_factory
from mcp_tools.authoring.rules import _arguments_config
from mcp_tools.query._declare import AGGREGATES, LOOKUPS, TRUNCATIONS, QueryField, QueryModel
from mcp_tools.query._run import (
    CODE_TIMED_OUT,
    bounded,
    build,
    decode_cursor,
    encode_cursor,
    fingerprint,
    invalid,
    json_value,
)
from tenancy import AUTHENTICATED, Policy, evaluate, load_permissions

__all__ = [
    "AGGREGATES",
    "CODE_TIMED_OUT",
    "LOOKUPS",
    "TRUNCATIONS",
    "QueryModel",
    "QueryResult",
    "QueryTool",
    "query_tool",
]

# The arguments' rules of every tool: strict, closed, camelCase on the wire.
_CONFIG = _arguments_config()


class QueryResult(BaseModel):
    """One page of a query's answer."""

    model_config = ConfigDict(
        alias_generator=to_camel, serialize_by_alias=True, validate_by_name=True
    )

    model: str
    columns: list[str] = Field(description="The keys of every row, in order.")
    rows: list[dict[str, JsonValue]]
    complete: bool = Field(description="False: more rows follow; pass nextCursor back.")
    next_cursor: str | None


def _enum(names: Sequence[str], description: str) -> Any:
    """A string the schema enumerates; the tool checks it per model (a field of another model
    is as unknown as one never declared) and names it in its error."""
    extra: dict[str, Any] = {"enum": list(names)} if names else {}
    return Annotated[str, Field(description=description, json_schema_extra=extra)]


# Argument models one query tool keeps (distinct sets of what callers may see; emptied when
# full): a few per role in practice.
_MAX_ARGUMENT_MODELS: Final = 64


class QueryTool:
    """A declared query tool: its models and bounds (``query_tool`` registers one)."""

    def __init__(
        self,
        *,
        name: str,
        description: str,
        models: Sequence[QueryModel],
        policy: Policy = AUTHENTICATED,
        max_rows: int = 200,
        max_depth: int = 2,
        max_offset: int = 10_000,
        max_in: int = 100,
        statement_timeout_ms: int = 2_000,
        using: str | None = None,
        title: str | None = None,
    ) -> None:
        names = [declared.name for declared in models]
        if not models or len(set(names)) != len(names):
            raise ImproperlyConfigured(f"query tool {name}: declare models, each name once")
        if not (1 <= max_rows and 0 <= max_depth and 0 < statement_timeout_ms):
            raise ImproperlyConfigured(f"query tool {name}: bounds must be positive")
        self.name = name
        self.description = description
        self.models = {declared.name: declared for declared in models}
        self.policy = policy
        self.max_rows = max_rows
        self.max_depth = max_depth
        self.max_offset = max_offset
        self.max_in = max_in
        self.statement_timeout_ms = statement_timeout_ms
        self.using = using or DEFAULT_DB_ALIAS
        if self.using not in connections:
            raise ImproperlyConfigured(f"query tool {name}: no database {self.using!r}")
        self.title = title
        # The argument models made so far, by (models, field paths) a caller may use.
        self._arguments: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}
        # Every Django permission a model's or a field's policy asks (``None``: not read yet).
        self._perms: frozenset[str] | None = None

    def definition_key(self, ctx: CallContext) -> Hashable:
        """All that ``visible`` (so the schema and the description) depends on: the caller's
        role and which of the permissions the policies ask they hold. Two callers with the same
        key see the same models and fields; the ``tools/list`` definition is shared by key.
        """
        actor = ctx.actor
        if not actor.is_resolved or actor.is_system:
            return None
        if self._perms is None:
            asked: set[str] = set()
            for declared in self.models.values():
                declared.resolve(self.max_depth)
                asked |= declared.policy.perms
                asked.update(*(policy.perms for policy in declared.restricted.values()))
            self._perms = frozenset(asked)
        held = self._perms & load_permissions(actor) if self._perms else frozenset()
        return (actor.role, held)

    def visible(self, ctx: CallContext) -> dict[str, tuple[QueryModel, dict[str, QueryField]]]:
        """The models this caller may query and, per model, the fields they may use."""
        seen = {}
        for model_name, declared in self.models.items():
            declared.resolve(self.max_depth)
            if evaluate(declared.policy, ctx.actor):
                seen[model_name] = (declared, declared.fields_for(ctx.actor))
        return seen

    def arguments(self, visible: dict[str, tuple[QueryModel, dict[str, QueryField]]]) -> Any:
        """This caller's argument model: the models and fields they may use, enumerated.

        One model per set of models and fields, made on the first request that needs it:
        callers of one role share it, and a model made anew for every request would cost the
        request most of its time (``create_model``, then its JSON Schema in ``build_spec``).
        """
        models = tuple(visible)
        paths = tuple(sorted({path for _, fields in visible.values() for path in fields}))
        key = (models, paths)
        made = self._arguments.get(key)
        if made is None:
            if len(self._arguments) >= _MAX_ARGUMENT_MODELS:
                self._arguments.clear()
            made = self._arguments[key] = self._argument_model(models, paths)
        return made

    def _argument_model(self, models: tuple[str, ...], paths: tuple[str, ...]) -> Any:
        field: Any = _enum(paths, "A field of the model (see the tool's description).")
        lookup: Any = Literal.__getitem__(LOOKUPS)
        trunc: Any = Literal.__getitem__(TRUNCATIONS)
        function: Any = Literal.__getitem__(AGGREGATES)
        model_type: Any = Literal.__getitem__(tuple(models)) if models else str
        filter_model = create_model(
            "QueryFilter",
            __config__=_CONFIG,
            field=(field, ...),
            lookup=(lookup, ...),
            value=(JsonValue, Field(description="in: a list; range: [low, high]; isnull: bool")),
        )
        group_model = create_model(
            "QueryGroup",
            __config__=_CONFIG,
            field=(field, ...),
            trunc=(trunc | None, None),
        )
        aggregate_model = create_model(
            "QueryAggregate",
            __config__=_CONFIG,
            function=(function, ...),
            field=(field | None, None),
        )
        return create_model(
            "QueryArguments",
            __config__=_CONFIG,
            model=(model_type, Field(description="The model to query.")),
            select=(
                list[field],
                Field(default_factory=list, max_length=50, description="Fields to read."),
            ),
            filters=(list[filter_model], Field(default_factory=list, max_length=20)),  # type: ignore[valid-type]
            ordering=(
                list[str],
                Field(
                    default_factory=list,
                    max_length=5,
                    description="Columns; '-' first: descending.",
                ),
            ),
            group_by=(list[group_model], Field(default_factory=list, max_length=4)),  # type: ignore[valid-type]
            aggregates=(list[aggregate_model], Field(default_factory=list, max_length=10)),  # type: ignore[valid-type]
            limit=(int, Field(default=min(50, self.max_rows), ge=1, le=self.max_rows)),
            offset=(int, Field(default=0, ge=0, le=self.max_offset)),
            cursor=(str | None, None),
        )

    def describe(self, visible: dict[str, tuple[QueryModel, dict[str, QueryField]]]) -> str:
        listed = "; ".join(
            f"{name}{' (' + declared.description + ')' if declared.description else ''}: "
            + ", ".join(f"{path} ({field.kind})" for path, field in fields.items())
            for name, (declared, fields) in visible.items()
        )
        return (
            f"{self.description} Models and fields: {listed or 'none open to you'}. "
            f"Filters take lookups {', '.join(LOOKUPS)}; groupBy may truncate a date to "
            f"{'/'.join(TRUNCATIONS)}; aggregates {', '.join(AGGREGATES)}. At most "
            f"{self.max_rows} rows a page."
        )

    def factory(self, ctx: CallContext) -> FactoryTool:
        visible = self.visible(ctx)
        return FactoryTool(
            arguments=self.arguments(visible),
            run=lambda ctx, args: self.run(ctx, args, visible),
            description=self.describe(visible),
        )

    def run(
        self,
        ctx: CallContext,
        args: Any,
        visible: dict[str, tuple[QueryModel, dict[str, QueryField]]],
    ) -> QueryResult:
        if args.model not in visible:
            raise invalid("model", f"{args.model!r} is no model you may query")
        declared, _ = visible[args.model]
        bound_to = fingerprint(args)
        offset = args.offset
        if args.cursor is not None:
            if offset:
                raise invalid("cursor", "pass a cursor or an offset, not both")
            offset = decode_cursor(args.cursor, bound_to, self.max_offset)
        qs, columns, internal = build(declared, ctx, args, using=self.using, max_in=self.max_in)
        with bounded(ctx, self.using, self.statement_timeout_ms):
            # One row more than the page: whether another page follows, without a count.
            found = list(qs[offset : offset + args.limit + 1])
        page = found[: args.limit]
        rows = [
            {internal.get(key, key): json_value(value) for key, value in row.items()}
            for row in page
        ]
        more = len(found) > args.limit and offset + args.limit <= self.max_offset
        return QueryResult(
            model=args.model,
            columns=columns,
            rows=rows,
            complete=not more,
            next_cursor=encode_cursor(offset + args.limit, bound_to) if more else None,
        )


# Every declared query tool, for the start-up check (``mcp_tools.E020``).
_declared: list[QueryTool] = []


@checks.register()
def check_query_tools(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.E020``: a declared model, field path or tenant field that does not resolve
    (checked once every app's ``ready()`` has declared its row-level security)."""
    problems: list[checks.CheckMessage] = []
    for declared in _declared:
        for model in declared.models.values():
            try:
                model.resolve(declared.max_depth)
            except (ImproperlyConfigured, LookupError) as exc:
                problems.append(
                    checks.Error(f"query tool {declared.name}: {exc}", id="mcp_tools.E020")
                )
    return problems


def query_tool(
    *,
    name: str,
    description: str,
    models: Sequence[QueryModel],
    policy: Policy = AUTHENTICATED,
    title: str | None = None,
    mirrors_no_route: str | None = "a structured query over declared models; no REST route",
    **bounds: Any,
) -> QueryTool:
    """Declare and register a read-only query tool named ``name`` over ``models``;
    ``bounds`` are ``QueryTool``'s (``max_rows``, ``max_depth``, ``max_offset``, ``max_in``,
    ``statement_timeout_ms``, ``using``).

    Raises:
        ImproperlyConfigured: no models, a name twice, a bound not positive, or what
            ``tool_factory`` refuses.
    """
    declared = QueryTool(
        name=name, description=description, models=models, policy=policy, title=title, **bounds
    )

    _declared.append(declared)

    def build_tool(ctx: CallContext) -> FactoryTool:
        return declared.factory(ctx)

    build_tool.__qualname__ = build_tool.__name__ = f"query_tool_{name.replace('.', '_')}"
    build_tool.__module__ = __name__
    tool_factory(
        name=name,
        read_only=True,
        result=QueryResult,
        description=description,
        policy=policy,
        title=title,
        mirrors_no_route=mirrors_no_route,
        # The query itself is the call's record: its values are the caller's own filters.
        audit_arguments=lambda arguments: dict(arguments),
        varies_by=declared.definition_key,
    )(build_tool)
    return declared
