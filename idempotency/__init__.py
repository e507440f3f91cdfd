"""``idempotency``: one claim → execute → publish port and its HTTP adapter.

Public surface (import-safe; no models): the port (``IdempotentUnit`` and its scope, work
results and outcomes), the fingerprint helpers every adapter uses instead of hashing by hand,
the view markers, and the signals observers receive (``unit_finished``, ``lease_stolen``). The
HTTP adapter is ``idempotency.middleware.IdempotencyMiddleware``; the model is
``idempotency.models.IdempotencyRecord``.
"""

from idempotency.events import lease_stolen, unit_finished
from idempotency.fingerprint import fingerprint_bytes, fingerprint_json, sha256_hex
from idempotency.markers import (
    ExemptView,
    exempt_views,
    exemption_of,
    handles_own_idempotency,
    never_replay,
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
    "exempt_views",
    "exemption_of",
    "fingerprint_bytes",
    "fingerprint_json",
    "handles_own_idempotency",
    "lease_stolen",
    "never_replay",
    "sha256_hex",
    "unit_finished",
]
