"""The farm's query tool (``cluck_query``, ``mcp_tools.query``, issue 38 item 3) over ``/mcp``.

Every refusal is an ``isError`` result with a stable code (never a 500); the answers are the
ORM's own.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from typing import Any

import pytest
from django.db import connections
from django.db.models import Sum
from django.db.models.functions import TruncWeek

from cluck.mcp import query as farm_query
from cluck.models import DailyEntry, House
from mcp_tools.models import CallAudit
from mcp_tools.observability import audit
from mcp_tools.query import _run
from tests.factories import FarmFactory, FlockFactory, HouseFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import ROLE_NAMES, McpClient
from tests.mutations import Edit, mutation

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

TOOL = "cluck_query"
MONDAY = dt.date(2026, 3, 2)


def plant(farm: Any, house_name: str, days: list[tuple[int, int]]) -> House:
    """A house with one flock and a submitted entry per ``(day offset, total eggs)``."""
    house: House = HouseFactory(farm=farm, name=house_name)  # type: ignore[assignment]
    flock = FlockFactory(farm=farm, house=house)
    for offset, eggs in days:
        DailyEntry.all_tenants.create(
            farm=farm,
            house=house,
            flock=flock,
            date=MONDAY + dt.timedelta(days=offset),
            status="Submitted",
            total_eggs=eggs,
        )
    return house


def client_of(farm: Any, role: str = "Owner") -> McpClient:
    member = MembershipFactory(tenant=farm, roles=ROLE_NAMES[role])
    return McpClient(bearer_for(member), membership=member)  # type: ignore[arg-type]


def ask(client: McpClient, arguments: dict[str, Any], era: str = "handshake") -> dict[str, Any]:
    """The tool's result: ``structuredContent``, or the error object of an ``isError``."""
    if era == "handshake":
        reply = client.call(TOOL, arguments)
    else:
        response = client.modern("tools/call", {"name": TOOL, "arguments": arguments})
        assert response.status_code == 200
        reply = json.loads(response.content)
    result = reply["result"]
    if result["isError"]:
        return json.loads(result["content"][0]["text"])
    return result["structuredContent"]


def refused_at(answer: dict[str, Any]) -> str:
    """Where an ``isError`` answer says the arguments are wrong."""
    assert answer["error"]["code"] == "Tool.InvalidArguments", answer
    return answer["error"]["data"]["errors"][0]["field"]


@pytest.fixture
def two_farms() -> tuple[Any, Any]:
    mine, other = FarmFactory(), FarmFactory()
    plant(mine, "mine-north", [(0, 100), (1, 110)])
    plant(other, "victim-house", [(0, 999), (1, 998)])
    return mine, other


@mutation(
    "mcp_tools/query/_run.py",
    find="get_queryset().for_tenant(ctx.tenant)",
    replace='get_queryset().unscoped("any farm")',
)
def test_the_query_reads_only_the_callers_farm_with_rls_off(rls_off: None, two_farms) -> None:
    """Mutation: the ORM narrowing to the caller's tenant dropped → with row-level security
    off nothing else stops it → the other farm's entries are read → red."""
    mine, _ = two_farms
    answer = ask(client_of(mine), {"model": "egg_entries", "select": ["house__name", "total_eggs"]})
    assert answer["rows"] == [
        {"house__name": "mine-north", "total_eggs": 100},
        {"house__name": "mine-north", "total_eggs": 110},
    ]
    totals = ask(
        client_of(mine),
        {"model": "egg_entries", "aggregates": [{"function": "sum", "field": "total_eggs"}]},
    )
    assert totals["rows"] == [{"sum:total_eggs": 210}]


@mutation(
    Edit(
        "mcp_tools/execution/results.py",
        find="with rls.scoped(ctx.tenant.id, read_only=True):",
        replace="with nullcontext():",
    ),
    Edit(
        "mcp_tools/query/_run.py",
        find="if not connection.in_atomic_block:",
        replace="if False:",
    ),
)
def test_a_careless_narrowing_is_still_refused_by_row_level_security(
    rls_on: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query runs under the tools' role: with the ORM narrowing made careless (every
    farm's rows), PostgreSQL still answers the caller's farm only. Mutation: the read path's
    role not taken (and the query's own transaction not taking it either) → the other farm's
    entries → red."""
    mine, other = FarmFactory(), FarmFactory()
    plant(mine, "mine-north", [(0, 100)])
    plant(other, "victim-house", [(0, 999)])
    monkeypatch.setattr(
        _run, "narrowed", lambda declared, ctx, using: declared.model._base_manager.using(using)
    )
    answer = ask(client_of(mine), {"model": "egg_entries", "select": ["house__name"]})
    assert answer["rows"] == [{"house__name": "mine-north"}]
    assert DailyEntry.all_tenants.count() == 2  # the project's own code sees both


HIDDEN_USES: dict[str, tuple[dict[str, Any], str]] = {
    "filter": (
        {"filters": [{"field": "version", "lookup": "exact", "value": 1}]},
        "filters.0.field",
    ),
    "order": ({"ordering": ["-version"]}, "ordering.0"),
    "group": (
        {"groupBy": [{"field": "version"}], "aggregates": [{"function": "count"}]},
        "groupBy.0.field",
    ),
    "read": ({"select": ["version"]}, "select.0"),
}


@pytest.mark.parametrize("use", sorted(HIDDEN_USES))
@mutation(
    "mcp_tools/query/_run.py",
    find="    field = fields.get(name)\n",
    replace="    field = fields.get(name) or QueryField(name, 'integer', None, False)\n",
)
def test_a_field_not_declared_is_unknown_to_filter_order_group_and_read(
    rls_off: None, two_farms, use: str
) -> None:
    """``version`` is a field of the model, never declared: the schema does not list it and
    every use is refused naming where. Mutation: any model field accepted → the query runs
    → red."""
    mine, _ = two_farms
    client = client_of(mine)
    (listed,) = [t for t in client.list_tools()["result"]["tools"] if t["name"] == TOOL]
    assert "version" not in json.dumps(listed["inputSchema"])
    arguments, where = HIDDEN_USES[use]
    answer = ask(client, {"model": "egg_entries", **arguments})
    assert refused_at(answer) == where
    assert "'version'" in answer["error"]["message"]


@mutation(
    "mcp_tools/query/_declare.py",
    find="if field.policy is None or evaluate(field.policy, actor)",
    replace="if True",
)
def test_a_restricted_field_is_unknown_to_a_role_its_policy_refuses(rls_off: None) -> None:
    """The grades' list price is open to owners, managers and sales only. Mutation: the
    field's policy not asked → ReadOnly reads prices → red."""
    farm = FarmFactory()
    from tests.factories import SaleGradeFactory

    SaleGradeFactory(farm=farm, name="Large", unit_price_minor=1250)
    owner = ask(client_of(farm), {"model": "egg_grades", "select": ["name", "unit_price_minor"]})
    assert owner["rows"] == [{"name": "Large", "unit_price_minor": 1250}]
    read_only = client_of(farm, "ReadOnly")
    answer = ask(read_only, {"model": "egg_grades", "select": ["name", "unit_price_minor"]})
    assert refused_at(answer) == "select.1"
    (listed,) = [t for t in read_only.list_tools()["result"]["tools"] if t["name"] == TOOL]
    assert "unit_price_minor" not in json.dumps(listed)


@mutation(
    Edit(
        "mcp_tools/query/__init__.py",
        find="model_type: Any = Literal.__getitem__(tuple(models)) if models else str",
        replace="model_type: Any = str",
    ),
    Edit(
        "mcp_tools/query/__init__.py",
        find="        if args.model not in visible:\n",
        replace="        if False:\n",
    ),
)
@mutation(
    "mcp_tools/query/__init__.py",
    find="            if evaluate(declared.policy, ctx.actor):",
    replace="            if True:",
)
def test_undeclared_models_and_models_of_other_roles_are_unknown(rls_off: None) -> None:
    """The schema lists the models the caller may query; another (declared for other roles,
    or never declared) is refused at ``model``. Mutation: the model's policy not asked →
    Sales queries egg entries; the model's check dropped → the undeclared one runs → red."""
    farm = FarmFactory()
    plant(farm, "north", [(0, 5)])
    sales = client_of(farm, "Sales")
    (listed,) = [t for t in sales.list_tools()["result"]["tools"] if t["name"] == TOOL]
    assert set(listed["inputSchema"]["properties"]["model"]["enum"]) == {
        "egg_grades",
        "sales_orders",
        "customers",
    }
    assert refused_at(ask(sales, {"model": "egg_entries"})) == "model"
    assert refused_at(ask(client_of(farm), {"model": "memberships"})) == "model"
    assert refused_at(ask(client_of(farm), {"model": "cluck.farm"})) == "model"


@mutation(
    Edit(
        "mcp_tools/query/_declare.py",
        find="LOOKUPS: Final = (\n",
        replace='LOOKUPS: Final = (\n    "regex",\n',
    ),
    Edit(
        "mcp_tools/query/_run.py",
        find="if item.lookup not in KIND_LOOKUPS[field.kind]:",
        replace="if False:",
    ),
)
@mutation(
    "mcp_tools/query/_run.py",
    find="if item.lookup not in KIND_LOOKUPS[field.kind]:",
    replace="if False:",
)
def test_lookups_outside_the_fixed_set_or_the_fields_kind_are_refused(rls_off: None) -> None:
    """``regex`` is no lookup of the set; ``icontains`` is a text lookup, not a number's.
    Mutation: the kind's check dropped → icontains on a number runs; regex added to the set
    as well → it runs → red."""
    farm = FarmFactory()
    plant(farm, "north", [(0, 5)])
    client = client_of(farm)
    regex = {"field": "house__name", "lookup": "regex", "value": "^n"}
    assert refused_at(ask(client, {"model": "egg_entries", "filters": [regex]})) == (
        "filters.0.lookup"
    )
    on_number = {"field": "total_eggs", "lookup": "icontains", "value": 5}
    assert refused_at(ask(client, {"model": "egg_entries", "filters": [on_number]})) == (
        "filters.0.lookup"
    )


@mutation(
    "mcp_tools/query/__init__.py",
    find="ge=1, le=self.max_rows)",
    replace="ge=1)",
)
@mutation("mcp_tools/query/__init__.py", find="page = found[: args.limit]", replace="page = found")
@mutation(
    "mcp_tools/query/__init__.py",
    find="Field(default_factory=list, max_length=20)",
    replace="Field(default_factory=list)",
)
def test_a_page_is_bounded_by_max_rows_and_the_rest_follows_its_cursor(rls_off: None) -> None:
    """A limit over ``max_rows`` is refused at ``limit``; a page holds at most its limit and
    the cursor gives the rest; more than 20 filters are refused. Mutation: the bound dropped
    from the schema → the call runs; the page not cut → three rows on a page of two; the
    filters unbounded → 21 run → red."""
    farm = FarmFactory()
    plant(farm, "north", [(0, 1), (1, 2), (2, 3)])
    client = client_of(farm)
    over = {"model": "egg_entries", "limit": farm_query.QUERY.max_rows + 1}
    assert refused_at(ask(client, over)) == "limit"
    query = {"model": "egg_entries", "select": ["total_eggs"], "ordering": ["total_eggs"]}
    first = ask(client, {**query, "limit": 2})
    assert (first["rows"], first["complete"]) == ([{"total_eggs": 1}, {"total_eggs": 2}], False)
    rest = ask(client, {**query, "limit": 2, "cursor": first["nextCursor"]})
    assert (rest["rows"], rest["complete"], rest["nextCursor"]) == ([{"total_eggs": 3}], True, None)
    other = ask(client, {**query, "ordering": ["-total_eggs"], "cursor": first["nextCursor"]})
    assert refused_at(other) == "cursor"
    many = [{"field": "total_eggs", "lookup": "gte", "value": 0}] * 21
    assert refused_at(ask(client, {"model": "egg_entries", "filters": many})) == "filters"


@mutation(
    "mcp_tools/query/_run.py",
    find="\"SELECT set_config('statement_timeout', %s, true)\"",
    replace='"SELECT %s"',
)
def test_a_query_past_the_time_bound_is_the_bounds_error_not_a_500(
    rls_off: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mutation: no ``statement_timeout`` in the query's transaction → the query waits out the
    lock and answers rows → red."""
    farm = FarmFactory()
    plant(farm, "north", [(0, 5)])
    client = client_of(farm)
    monkeypatch.setattr(farm_query.QUERY, "statement_timeout_ms", 200)
    holder = connections.create_connection("default")
    holder.ensure_connection()
    holder.inc_thread_sharing()  # the timer's thread releases the lock
    holder.set_autocommit(False)
    with holder.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {DailyEntry._meta.db_table} IN ACCESS EXCLUSIVE MODE")
    timer = threading.Timer(5.0, holder.rollback)
    timer.start()
    try:
        answer = ask(client, {"model": "egg_entries"}, era="modern")
    finally:
        timer.join()
        holder.close()
    assert answer["error"]["code"] == "Query.TimedOut"
    assert answer["error"]["data"] == {"timeoutMs": 200}


@pytest.mark.parametrize("era", ["handshake", "modern"])
@mutation("mcp_tools/query/_run.py", find='"week": TruncWeek', replace='"week": TruncDay')
@mutation(
    "mcp_tools/query/_run.py",
    find="if aggregates else grouped.distinct()",
    replace="if aggregates else grouped",
)
@mutation(
    "mcp_tools/query/_run.py",
    find="qs.annotate(**keys).values(*keys)",
    replace="qs.annotate(**keys).values()",
)
def test_eggs_per_house_per_week_is_the_orms_own_answer(rls_off: None, era: str) -> None:
    """Mutation: the week truncated by day, grouped by every column, or groups without
    aggregates not made distinct → other groups → red."""
    farm = FarmFactory()
    plant(farm, "north", [(0, 100), (1, 110), (7, 120), (8, 130), (9, 5)])
    plant(farm, "south", [(2, 50), (6, 60), (14, 70)])
    plant(FarmFactory(), "north", [(0, 999)])  # another farm's house of the same name
    answer = ask(
        client_of(farm),
        {
            "model": "egg_entries",
            "groupBy": [{"field": "house__name"}, {"field": "date", "trunc": "week"}],
            "aggregates": [{"function": "sum", "field": "total_eggs"}],
        },
        era=era,
    )
    expected = (
        DailyEntry.all_tenants.filter(farm=farm)
        .annotate(week=TruncWeek("date"))
        .values("house__name", "week")
        .annotate(eggs=Sum("total_eggs"))
        .order_by("house__name", "week")
    )
    assert answer["columns"] == ["house__name", "date:week", "sum:total_eggs"]
    assert answer["rows"] == [
        {
            "house__name": row["house__name"],
            "date:week": row["week"].isoformat(),
            "sum:total_eggs": row["eggs"],
        }
        for row in expected
    ]
    assert len(answer["rows"]) == 4 and answer["complete"] is True
    houses = ask(client_of(farm), {"model": "egg_entries", "groupBy": [{"field": "house__name"}]})
    assert houses["rows"] == [{"house__name": "north"}, {"house__name": "south"}]


@mutation(
    "mcp_tools/query/__init__.py",
    find="audit_arguments=lambda arguments: dict(arguments),",
    replace="audit_arguments=None,",
)
def test_the_query_is_kept_in_the_stored_call_audit(rls_off: None, settings: Any) -> None:
    """Mutation: the tool keeps no argument in the audit → the row has no query → red."""
    settings.MCP_TOOLS_AUDIT = True
    farm = FarmFactory()
    client = client_of(farm)
    query = {
        "model": "egg_entries",
        "filters": [{"field": "date", "lookup": "gte", "value": "2026-03-01"}],
    }
    ask(client, query)
    audit.flush()
    (row,) = CallAudit.objects.filter(tool=TOOL, actor_id=str(client.membership.user_id))
    assert row.arguments == query


@mutation(
    "mcp_tools/query/__init__.py",
    find="        key = (models, paths)\n",
    replace="        key = (models, ())\n",
)
def test_an_argument_model_is_shared_only_by_callers_who_may_use_the_same_fields() -> None:
    """The argument model is made once per set of models and fields (not per request) and
    never handed to a caller who may use other fields: its enums are what the schema lists
    and what strict validation accepts. Mutation: the fields left out of the model's key →
    a caller who may read fewer fields gets the first caller's model → red."""
    declared = farm_query.QUERY
    owner_view = {"egg_grades": (None, {"name": None, "unit_price_minor": None})}
    narrower = {"egg_grades": (None, {"name": None})}
    first = declared.arguments(owner_view)  # type: ignore[arg-type]
    assert declared.arguments(dict(owner_view)) is first  # type: ignore[arg-type]
    other = declared.arguments(narrower)  # type: ignore[arg-type]
    assert other is not first
    schema = json.dumps(other.model_json_schema())
    assert "name" in schema and "unit_price_minor" not in schema


def _listed_query(client: McpClient) -> dict[str, Any]:
    (listed,) = [t for t in client.list_tools()["result"]["tools"] if t["name"] == TOOL]
    return listed


@mutation(
    "mcp_tools/authoring/factories.py",
    find="        key = (digest, self.name, self.cache_key(ctx))\n",
    replace='        key = ("", self.name, None)\n',
)
def test_two_roles_with_different_fields_never_share_a_listed_definition(rls_off: None) -> None:
    """The query tool's ``tools/list`` definition is built once per surface and key
    (``varies_by``) and reused: a second owner is served the first owner's definition, and
    ReadOnly, listing after them, never theirs. Mutation: the surface and the key left out of
    the cache key → ReadOnly is served the owners' schema, prices included → red."""
    farm = FarmFactory()
    owner = _listed_query(client_of(farm))
    assert "unit_price_minor" in json.dumps(owner)
    assert _listed_query(client_of(FarmFactory())) == owner  # another farm, the same role
    read_only = _listed_query(client_of(farm, "ReadOnly"))
    assert "unit_price_minor" not in json.dumps(read_only)
    assert "sales_orders" not in json.dumps(read_only["inputSchema"])
    assert "unit_price_minor" in json.dumps(_listed_query(client_of(farm)))
