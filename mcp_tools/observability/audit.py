"""The stored call audit: one ``CallAudit`` row per MCP tool call and A2A skill call.

Optional (``MCP_TOOLS_AUDIT``). A call of a tool the caller's surface holds is noted on its
``ToolCall`` record (``note``: the credential, the idempotency key it used, the argument values
its redaction policy allows); when the record finishes, ``record`` hands one row to the
process's ``AuditWriter``: a bounded queue drained by one background thread that writes rows
in batches (one ``COPY`` on PostgreSQL) on its own connection. The request never waits for the
database: a full queue drops the row (counted, logged at WARNING) rather than slow the call
down. The queue is flushed at interpreter exit (``atexit``) and by ``flush()``.

One row never costs another its place: only JSON-safe argument values are kept (no NUL, no
lone surrogate, no ``NaN``/``Infinity``; a call refused for its arguments keeps none), and a
batch the database refuses for its content is written again row by row, a row still refused
being replaced by a marker row (its arguments dropped). Every row lost is counted
(``mcp_tools_audit_rows_dropped_total``).

A name that is no tool of the caller's surface (unknown or hidden) gets no row: the call log
keeps it (``mcp_tools.calls``), the audit records tool calls, not probes.
"""

from __future__ import annotations

import atexit
import datetime as dt
import functools
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DataError, connection, models

from mcp_tools import conf
from mcp_tools.codes import CODE_INVALID_ARGUMENTS
from mcp_tools.observability import metrics
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy.process import ProcessObject

logger = logging.getLogger(__name__)

# Credential kinds (``CallAudit.credential``).
TOKEN: Final = "token"
OAUTH: Final = "oauth"
EXTERNAL_JWT: Final = "external_jwt"
SESSION: Final = "session"
# A stored argument value longer than this (as JSON text) is replaced by a marker.
MAX_VALUE_CHARS: Final = 512
_TRUNCATED: Final = "…(truncated)"
# What an argument value that cannot be stored (NUL, lone surrogate, NaN, Infinity) becomes.
_UNSTORABLE: Final = "…(unstorable)"
# The ``arguments`` of a row the database refused even alone: written in its place.
UNSTORABLE_ROW: Final = {"unstorable": True}
# Why a row was lost (``mcp_tools_audit_rows_dropped_total{reason}``).
DROPPED_QUEUE_FULL: Final = "queue_full"
DROPPED_UNSTORABLE: Final = "unstorable"
DROPPED_DATABASE: Final = "database"
# The outcomes of a call refused for its arguments (JSON-RPC -32602 or the tool error): its
# argument values are what was wrong, so the audit keeps none.
_REFUSED_ARGUMENTS: Final = frozenset({CODE_INVALID_ARGUMENTS, "-32602"})


def enabled() -> bool:
    """The project keeps a stored call audit (``MCP_TOOLS_AUDIT``)."""
    return bool(conf.get("AUDIT"))


def credential_of(actor: Any) -> tuple[int | None, str]:
    """``(token_id, kind)`` of the credential ``actor`` called with."""
    token_id = getattr(actor, "token_id", None)
    if token_id is not None:
        return token_id, TOKEN
    if getattr(actor, "identity", None) is not None:
        return None, EXTERNAL_JWT
    return None, OAUTH if getattr(actor, "scopes", None) is not None else SESSION


def storable(value: Any) -> bool:
    """``value`` can go into a ``jsonb`` column: no string (keys included) holding a NUL or a
    lone surrogate, no ``NaN`` or ``Infinity``."""
    return not _jsonrpc.unstorable_values(value)


def _bounded(value: Any) -> Any:
    if not storable(value):
        return _UNSTORABLE
    if isinstance(value, str | int | float | bool) or value is None:
        return (
            value[:MAX_VALUE_CHARS] + _TRUNCATED
            if isinstance(value, str) and len(value) > MAX_VALUE_CHARS
            else value
        )
    text = repr(value)
    return value if len(text) <= MAX_VALUE_CHARS else _TRUNCATED


def kept_arguments(spec: Any, arguments: Any) -> dict[str, Any] | None:
    """The argument values ``spec``'s redaction policy lets the audit keep (``None``: none).

    ``audit_arguments`` names them, or is ``callable(arguments) -> mapping`` deciding itself;
    unset keeps no value at all (the default: argument values are the caller's data).
    """
    policy = getattr(spec, "audit_arguments", None)
    if policy is None or not isinstance(arguments, Mapping):
        return None
    if callable(policy):
        try:
            kept: Mapping[str, Any] = policy(arguments)
        except Exception:
            # A broken policy must not leak what it was meant to redact, nor fail the call.
            logger.exception("the audit_arguments policy of %s failed", getattr(spec, "name", "?"))
            return None
        return {str(k): _bounded(v) for k, v in kept.items()}
    return {name: _bounded(arguments[name]) for name in policy if name in arguments}


def note(call: Any, ctx: Any, spec: Any, arguments: Any, idempotency_key: Any = None) -> None:
    """Mark ``call`` (a ``ToolCall``) as audited: a call of ``spec`` made with ``ctx``.

    A no-op while the audit is off, and for a name no tool of the caller's surface answers to
    (``spec`` is ``None``): hidden and unknown names are never audited.
    """
    if spec is None or not enabled():
        return
    token_id, credential = credential_of(ctx.actor)
    key = ""
    if isinstance(idempotency_key, str) and not getattr(spec, "read_only", True):
        from idempotency import sha256_hex

        key = sha256_hex(idempotency_key)
    issuer, subject = getattr(ctx.actor, "identity", None) or ("", "")
    call.audit = {
        "token_id": token_id,
        "credential": credential,
        "issuer": issuer[:255],
        "subject": subject[:255],
        "idempotency_key": key,
        "arguments": kept_arguments(spec, arguments),
    }


def record(call: Any) -> None:
    """Queue the audit row of a finished, audited ``call`` (no I/O on the caller's thread)."""
    noted = getattr(call, "audit", None)
    if noted is None:
        return
    duration = call.duration_seconds
    if call.error_code in _REFUSED_ARGUMENTS:
        noted = {**noted, "arguments": None}
    writer().put(
        {
            **noted,
            "at": dt.datetime.now(dt.UTC),
            "tenant_key": str(call.tenant_id),
            "actor_id": "" if call.actor_id is None else str(call.actor_id),
            "role": call.role or "",
            "tool": call.tool or "",
            "protocol": call.protocol,
            "era": call.era or "",
            "protocol_version": call.protocol_version or "",
            "outcome": call.outcome or "",
            "error_code": call.error_code or "",
            "replayed": call.replayed,
            "duration_ms": None if duration is None else round(duration * 1000, 3),
            "request_id": call.request_id or "",
        }
    )


class AuditWriter:
    """A bounded queue of audit rows and the daemon thread that writes them in batches."""

    def __init__(
        self,
        *,
        max_queue: int,
        batch_size: int,
        linger_seconds: float,
        write: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=max_queue)
        self.batch_size = max(batch_size, 1)
        self.linger_seconds = max(linger_seconds, 0.0)
        self._write = write or write_rows
        self._idle = idle if write is None else (lambda: None)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.dropped = 0
        self._last_warning = 0.0

    def put(self, row: dict[str, Any]) -> None:
        """Queue ``row``; drop it (counted) when the queue is full."""
        if self._thread is None:
            self._start()
        try:
            self._queue.put_nowait(row)
        except queue.Full:
            self.dropped += 1
            metrics.audit_rows_dropped(DROPPED_QUEUE_FULL)
            now = time.monotonic()
            if now - self._last_warning > 10:
                self._last_warning = now
                logger.warning("call audit queue full: %d row(s) dropped so far", self.dropped)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="mcp-audit-writer", daemon=True)
                thread.start()
                self._thread = thread

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            # Sleep instead of waiting on the queue: rows put meanwhile wake nobody, so a
            # busy server pays one thread wake-up per batch, not one per call.
            if self.linger_seconds:
                time.sleep(self.linger_seconds)
            while len(batch) < self.batch_size:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                self._write(batch)
                if self._queue.empty():
                    self._idle()
            except Exception:
                # The writer thread must outlive any one failed batch.
                logger.exception("writing %d call audit row(s) failed", len(batch))
            finally:
                # After the connection is handed back: flush() returns with none held.
                for _ in batch:
                    self._queue.task_done()

    def flush(self) -> None:
        """Block until every row queued so far is written (or failed) and, the queue empty,
        the writer's connection handed back."""
        if self._thread is not None:
            self._queue.join()


def write_rows(rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` in one statement on this thread's own connection.

    On PostgreSQL a ``COPY``: the ORM's ``bulk_create`` spent more CPU preparing each row's
    fields than the rest of the call it records (``bench/mcp_profile.py``), and that CPU is
    taken from the same process's requests. A batch refused for its content (one row's value
    the database cannot take) is written again row by row (``_write_alone``): one row must
    never take the others with it.
    """
    try:
        _insert(rows)
    except Exception as exc:
        if not _refused_for_content(exc):
            _lost(rows)
            return
        logger.warning(
            "a batch of %d call audit row(s) was refused; writing them one by one", len(rows)
        )
        _write_alone(rows)


def _write_alone(rows: list[dict[str, Any]]) -> None:
    for index, row in enumerate(rows):
        try:
            _insert([row])
            continue
        except Exception as exc:
            if not _refused_for_content(exc):
                _lost(rows[index:])
                return
        try:
            _insert([_marker(row)])
            logger.warning("a call audit row was refused; written with its arguments dropped")
        except Exception:
            logger.exception("a call audit row was lost: the database refused it")
            metrics.audit_rows_dropped(DROPPED_UNSTORABLE)


def _lost(rows: list[dict[str, Any]]) -> None:
    """The database refused ``rows`` for another reason than their content (down, unreachable)."""
    logger.exception("call audit rows lost: the database refused %d row(s)", len(rows))
    metrics.audit_rows_dropped(DROPPED_DATABASE, len(rows))
    connection.close()


def _marker(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` without what the caller chose: its arguments, and any text the database cannot
    take (a NUL, a lone surrogate) made storable."""
    marked = {
        name: value.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")
        if isinstance(value, str)
        else value
        for name, value in row.items()
    }
    marked["arguments"] = UNSTORABLE_ROW
    return marked


def _refused_for_content(exc: BaseException) -> bool:
    """The database (or the driver, encoding it) refused a value, not the connection: the
    other rows of its batch can still be written."""
    if isinstance(exc, DataError | ValueError | TypeError):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - the "postgres" extra is not installed
        return False
    return isinstance(exc, psycopg.DataError)


def _insert(rows: list[dict[str, Any]]) -> None:
    from mcp_tools.models import CallAudit

    if connection.vendor == "postgresql":
        _copy_rows(CallAudit, rows)
    else:
        CallAudit.objects.bulk_create([CallAudit(**row) for row in rows])


@functools.cache
def _copy_plan(model: Any) -> tuple[str, tuple[tuple[str, Any, bool], ...]]:
    """``COPY`` into ``model``'s table: the statement, and per column its field's attribute
    name, default and whether it holds JSON (the model's shape is fixed once loaded)."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    statement = (
        f"COPY {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
        " FROM STDIN"
    )
    columns = tuple((f.attname, f.get_default(), isinstance(f, models.JSONField)) for f in fields)
    return statement, columns


def _copy_rows(model: Any, rows: list[dict[str, Any]]) -> None:
    statement, columns = _copy_plan(model)
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(
                [
                    _json_text(row.get(name)) if is_json else row.get(name, default)
                    for name, default, is_json in columns
                ]
            )


def _json_text(value: Any) -> str | None:
    # allow_nan=False: ``Infinity`` is no JSON PostgreSQL takes; refused here, as content.
    return None if value is None else json.dumps(value, cls=DjangoJSONEncoder, allow_nan=False)


def idle() -> None:
    """The writer has nothing queued: hand its connection back. Kept while rows keep coming,
    an idle one would hold a pool slot (and keep a test database from being dropped)."""
    connection.close()


def _new_writer() -> AuditWriter:
    return AuditWriter(
        max_queue=int(conf.get("AUDIT_QUEUE_SIZE")),
        batch_size=int(conf.get("AUDIT_BATCH_SIZE")),
        linger_seconds=float(conf.get("AUDIT_LINGER_SECONDS")),
    )


# This process's writer (mcp_tools.operator.process), made by the first audited call. A forked
# child gets a writer of its own: its parent's thread is not in the child, and the rows the
# parent had queued are the parent's to write (a copy written by the child too would be twice).
AUDIT_WRITER: Final = ProcessObject(
    "observability.audit_writer", _new_writer, kind="thread", close=AuditWriter.flush
)
writer = AUDIT_WRITER.get


def flush() -> None:
    """Write every queued audit row now (tests; shutdown)."""
    made = AUDIT_WRITER.peek()
    if made is not None:
        made.flush()


atexit.register(flush)
