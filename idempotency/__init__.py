"""``idempotency``: one claim → execute → publish port and its HTTP adapter.

Public surface (import-safe; no models): the port (``IdempotentUnit`` and its scope, work
results and outcomes), the fingerprint helpers every adapter uses instead of hashing by hand,
the key rule every adapter checks (``key_problem``, ``KEY_PATTERN``, ``max_key_length``), and
the view markers. The HTTP adapter is ``idempotency.middleware.IdempotencyMiddleware``; the
model is ``idempotency.models.IdempotencyRecord``.
"""

from idempotency.fingerprint import (
    bound_fingerprint,
    fingerprint_bytes,
    fingerprint_json,
    sha256_hex,
)
from idempotency.keys import KEY_PATTERN, key_problem, max_key_length
from idempotency.markers import (
    ExemptView,
    exempt_views,
    exemption_of,
    handles_own_idempotency,
    never_replay,
    user_scoped_keys,
)
from idempotency.unit import (
    Executed,
    Failure,
    IdempotencyScope,
    IdempotentUnit,
    InProgress,
    KeyConflict,
    Outcome,
    Replayed,
    Success,
)

__all__ = [
    "KEY_PATTERN",
    "Executed",
    "ExemptView",
    "Failure",
    "IdempotencyScope",
    "IdempotentUnit",
    "InProgress",
    "KeyConflict",
    "Outcome",
    "Replayed",
    "Success",
    "bound_fingerprint",
    "exempt_views",
    "exemption_of",
    "fingerprint_bytes",
    "fingerprint_json",
    "handles_own_idempotency",
    "key_problem",
    "max_key_length",
    "never_replay",
    "user_scoped_keys",
    "sha256_hex",
]
