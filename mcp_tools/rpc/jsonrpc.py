"""Strict JSON-RPC envelope parsing and response bytes.

Strict means: one message per body (no batches), duplicate object keys refused, ``NaN`` and
``Infinity`` refused, nesting depth, node count and id size bounded. Every bound is checked
before any handler sees the message.

Text JSON can carry but nothing downstream can keep (``as_wire_json``/``unstorable_strings``:
NUL, a lone surrogate) is found here too, for every protocol and every kind of parameter.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_types.jsonrpc import INVALID_REQUEST, PARSE_ERROR

JSONRPC: Final = "2.0"


class EnvelopeError(Exception):
    """The body is not one acceptable JSON-RPC message; ``code`` is the JSON-RPC error code."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


class _DuplicateKeyError(ValueError):
    pass


class _ConstantError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        # Two parsers reading the same body must never disagree on what it says.
        raise _DuplicateKeyError("duplicate object key")
    return result


def _constant(name: str) -> Any:
    raise _ConstantError(name)


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)


@dataclass(frozen=True)
class Message:
    """One decoded message: a request (``id`` present), a notification or a response."""

    kind: str  # "request" | "notification" | "response"
    method: str | None
    request_id: Any
    params: dict[str, Any] | None
    raw: dict[str, Any]


def _measure(value: Any, *, max_depth: int, max_nodes: int) -> None:
    """Walk the decoded value iteratively; refuse excess depth or node count."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise EnvelopeError(INVALID_REQUEST, f"Message has more than {max_nodes} JSON values")
        if depth > max_depth:
            raise EnvelopeError(INVALID_REQUEST, f"Message nests deeper than {max_depth} levels")
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)


def _valid_id(value: Any, max_length: int) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return len(str(abs(value))) <= max_length
    return isinstance(value, str) and len(value) <= max_length


def parse_message(body: bytes, *, max_depth: int, max_nodes: int, max_id_length: int) -> Message:
    """Decode ``body`` into one JSON-RPC message.

    Raises:
        EnvelopeError: -32700 for malformed JSON, -32600 for anything that is valid JSON but
            not one acceptable message (batch, duplicate keys, bounds, bad id, bad shape).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise EnvelopeError(PARSE_ERROR, "Parse error: body is not UTF-8") from None
    try:
        decoded = _DECODER.decode(text)
    except _DuplicateKeyError:
        raise EnvelopeError(INVALID_REQUEST, "Duplicate keys in a JSON object") from None
    except _ConstantError:
        raise EnvelopeError(PARSE_ERROR, "Parse error: NaN and Infinity are not JSON") from None
    except RecursionError:
        raise EnvelopeError(
            INVALID_REQUEST, f"Message nests deeper than {max_depth} levels"
        ) from None
    except ValueError:
        raise EnvelopeError(PARSE_ERROR, "Parse error") from None
    if not isinstance(decoded, dict):
        raise EnvelopeError(
            INVALID_REQUEST, "Body must be a single JSON-RPC request or notification object"
        )
    if len(text) > max_nodes or text.count("{") + text.count("[") >= max_depth:
        # Every JSON value takes a character and every level a bracket: only a body that
        # could break a bound is walked.
        _measure(decoded, max_depth=max_depth, max_nodes=max_nodes)
    has_id = "id" in decoded
    request_id = decoded.get("id")
    if has_id and not _valid_id(request_id, max_id_length):
        raise EnvelopeError(INVALID_REQUEST, "Invalid request id")
    if decoded.get("jsonrpc") != JSONRPC:
        raise EnvelopeError(INVALID_REQUEST, 'jsonrpc must be "2.0"', request_id)
    method = decoded.get("method")
    params = decoded.get("params")
    if method is None:
        if has_id and ("result" in decoded or "error" in decoded):
            return Message("response", None, request_id, None, decoded)
        raise EnvelopeError(INVALID_REQUEST, "Missing method", request_id)
    if not isinstance(method, str) or not method:
        raise EnvelopeError(INVALID_REQUEST, "method must be a non-empty string", request_id)
    if params is not None and not isinstance(params, dict):
        raise EnvelopeError(INVALID_REQUEST, "params must be an object", request_id)
    kind = "request" if has_id else "notification"
    return Message(kind, method, request_id, params, decoded)


# One encoder for every call: json.dumps with options builds a new one each time.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()


class Encoded(dict[str, Any]):
    """A JSON object that carries its own encoding (``dumps`` of it, made once by its
    producer): a response holding it under ``structuredContent`` splices these bytes in
    instead of walking and encoding the object again. Never mutated once built: the bytes
    are the object's."""

    __slots__ = ("encoded",)

    def __init__(self, value: dict[str, Any], encoded: bytes) -> None:
        super().__init__(value)
        self.encoded = encoded


def encoded(value: dict[str, Any]) -> Encoded:
    """``value`` with its encoding (``dumps``) attached."""
    return Encoded(value, _dumps(value))


def result_bytes(request_id: Any, result: dict[str, Any] | bytes) -> bytes:
    """A success response; ``result`` may already be serialized (prepared surfaces), or hold
    its ``structuredContent`` already encoded (``Encoded``: spliced in, not encoded again)."""
    if isinstance(result, bytes):
        body = result
    else:
        structured = result.get("structuredContent")
        if type(structured) is Encoded:
            rest = _dumps({k: v for k, v in result.items() if k != "structuredContent"})
            comma = b"," if len(rest) > 2 else b""
            body = rest[:-1] + comma + b'"structuredContent":' + structured.encoded + b"}"
        else:
            body = _dumps(result)
    return b'{"jsonrpc":"2.0","id":' + _dumps(request_id) + b',"result":' + body + b"}"


def error_bytes(request_id: Any, code: int, message: str, data: Any = None) -> bytes:
    """An error response; ``id`` is written as ``null`` when unknown (JSON-RPC 2.0 §5)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _dumps({"jsonrpc": JSONRPC, "id": request_id, "error": error})


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, the one serializer for everything written to the wire."""
    return _dumps(value)


# --- request headers ------------------------------------------------------------------------


class RequestHeaders(Mapping[str, str]):
    """A request's headers read straight from ``request.META``, case-insensitively.

    Django's ``request.headers`` builds a dict of every header on first use; ``/mcp`` reads a
    handful by name, so a lookup here is one ``META`` access. Iterating (rare: a trace
    propagator's ``keys()``) falls back to ``request.headers``.
    """

    __slots__ = ("_request",)

    def __init__(self, request: Any) -> None:
        self._request = request

    def get(self, name: str, default: Any = None) -> Any:
        return self._request.META.get(_meta_key(name), default)

    def __getitem__(self, name: str) -> str:
        value: str = self._request.META[_meta_key(name)]
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _meta_key(name) in self._request.META

    def __iter__(self) -> Iterator[str]:
        return iter(self._request.headers)

    def __len__(self) -> int:
        return len(self._request.headers)


@functools.lru_cache(maxsize=64)
def _meta_key(name: str) -> str:
    key = name.upper().replace("-", "_")
    return key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"


# --- text a database can keep ------------------------------------------------------------
# PostgreSQL ``text`` refuses NUL and a lone surrogate cannot be encoded as UTF-8: both are
# refused at the boundary, before any application code runs (tool arguments over MCP and A2A,
# prompt arguments, completions, resource URIs).


def as_wire_json(
    value: Any, path: tuple[str, ...] = (), *, finite: bool = False
) -> tuple[Any, list[dict[str, str]]]:
    """The arguments as the JSON Schema sees them, and every string that cannot be stored.

    A number with no fractional part (``1.0``) is the integer it equals (JSON Schema's
    ``integer`` admits it), so it becomes ``1``; strings (object keys included) holding NUL or
    a lone surrogate are reported — neither survives the trip into a database (PostgreSQL
    text refuses both) or out as UTF-8, so they are refused at the boundary, for every tool,
    before any tool code runs. ``finite``: report a non-finite number too (``unstorable_values``).
    """
    problems: list[dict[str, str]] = []

    def walk(node: Any, where: tuple[str, ...]) -> Any:
        if isinstance(node, str):
            field = ".".join(where) or "(arguments)"
            if "\x00" in node:
                problems.append(
                    {
                        "field": field,
                        "code": "string_contains_nul",
                        "message": "Text may not contain the NUL character (U+0000).",
                    }
                )
            elif not _is_utf8(node):
                problems.append(
                    {
                        "field": field,
                        "code": "string_not_unicode",
                        "message": "Text must be valid Unicode (no lone surrogates).",
                    }
                )
            return node
        if isinstance(node, float) and finite and not math.isfinite(node):
            problems.append(
                {
                    "field": ".".join(where) or "(arguments)",
                    "code": "number_not_finite",
                    "message": "Numbers must be finite (1e999 reads as Infinity).",
                }
            )
            return node
        if isinstance(node, float) and node.is_integer():
            return int(node)
        if isinstance(node, dict):
            copied = {}
            for key, child in node.items():
                walk(key, where)
                copied[key] = walk(child, (*where, str(key)))
            return copied
        if isinstance(node, list):
            return [walk(child, (*where, str(index))) for index, child in enumerate(node)]
        return node

    # The envelope parser bounds the depth (MCP_TOOLS_MAX_JSON_DEPTH), so recursion is safe.
    normalized = walk(value, path)
    return normalized, sorted(problems, key=lambda problem: problem["field"])


def unstorable_strings(value: Any) -> list[dict[str, str]]:
    """Every string in ``value`` (object keys included) holding NUL or a lone surrogate, as
    ``{field, code, message}``: what tools refuse as ``Tool.InvalidArguments``, and prompts,
    completions and resource URIs refuse as -32602, before any application code runs."""
    return as_wire_json(value)[1]


def unstorable_values(value: Any, path: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """``unstorable_strings``, and every number a ``jsonb`` column refuses (``NaN``,
    ``Infinity``: ``1e999`` reads as one) as ``number_not_finite``: what a JSON value a client
    sends must be free of before it is stored (answers, capabilities, audit values)."""
    return as_wire_json(value, path, finite=True)[1]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
