"""What an idempotency key may be: one definition for every adapter.

The HTTP adapter checks the ``Idempotency-Key`` header with it; the MCP adapter checks the
``idempotencyKey`` argument with it and publishes the same rule in the tool's ``inputSchema``
(``pattern``, ``minLength``, ``maxLength``), so a key one channel accepts the other accepts too.

A key is 1..``IDEMPOTENCY_MAX_KEY_LENGTH`` (255) visible ASCII characters (RFC 9110 ``VCHAR``,
``!`` to ``~``): no spaces, no control characters (NUL included), nothing outside ASCII. A UUID,
a ULID or ``agent-run-4f2c-1`` all fit; a blank or whitespace-only key is *missing*, not a key.
"""

from __future__ import annotations

import re
from typing import Final

from idempotency import conf

# ECMA-262 and Python agree on this pattern (it goes into JSON Schema as is).
KEY_PATTERN: Final = "^[!-~]+$"
_KEY_RE: Final = re.compile(r"[!-~]+")

KEY_REQUIRED: Final = "Idempotency.KeyRequired"
KEY_INVALID: Final = "Idempotency.KeyInvalid"


def max_key_length() -> int:
    """``IDEMPOTENCY_MAX_KEY_LENGTH``, read at call time."""
    return int(conf.get("MAX_KEY_LENGTH"))


def key_problem(raw: object) -> tuple[str, str] | None:
    """``None`` for an acceptable key, else ``(code, message)``.

    ``Idempotency.KeyRequired`` for a missing, empty or whitespace-only key;
    ``Idempotency.KeyInvalid`` for one that is too long or has a character outside ``!``..``~``.
    """
    if raw is None or not isinstance(raw, str) or not raw.strip():
        return KEY_REQUIRED, "An idempotency key is required for a write."
    limit = max_key_length()
    if len(raw) > limit:
        return KEY_INVALID, f"The idempotency key is too long: at most {limit} characters."
    if _KEY_RE.fullmatch(raw) is None:
        return (
            KEY_INVALID,
            "The idempotency key may only contain visible ASCII characters (! to ~): "
            "no spaces, control characters or non-ASCII text.",
        )
    return None
