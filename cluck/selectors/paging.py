"""Keyset pages returned by list selectors.

Selectors fetch ``limit + 1`` rows so "is there more?" is answered by the database without a
``COUNT`` and without reading past the page. Cursor *positions* are plain dicts; the edges
(REST ``cluck.api.base.encode_cursor`` / MCP) make them opaque. Because a position arrives from
outside, every value is type-checked here before it reaches SQL.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cluck.errors import FieldError

T = TypeVar("T")
R = TypeVar("R")

# The hard ceiling any selector accepts, whatever the edge's own cap (REST 500, MCP 200).
SELECTOR_LIMIT_MAX = 500


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a keyset-paged list. ``next_position`` is ``None`` on the last page."""

    items: list[T]
    next_position: dict[str, Any] | None

    @property
    def complete(self) -> bool:
        return self.next_position is None


def is_db_id(value: object) -> bool:
    """A value that can be a primary key (BIGINT): anything else cannot match a row, and must
    not reach SQL where it would overflow the column type."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63


def check_limit(limit: int) -> int:
    """Refuse an unbounded or silly page size (bounds live in the query, not the caller)."""
    if (
        not isinstance(limit, int)
        or isinstance(limit, bool)
        or not 1 <= limit <= SELECTOR_LIMIT_MAX
    ):
        raise FieldError(
            [
                {
                    "field": "limit",
                    "code": "Limit.OutOfRange",
                    "message": f"limit must be between 1 and {SELECTOR_LIMIT_MAX}.",
                }
            ]
        )
    return limit


def keyset_page(
    rows: list[R],
    *,
    limit: int,
    position_of: Callable[[R], dict[str, Any]],
    project: Callable[[R], T],
) -> Page[T]:
    """Turn ``limit + 1`` fetched rows into a page; the extra row only signals "more"."""
    more = len(rows) > limit
    kept = rows[:limit]
    next_position = position_of(kept[-1]) if more and kept else None
    return Page(items=[project(row) for row in kept], next_position=next_position)


def _invalid_cursor() -> FieldError:
    return FieldError(
        [{"field": "cursor", "code": "invalid", "message": "The cursor is not valid."}]
    )


def position_int(position: Mapping[str, Any], key: str) -> int:
    value = position.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
        raise _invalid_cursor()
    return value


def position_str(position: Mapping[str, Any], key: str, *, max_length: int = 1000) -> str:
    value = position.get(key)
    if not isinstance(value, str) or len(value) > max_length or "\x00" in value:
        raise _invalid_cursor()
    return value


def position_date(position: Mapping[str, Any], key: str) -> dt.date:
    value = position.get(key)
    if not isinstance(value, str):
        raise _invalid_cursor()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise _invalid_cursor() from None
