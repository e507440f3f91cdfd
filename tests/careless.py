"""What every project's careless read tool (the farm's, the shop's, the tracker's) must see
under row-level security."""

from __future__ import annotations

from typing import Any


def seen_only(seen: Any, tenant_id: int) -> None:
    """Each careless query of a careless read reached ``tenant_id``'s rows and no other's (each
    project seeds two rows per tenant)."""
    assert seen == {
        "all": [tenant_id],
        "related": [tenant_id],
        "select_related": [tenant_id],
        "raw": [tenant_id],
        "values": [tenant_id],
        "aggregate": 2,
    }, seen
