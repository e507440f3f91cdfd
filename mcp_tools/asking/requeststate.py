"""Request states for input requests (2026-07-28): signed, bound, expiring, one-time.

A request state is the only thing a stateless server keeps between the rounds of one call, and
it keeps it *in the client*: the answers gathered so far and the keys still pending, signed
with HMAC-SHA256 under a key derived from ``SECRET_KEY`` for this purpose alone (Django's
``signing``, salt ``mcp_tools.request-state``; ``SECRET_KEY_FALLBACKS`` rotate it). It is

- **authenticated**: a changed byte fails the signature (``tampered``);
- **bound** to the tenant, the acting user, the method, the tool/prompt/resource name and a
  digest of the arguments (``foreign`` when any differs);
- **expiring** after ``MCP_TOOLS_REQUEST_STATE_TTL_SECONDS`` (``expired``);
- **one-time**: its nonce is recorded in the database when it is redeemed, so every replica
  refuses a second use (``replayed``).

It is signed, not encrypted: the client sees its own answers. Never put a secret in it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from django.core import signing
from django.db import IntegrityError, transaction
from django.utils import timezone

from mcp_tools import conf

SALT: Final = "mcp_tools.request-state"
VERSION: Final = 1


class RequestStateRefusedError(Exception):
    """A request state was refused; ``reason`` is ``tampered``, ``expired``, ``foreign`` or
    ``replayed``. Answered as -32602 with ``data.reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"request state refused: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Binding:
    """What a request state is bound to: who asked, what, with which arguments."""

    tenant: str
    user: str
    method: str
    name: str
    arguments: str  # SHA-256 of the canonical arguments

    @classmethod
    def of(cls, *, tenant: Any, user: Any, method: str, name: str, arguments: Any) -> Binding:
        canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
        return cls(
            tenant=str(tenant),
            user=str(user),
            method=method,
            name=name,
            arguments=hashlib.sha256(canonical.encode()).hexdigest(),
        )

    def as_list(self) -> list[str]:
        return [self.tenant, self.user, self.method, self.name, self.arguments]


@dataclass(frozen=True)
class OpenedState:
    """A verified request state: earlier answers, the keys asked last round, its nonce."""

    answers: dict[str, Any]
    pending: tuple[str, ...]
    nonce: str
    expires_at: dt.datetime


def issue(binding: Binding, *, answers: Mapping[str, Any], pending: list[str]) -> str:
    """A new request state carrying ``answers`` and waiting for ``pending``.

    Raises:
        ValueError: the state would exceed ``MCP_TOOLS_REQUEST_STATE_MAX_BYTES``.
    """
    ttl = int(conf.get("REQUEST_STATE_TTL_SECONDS"))
    payload = {
        "v": VERSION,
        "b": binding.as_list(),
        "a": dict(answers),
        "p": list(pending),
        "n": secrets.token_urlsafe(18),
        "x": int(timezone.now().timestamp()) + ttl,
    }
    token = signing.dumps(payload, salt=SALT, compress=True)
    if len(token) > int(conf.get("REQUEST_STATE_MAX_BYTES")):
        raise ValueError("request state too large: keep answers small")
    return token


def open_state(token: Any, binding: Binding) -> OpenedState:
    """Verify ``token`` for ``binding`` (signature, expiry, binding; not yet redeemed).

    Raises:
        RequestStateRefusedError: ``tampered``, ``expired`` or ``foreign``.
    """
    if not isinstance(token, str) or len(token) > int(conf.get("REQUEST_STATE_MAX_BYTES")):
        raise RequestStateRefusedError("tampered")
    ttl = int(conf.get("REQUEST_STATE_TTL_SECONDS"))
    try:
        payload = signing.loads(token, salt=SALT, max_age=ttl)
    except signing.SignatureExpired:
        raise RequestStateRefusedError("expired") from None
    except signing.BadSignature:
        raise RequestStateRefusedError("tampered") from None
    if not isinstance(payload, dict) or payload.get("v") != VERSION:
        raise RequestStateRefusedError("tampered")
    expires = int(payload.get("x", 0))
    if expires <= timezone.now().timestamp():
        raise RequestStateRefusedError("expired")
    if payload.get("b") != binding.as_list():
        raise RequestStateRefusedError("foreign")
    return OpenedState(
        answers=dict(payload.get("a") or {}),
        pending=tuple(payload.get("p") or ()),
        nonce=str(payload["n"]),
        expires_at=dt.datetime.fromtimestamp(expires, tz=dt.UTC),
    )


def redeem(state: OpenedState, *, using: str = "default") -> None:
    """Record ``state`` as used; a second redemption anywhere is refused.

    Raises:
        RequestStateRefusedError: ``replayed``.
    """
    from mcp_tools.models import RequestStateRedemption

    try:
        with transaction.atomic(using=using):
            RequestStateRedemption.objects.using(using).create(
                nonce=state.nonce, expires_at=state.expires_at
            )
    except IntegrityError:
        raise RequestStateRefusedError("replayed") from None


@dataclass
class Inputs:
    """This round's verified answers and the state to redeem in the worker."""

    opened: OpenedState | None = None
    answers: dict[str, Any] = field(default_factory=dict)


def open_inputs(token: Any, responses: Mapping[str, Any], binding: Binding) -> Inputs:
    """This round's answers under the request state ``token`` (2026-07-28 only).

    Answers count only for the keys the state says were asked (answers sent without a state
    are "loose": used only by ``require_state=False`` questions, never through here).

    Raises:
        RequestStateRefusedError: tampered, expired or foreign state.
    """
    opened = open_state(token, binding)
    answers = dict(opened.answers)
    answers.update({key: responses[key] for key in opened.pending if key in responses})
    return Inputs(opened=opened, answers=answers)
