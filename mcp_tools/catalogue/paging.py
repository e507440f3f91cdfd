"""Prepared, paged ``*/list`` results (resources, resource templates, prompts).

The same discipline as the tool pages in ``mcp_tools.catalogue.surfaces``: built once per role at
start-up, every page pre-serialized for every protocol revision through the SDK's sieve, and
cursors that are opaque values derived from the listing's digest (which covers the method, the
role, the definitions and the page size). A cursor from another listing, another role or an
older deployment is not in the table (-32602).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcp_types import methods as wire_methods
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_tools.eras.envelope import CACHE_SCOPE, LIST_TTL_MS, modern_envelope
from mcp_tools.rpc import jsonrpc as _jsonrpc


@dataclass(frozen=True)
class Listing:
    """One role's prepared pages of one ``*/list`` method."""

    method: str
    digest: str
    pages: Mapping[str, tuple[bytes, ...]] = field(default_factory=dict)
    cursors: Mapping[str, int] = field(default_factory=dict)

    def page(self, version: str, cursor: str | None) -> bytes | None:
        """The serialized result for ``cursor`` (``None``: first page); ``None`` if foreign."""
        index = 0 if cursor is None else self.cursors.get(cursor)
        if index is None or version not in self.pages:
            return None
        return self.pages[version][index]


def pages_of(items: Sequence[Any], page_size: int) -> list[Sequence[Any]]:
    """``items`` cut into pages of ``page_size`` (one empty page for no items)."""
    return [items[i : i + page_size] for i in range(0, len(items), page_size)] or [[]]


def cursor_table(digest: str, count: int, *, prefix: str) -> dict[str, int]:
    """Opaque cursors of pages 1 … ``count - 1`` of the listing ``digest`` stands for: derived
    from it, so a cursor of another listing, role or deployment is in no table."""

    def cursor(index: int) -> str:
        raw = hashlib.sha256(f"{digest}:{index}".encode()).digest()[:18]
        return prefix + base64.urlsafe_b64encode(raw).decode().rstrip("=")

    return {cursor(index): index for index in range(1, count)}


def page_result(
    key: str,
    items: Sequence[Any],
    next_cursor: str | None,
    version: str,
    server_info: Mapping[str, Any],
) -> dict[str, Any]:
    """One page's result before the revision's sieve: ``{key: items}``, its ``nextCursor``,
    and in the 2026-07-28 era the envelope and the list's caching hints."""
    result: dict[str, Any] = {key: list(items)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    if version in MODERN_PROTOCOL_VERSIONS:
        result = modern_envelope(
            {**result, "ttlMs": LIST_TTL_MS, "cacheScope": CACHE_SCOPE}, server_info
        )
    return result


def prepare(
    method: str,
    key: str,
    definitions: Sequence[dict[str, Any]],
    *,
    scope: str,
    page_size: int,
    server_info: Mapping[str, Any],
) -> Listing:
    """Pages of ``{key: [...definitions]}`` for ``method``, for every protocol revision.

    Raises:
        pydantic.ValidationError: a definition is not valid for a revision (a start-up error).
    """
    canonical = json.dumps(
        [method, scope, page_size, list(definitions)], sort_keys=True, separators=(",", ":")
    )
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    chunks = pages_of(definitions, page_size)
    cursors = cursor_table(digest, len(chunks), prefix="mcpl1.")
    by_index = {index: cursor for cursor, index in cursors.items()}
    pages: dict[str, tuple[bytes, ...]] = {}
    for version in KNOWN_PROTOCOL_VERSIONS:
        serialized = []
        for index, chunk in enumerate(chunks):
            result = page_result(key, chunk, by_index.get(index + 1), version, server_info)
            shaped = wire_methods.serialize_server_result(method, version, result)
            serialized.append(_jsonrpc.dumps(shaped))
        pages[version] = tuple(serialized)
    return Listing(
        method=method,
        digest=digest,
        pages=MappingProxyType(pages),
        cursors=MappingProxyType(cursors),
    )
