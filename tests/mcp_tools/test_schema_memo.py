"""The JSON Schema check remembers only schemas it found valid (``authoring.rules``).

An identity factory's tool is built on every request that lists or calls it; the metaschema
check of its schemas is remembered by their digest so that it runs once, never so that a schema
it refused passes the next time.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from mcp_tools.authoring import rules
from tests.mutations import mutation


@mutation(
    "mcp_tools/authoring/rules.py",
    find="    if digest is not None and digest in _VALID_SCHEMAS:\n        return\n",
    replace=(
        "    if digest is not None and digest in _VALID_SCHEMAS:\n        return\n"
        "    _VALID_SCHEMAS.add(digest or b'')\n"
    ),
)
def test_a_refused_schema_is_refused_every_time() -> None:
    """Mutation: the schema's digest remembered before the check → the second check passes the
    schema it refused → red."""
    bad = {"type": "object", "properties": {"a": {"type": 5}}}
    for _ in range(2):
        with pytest.raises(ImproperlyConfigured, match="not valid JSON Schema 2020-12"):
            rules._check_schema("'t'", bad, "inputSchema")


def test_a_valid_schema_is_remembered_by_its_digest_not_its_text() -> None:
    """A factory's schema may hold its caller's data: only a digest of it stays."""
    schema = {"type": "object", "properties": {"only_here": {"type": "string"}}}
    rules._check_schema("'t'", schema, "inputSchema")
    assert rules._VALID_SCHEMAS
    assert all(isinstance(d, bytes) and len(d) == 32 for d in rules._VALID_SCHEMAS)
