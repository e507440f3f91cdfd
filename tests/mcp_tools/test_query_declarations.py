"""``mcp_tools.query`` declarations held at start-up: ``mcp_tools.E020`` (no database)."""

from __future__ import annotations

import pytest

from mcp_tools import query
from mcp_tools.query import QueryModel, QueryTool
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
