"""``mcp_tools.query`` declarations held at start-up: ``mcp_tools.E020`` (no database)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from cluck.mcp import query as farm_query
from mcp_tools import query
from mcp_tools.query import QueryModel, QueryTool, _declare
from mcp_tools.query._run import narrowed
from tenancy import active_roles
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


def _caller(role_name: str, *perms: str) -> Any:
    (role,) = [role for role in active_roles() if role.name == role_name]
    actor = SimpleNamespace(
        is_resolved=True, is_system=False, role=role, permissions=frozenset(perms), user=None
    )
    return SimpleNamespace(actor=actor)


@mutation(
    "mcp_tools/query/__init__.py",
    find="        return (actor.role, held)\n",
    replace="        return held\n",
)
@mutation(
    "mcp_tools/query/__init__.py",
    find="        held = self._perms & load_permissions(actor) if self._perms else frozenset()\n",
    replace="        held = frozenset()\n",
)
def test_callers_who_may_use_different_fields_never_share_a_definition_key() -> None:
    """The query tool's ``tools/list`` definition is shared by ``definition_key``; two callers
    share a key only if they see the same models and fields. The model needs a Django
    permission (its default policy), its price a role (``PRICES``). Mutation: the role left
    out of the key → ReadOnly would be served the owner's prices; the held permissions left
    out → a member without the view permission would be served the model → red."""
    declared = QueryTool(
        name="keyed_query",
        description="Grades.",
        models=[
            QueryModel(
                "cluck.EggGrade",
                name="grades",
                fields=["name", "unit_price_minor"],
                restricted={"unit_price_minor": farm_query.PRICES},
            )
        ],
    )
    callers = [
        _caller("Owner", "cluck.view_egggrade"),
        _caller("Owner", "cluck.view_egggrade", "cluck.add_house"),  # an unasked permission
        _caller("Owner"),
        _caller("ReadOnly", "cluck.view_egggrade"),
    ]
    keys = [declared.definition_key(ctx) for ctx in callers]
    seen = [
        {name: tuple(fields) for name, (_, fields) in declared.visible(ctx).items()}
        for ctx in callers
    ]
    assert seen[0] == seen[1] and keys[0] == keys[1]  # shared by who may see the same
    assert len({str(s) for s in seen[1:]}) == 3  # the other three see three different things
    for i, first in enumerate(keys):
        for j, second in enumerate(keys):
            assert (first == second) == (seen[i] == seen[j]), (callers[i], callers[j])
