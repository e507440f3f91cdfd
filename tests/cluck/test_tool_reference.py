"""docs/tool-reference.md is generated from the registry and must match it."""

from __future__ import annotations

from pathlib import Path

from mcp_tools.authoring.reference import render_reference
from tests.mutations import mutation

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "tool-reference.md"


@mutation(
    "cluck/mcp/production.py",
    find='"Eggs in stock per grade, counted in eggs, as of a farm-local date',
    replace='"Eggs in stock per grade (stale), counted in eggs, as of a farm-local date',
)
def test_the_tool_reference_in_docs_is_not_stale() -> None:
    """Mutation: change ``cluck_read_stock``'s description in ``cluck/mcp/production.py`` → red.

    Regenerate: ``python manage.py mcp_tools_reference --prefix cluck_ > docs/tool-reference.md``
    """
    assert REFERENCE.read_text() == render_reference(prefix="cluck_")
