"""``JsonFormatter``: one JSON object per log record, for any handler.

Select it in ``LOGGING``::

    "formatters": {
        "json": {
            "()": "mcp_tools.observability.JsonFormatter",
            "fields": ["process", "threadName"],   # optional: more LogRecord attributes
            "static": {"service": "acme"},          # optional: constant keys
        }
    },

Every record becomes ``{"time", "level", "logger", "message", ...}`` plus whatever the record
carries beyond the standard ``LogRecord`` attributes (``extra=``): the per-call records of
``mcp_tools.calls`` put their fields there. ``exception`` and ``stack`` hold formatted
tracebacks. Values JSON cannot hold are written as their ``str()``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

# Every attribute a plain LogRecord has: the rest of a record's __dict__ came from ``extra``.
_STANDARD: Final = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Format a ``LogRecord`` as one line of JSON.

    Args:
        fields: standard ``LogRecord`` attributes to add (``"process"``, ``"pathname"`` …).
        static: constant keys added to every record (``{"service": "acme"}``).
    """

    def __init__(
        self,
        fmt: str | None = None,
        datefmt: str | None = None,
        style: Literal["%", "{", "$"] = "%",
        validate: bool = True,
        *,
        fields: Iterable[str] = (),
        static: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(fmt, datefmt, style, validate)
        self.fields = tuple(fields)
        self.static = dict(static or {})

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **self.static,
        }
        for name in self.fields:
            payload[name] = getattr(record, name, None)
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                payload[key] = value
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            payload["exception"] = record.exc_text
        if record.stack_info:
            payload["stack"] = self.formatStack(record.stack_info)
        return json.dumps(payload, default=str, ensure_ascii=False, separators=(",", ":"))
