"""Running one ``tools/call``: arguments, bounds, idempotency, result shaping.

Tools are synchronous functions run in worker threads under a per-process concurrency limit
and a per-call deadline. The slot is released by the worker thread itself when the tool
really returns, so a timed-out tool still occupies its slot until it finishes. A cancelled
call (its client went away) is the exception: its slot is freed at once and its thread, still
running until the tool's next checkpoint, counts against a draining pool of the same size
instead; when that pool is full, the cancelled call keeps its slot.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import logging
import math
import random
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

from django.db import close_old_connections
from django.utils.module_loading import import_string
from pydantic import BaseModel, ValidationError

from mcp_tools import _jsonrpc, conf, observability
from mcp_tools.context import CallContext
from mcp_tools.error_pages import database_unavailable
from mcp_tools.exceptions import ToolError, ToolFailure
from mcp_tools.registry import IDEMPOTENCY_KEY_FIELD, REPLAYED_FIELD, ToolSpec

logger = logging.getLogger(__name__)
T = TypeVar("T")

# Stable JSON-RPC codes in the implementation-defined band (-32000..-32019). Public API.
OVERLOADED: Final = -32010
TIMED_OUT: Final = -32011
RATE_LIMITED: Final = -32012
FORBIDDEN: Final = -32013
UNAUTHENTICATED: Final = -32014

CODE_INVALID_ARGUMENTS: Final = "Tool.InvalidArguments"
CODE_INTERNAL: Final = "Tool.InternalError"
CODE_KEY_REUSED: Final = "Idempotency.KeyReused"
CODE_IN_PROGRESS: Final = "Idempotency.InProgress"
CODE_CAPABILITY_REQUIRED: Final = "Client.CapabilityRequired"

# Worker threads are never the bottleneck: the slot counter is. A timed-out tool keeps its
# thread and its slot, and a cancelled one moves to the draining pool (as large as the slots),
# so threads in use never exceed twice MAX_CONCURRENT_CALLS.
MAX_WORKER_THREADS: Final = 64


class BoundError(Exception):
    """A call refused or abandoned by a bound; answered as a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class _Slots:
    """The per-process concurrency slots; a released slot goes to the longest waiter first.

    Waiters are coroutines on event loops (``acquire``); releases come from worker threads,
    which hand the slot over with ``call_soon_threadsafe`` without ever freeing it, so a
    newcomer cannot overtake a waiter.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_use = 0
        # Cancelled calls whose threads still run (until the tool's next checkpoint).
        self.draining = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def waiting(self) -> int:
        """Calls waiting for a slot now."""
        return len(self._waiters)

    def try_acquire(self, limit: int) -> bool:
        with self._lock:
            if self.in_use >= limit or self._waiters:
                return False
            self.in_use += 1
            return True

    async def acquire(self, limit: int, wait: float) -> bool:
        """Take a slot, waiting at most ``wait`` seconds for one; ``False`` if none came."""
        if self.try_acquire(limit):
            return True
        if wait <= 0:
            return False
        waiter = asyncio.get_running_loop().create_future()
        with self._lock:
            if self.in_use < limit and not self._waiters:
                self.in_use += 1
                return True
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter), wait)
            return True
        except (TimeoutError, asyncio.CancelledError) as exc:
            with self._lock:
                try:
                    self._waiters.remove(waiter)
                    handed = False
                except ValueError:
                    handed = True  # a release chose this waiter as the wait ended
            if isinstance(exc, TimeoutError):
                return handed
            if handed:
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.get_loop().call_soon_threadsafe(_hand_over, waiter)
                return
            self.in_use -= 1

    def drain(self, limit: int) -> bool:
        """Free a cancelled call's slot while its thread runs on, counted as draining (at
        most ``limit``); ``False`` when the draining pool is full (the call keeps its slot)."""
        with self._lock:
            if self.draining >= limit:
                return False
            self.draining += 1
        self.release()
        return True

    def drained(self) -> None:
        """A draining call's thread has returned."""
        with self._lock:
            self.draining -= 1


class _Hold:
    """Who gives one call's slot back: its thread when the tool returns, unless the call was
    cancelled first and its slot moved to the draining pool."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = "running"  # → "returned" (thread) or "draining" (cancellation)

    def returned(self) -> None:
        with self._lock:
            if self._state == "draining":
                slots.drained()
                return
            self._state = "returned"
            slots.release()

    def cancelled(self, limit: int) -> None:
        with self._lock:
            if self._state == "running" and slots.drain(limit):
                self._state = "draining"


def _hand_over(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


slots = _Slots()
_executor_lock = threading.Lock()
_executor: concurrent.futures.ThreadPoolExecutor | None = None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(
                # Running calls plus as many draining ones (threads are made on demand).
                max_workers=2 * MAX_WORKER_THREADS,
                thread_name_prefix="mcp-tool",
            )
        return _executor


async def run_bounded(work: Callable[[], T], *, on_cancel: Callable[[], None] | None = None) -> T:
    """Run ``work`` in a worker thread within the concurrency limit and the call deadline.

    If the awaiting task is cancelled (the client went away), ``on_cancel`` tells the work so
    (it stops at its next checkpoint) and the slot is freed at once, the thread counted as
    draining until it returns (``_Slots.drain``).

    Raises:
        BoundError: ``OVERLOADED`` when every slot is taken (nothing ran), ``TIMED_OUT`` when
            the deadline passed (the work may still be running and finish later).
    """
    limit = int(conf.get("MAX_CONCURRENT_CALLS"))
    timeout = float(conf.get("CALL_TIMEOUT_SECONDS"))
    if not await slots.acquire(limit, float(conf.get("SLOT_WAIT_SECONDS"))):
        observability.bound_refused("concurrency")  # observability
        raise overloaded()
    hold = _Hold()

    def in_thread() -> T:
        try:
            return work()
        finally:
            # Worker threads never see request_finished; without this, each keeps a DB
            # connection open (or a broken one) for the next call.
            close_old_connections()
            hold.returned()

    try:
        future = _pool().submit(observability.carry(in_thread))  # observability: trace context
    except BaseException:
        slots.release()
        raise
    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)
    except asyncio.CancelledError:
        if on_cancel is not None:
            on_cancel()
        hold.cancelled(limit)
        raise
    except TimeoutError:
        observability.bound_refused("deadline")  # observability
        raise BoundError(
            TIMED_OUT,
            f"Tool call exceeded its {timeout:g} s deadline",
            {"timeoutSeconds": timeout},
        ) from None


def overloaded() -> BoundError:
    """The refusal of a call that found no slot, with a retry hint.

    ``data.retryAfterMs`` is ``MCP_TOOLS_OVERLOAD_RETRY_AFTER_MS`` spread by ±50 %, so
    clients refused together do not all come back at the same instant; ``retryAfterSeconds``
    (and the ``Retry-After`` header the endpoint adds) is that, rounded up to whole seconds.
    """
    base = float(conf.get("OVERLOAD_RETRY_AFTER_MS"))
    retry_ms = max(int(base * random.uniform(0.5, 1.5)), 1)
    return BoundError(
        OVERLOADED,
        "Server overloaded: too many tool calls in progress; retry shortly",
        {"retryAfterMs": retry_ms, "retryAfterSeconds": math.ceil(retry_ms / 1000)},
    )


def retry_after_header(error: BoundError) -> str | None:
    """``Retry-After`` (whole seconds) for a refusal that carries a retry hint."""
    seconds = (error.data or {}).get("retryAfterSeconds")
    return str(seconds) if error.code == OVERLOADED and seconds is not None else None


@functools.lru_cache(maxsize=8)
def _translator(path: str) -> Callable[[BaseException], ToolFailure | None]:
    return import_string(path)


def translate(exc: BaseException) -> ToolFailure | None:
    """``ToolError`` or what the configured translator makes of ``exc``; ``None`` if unknown."""
    if isinstance(exc, ToolError):
        return ToolFailure(exc.code, exc.message, exc.data)
    path = conf.get("ERROR_TRANSLATOR")
    if path:
        return _translator(path)(exc)
    return None


def error_result(code: str, message: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``isError`` result the model can read and act on, with a stable code.

    The error travels as one text block holding ``{"error": {"code", "message", "data"?}}``
    and never as ``structuredContent``: a tool that declares an ``outputSchema`` promises that
    every structured result conforms to it, and conforming clients (the TypeScript SDK that
    Claude Code, Claude Desktop and the Inspector are built on) validate it even when
    ``isError`` is true, so an error object there would be thrown away as a schema violation.
    """
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {
        "content": [{"type": "text", "text": _jsonrpc.dumps({"error": error}).decode()}],
        "isError": True,
    }


def failure_result(failure: ToolFailure) -> dict[str, Any]:
    return error_result(failure.code, failure.message, failure.data)


def internal_error_result(spec: ToolSpec, request_id: str) -> dict[str, Any]:
    return error_result(
        CODE_INTERNAL,
        f"Error executing tool {spec.name}. Quote request id {request_id} to the operator.",
        {"requestId": request_id},
    )


def _summarise(exc: ValidationError) -> list[dict[str, str]]:
    summary = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in error["loc"]) or "(arguments)"
        summary.append({"field": location, "code": error["type"], "message": error["msg"]})
    return summary


def _as_wire_json(value: Any, path: tuple[str, ...] = ()) -> tuple[Any, list[dict[str, str]]]:
    """The arguments as the JSON Schema sees them, and every string that cannot be stored.

    A number with no fractional part (``1.0``) is the integer it equals (JSON Schema's
    ``integer`` admits it), so it becomes ``1``; strings (object keys included) holding NUL or
    a lone surrogate are reported — neither survives the trip into a database (PostgreSQL
    text refuses both) or out as UTF-8, so they are refused at the boundary, for every tool,
    before any tool code runs.
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
    return _as_wire_json(value)[1]


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _invalid(errors: list[dict[str, str]]) -> dict[str, Any]:
    listed = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return error_result(CODE_INVALID_ARGUMENTS, f"Invalid arguments: {listed}", {"errors": errors})


def validate_arguments(spec: ToolSpec, arguments: dict[str, Any]) -> BaseModel | dict[str, Any]:
    """The validated argument model, or an ``isError`` result describing what is wrong.

    Strict: what the published ``inputSchema`` says is what is accepted. The arguments are
    validated as the JSON they arrived as, in pydantic's strict mode: no coercion (``true`` is
    not 1, ``"1"`` is not 1, ``0`` is not a date) and a date is a ``YYYY-MM-DD`` string only
    (JSON has no date type). Strings holding NUL or lone surrogates are refused first.
    """
    wire, unstorable = _as_wire_json(arguments)
    if unstorable:
        return _invalid(unstorable)
    try:
        return spec.args_model.model_validate_json(_jsonrpc.dumps(wire), strict=True)
    except ValidationError as exc:
        return _invalid(_summarise(exc))


def _invoke(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> Any:
    if spec.call_style == "model":
        assert spec.user_model is not None
        if spec.read_only:
            return spec.fn(ctx, validated)
        values = {k: getattr(validated, k) for k in spec.user_model.model_fields}
        return spec.fn(ctx, spec.user_model.model_construct(**values))
    return spec.fn(ctx, **{name: getattr(validated, name) for name in spec.param_names})


def _structured(spec: ToolSpec, value: Any) -> dict[str, Any]:
    assert spec.result_model is not None
    model = (
        value if isinstance(value, spec.result_model) else spec.result_model.model_validate(value)
    )
    return model.model_dump(mode="json", by_alias=True)


def success_result(spec: ToolSpec, value: Any) -> dict[str, Any]:
    """Shape a read tool's return value into a ``CallToolResult``."""
    if spec.result_kind == "model":
        return structured_result(_structured(spec, value))
    if spec.result_kind == "text":
        return {"content": [{"type": "text", "text": str(value)}], "isError": False}
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(block, BaseModel)
        else block
        for block in value
    ]
    return {"content": blocks, "isError": False}


def structured_result(payload: dict[str, Any]) -> dict[str, Any]:
    # The text copy is for clients that ignore structuredContent (spec SHOULD).
    text = _jsonrpc.dumps(payload).decode()
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": payload,
        "isError": False,
    }


def run_read(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker-thread body of a read tool."""
    try:
        return success_result(spec, _invoke(spec, ctx, validated))
    except Exception as exc:
        if database_unavailable(exc):
            raise  # not the tool's failure: the endpoint answers 503 (mcp_tools.error_pages)
        failure = translate(exc)
        if failure is not None:
            return failure_result(failure)
        logger.exception("MCP tool %s failed (request %s)", spec.name, ctx.request_id)
        return internal_error_result(spec, ctx.request_id)


def run_write(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker-thread body of a write tool: inside the idempotent unit.

    Domain failures are ``Failure`` (never stored; the claim is released); a replay returns
    the stored result with ``replayed: true`` and runs nothing.
    """
    import idempotency as port

    key: str = getattr(validated, IDEMPOTENCY_KEY_FIELD)
    arguments = validated.model_dump(mode="json", by_alias=True, exclude={IDEMPOTENCY_KEY_FIELD})
    scope = port.IdempotencyScope(
        tenant_id=str(ctx.tenant_id),
        # The port's keys are at most 64 characters; tool names may be 128.
        operation_key=port.sha256_hex(spec.operation_key),
        # Tenant-scoped, exactly like the HTTP adapter's caller key (SHA-256 of the raw key):
        # one key space per tenant, namespaced per tool by the operation key. Keeping the two
        # adapters' caller keys identical is what makes guard 19 (HTTP and MCP never alias)
        # a real test of the operation-key namespaces.
        caller_key=port.sha256_hex(key),
        # The acting user is part of the request, bound exactly as the HTTP adapter binds it: a
        # second member reusing the key is refused (KeyReused), never handed the first
        # member's result.
        fingerprint=port.bound_fingerprint(
            port.fingerprint_json(arguments), user_id=str(ctx.user_id)
        ),
    )

    def work() -> Any:
        try:
            value = _invoke(spec, ctx, validated)
        except Exception as exc:
            failure = translate(exc)
            if failure is None:
                raise
            return port.Failure(failure)
        return port.Success(_structured(spec, value))

    try:
        outcome = port.IdempotentUnit().run(scope, work)
    except Exception as exc:
        if database_unavailable(exc):
            raise  # nothing committed; the client retries the same key after the 503
        logger.exception("MCP tool %s failed (request %s)", spec.name, ctx.request_id)
        return internal_error_result(spec, ctx.request_id)
    if isinstance(outcome, port.Executed):
        if isinstance(outcome.result, port.Failure):
            return failure_result(outcome.result.error)
        return structured_result({**outcome.result.result, REPLAYED_FIELD: False})
    if isinstance(outcome, port.Replayed):
        return structured_result({**outcome.result, REPLAYED_FIELD: True})
    if isinstance(outcome, port.KeyConflict):
        return error_result(
            CODE_KEY_REUSED,
            "This idempotencyKey was already used with different arguments; "
            "use a new key for a new write.",
        )
    if isinstance(outcome, port.InProgress):
        retry = max(float(outcome.retry_after), 0.0)
        return error_result(
            CODE_IN_PROGRESS,
            f"An identical call with this idempotencyKey is still running; retry in {retry:g} s.",
            {"retryAfterSeconds": retry},
        )
    raise TypeError(f"unexpected idempotency outcome {outcome!r}")
