"""``mcp_tools.query`` declarations held at start-up: ``mcp_tools.E020`` (no database)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcp_tools import query
from mcp_tools.query import QueryModel, QueryTool, _declare
from mcp_tools.query._run import narrowed
from tests.mutations import mutation


@pytest.mark.parametrize(
    ("fields", "tenant_field", "problem"),
    [
        (["nope"], None, "no field 'nope'"),
        (["house__flocks__name"], None, "not a concrete forward field"),
        (["flock__house__farm__name"], None, "joins more than 2 relations"),
        (["name"], "nope", "no tenant field 'nope'"),
    ],
)
@mutation(
    "mcp_tools/query/__init__.py",
    find="                model.resolve(declared.max_depth)\n",
    replace="                pass\n",
)
def test_a_declaration_that_does_not_resolve_is_a_check_error(
    monkeypatch: pytest.MonkeyPatch, fields: list[str], tenant_field: str | None, problem: str
) -> None:
    """Mutation: the check does not resolve the declared models → no error → red."""
    model = "cluck.DailyEntry" if tenant_field is None else "cluck.House"
    declared = QueryTool(
        name="broken_query",
        description="A broken declaration.",
        models=[QueryModel(model, fields=fields, tenant_field=tenant_field)],
    )
    monkeypatch.setattr(query, "_declared", [declared])
    (error,) = query.check_query_tools()
    assert error.id == "mcp_tools.E020"
    assert problem in error.msg


@mutation(
    "mcp_tools/query/_declare.py",
    find='has_perm(f"{meta.app_label}.view_{meta.model_name}")',
    replace='has_perm(f"{meta.app_label}.change_{meta.model_name}")',
)
def test_a_model_without_a_policy_needs_its_view_permission() -> None:
    """Mutation: the default asks another permission → red."""
    declared = QueryModel("cluck.House", fields=["name"])
    declared.resolve(2)
    assert declared.policy.perms == frozenset({"cluck.view_house"})


@mutation(
    "mcp_tools/query/_run.py",
    find="filter(**{attname: ctx.tenant.id})",
    replace="all()",
)
def test_a_model_without_a_scoped_manager_is_narrowed_by_its_tenant_field() -> None:
    """A model with no scoped manager (the toolkit's own membership table) is filtered on the
    declared tenant field. Mutation: that filter dropped → no tenant in the query → red."""
    declared = QueryModel("tenancy.Membership", fields=["created_at"], tenant_field="tenant")
    declared.resolve(2)
    assert declared.scoped_manager is None
    caller: Any = SimpleNamespace(tenant=SimpleNamespace(id=4711))
    sql = str(narrowed(declared, caller, "default").query)
    assert '"tenant_id" = 4711' in sql


@mutation(
    "mcp_tools/query/_declare.py",
    find="                if field.column == table.column:\n",
    replace="                if False:\n",
)
def test_without_a_scoped_manager_the_tenant_field_is_the_rls_declarations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The farm declares its tables to ``tenancy.rls`` by ``farm``. Mutation: the declaration
    not read → no tenant field → red."""
    monkeypatch.setattr(_declare, "_scoped_manager", lambda model: None)
    declared = QueryModel("cluck.House", fields=["name"])
    declared.resolve(2)
    assert (declared.tenant_field, declared.scoped_manager) == ("farm", None)
