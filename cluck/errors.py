"""Domain errors. ``code`` values are public API (the SPA and models branch on them)."""

from __future__ import annotations

from typing import Any, ClassVar


class CluckError(Exception):
    """A domain failure with a stable machine code.

    ``http_status`` is how the REST adapter answers it; the MCP adapter turns it into an
    ``isError`` tool result carrying ``code`` and the message.
    """

    code: ClassVar[str] = "Cluck.Error"
    http_status: ClassVar[int] = 422
    default_message: ClassVar[str] = "The request could not be completed."

    def __init__(self, message: str | None = None, *, code: str | None = None, **data: Any) -> None:
        self.message = message or self.default_message
        if code is not None:
            self.code = code  # type: ignore[misc]
        self.data = data
        super().__init__(self.message)


class NotFoundError(CluckError):
    code = "Cluck.NotFound"
    http_status = 404
    default_message = "Not found."


class ConflictError(CluckError):
    code = "Cluck.Conflict"
    http_status = 409


class FieldError(CluckError):
    """Request-shape validation: 400 with every failing field listed."""

    code = "Validation.Failed"
    http_status = 400
    default_message = "The request is invalid."

    def __init__(self, errors: list[dict[str, str]], message: str | None = None) -> None:
        super().__init__(message, errors=errors)
        self.errors = errors
