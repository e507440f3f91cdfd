"""Bearer tokens: format, issuing, and the per-request check.

A token is ``ck_pat_<43 url-safe chars>`` (personal) or ``ck_ses_<...>`` (login session): a
recognisable prefix for secret scanners plus 256 random bits. Only the SHA-256 digest is stored.
The package holds the rest of a token's life: ``lookup`` (the one-statement read behind the
check) and ``credentials`` (every bearer kind a request may carry, and the verifiers of others).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from django.utils import timezone

from tenancy import conf
from tenancy.exceptions import (
    AccountDisabledError,
    AuthenticationFailedError,
    CredentialsSupersededError,
    TenantSuspendedError,
)
from tenancy.models import AbstractMembership, AccessToken
from tenancy.tokens.lookup import CountingCheck, fetch_token

PREFIXES = {AccessToken.Kind.PERSONAL: "ck_pat_", AccessToken.Kind.SESSION: "ck_ses_"}
_TOKEN_RE = re.compile(r"^ck_(pat|ses)_[A-Za-z0-9_-]{43}$")
_SHOWN_CHARS = 12


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def looks_like_token(raw: str) -> bool:
    """Cheap format check done before any hashing or database work."""
    return bool(_TOKEN_RE.match(raw))


def issue_token(
    *,
    membership: AbstractMembership,
    name: str,
    kind: str = AccessToken.Kind.PERSONAL,
    expires_at: datetime | None = None,
) -> tuple[AccessToken, str]:
    """Create a token for ``membership``; returns the row and the raw secret (shown once)."""
    raw = PREFIXES[AccessToken.Kind(kind)] + secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        membership_id=membership.pk,
        kind=kind,
        name=name,
        prefix=raw[:_SHOWN_CHARS],
        digest=digest(raw),
        credential_epoch=membership.credential_epoch,
        expires_at=expires_at,
    )
    return token, raw


def issue_session_token(*, membership: AbstractMembership) -> tuple[AccessToken, str]:
    minutes = conf.get("SESSION_TOKEN_MINUTES")
    return issue_token(
        membership=membership,
        name="login session",
        kind=AccessToken.Kind.SESSION,
        expires_at=timezone.now() + timedelta(minutes=minutes),
    )


def check_token(raw: str, *, count: CountingCheck | None = None) -> AccessToken:
    """Return the live token for ``raw`` or raise an ``AuthenticationFailedError`` subclass.

    One fresh, uncached read of token + membership + user + tenant: role changes, password
    changes, suspension and revocation take effect on the very next request. ``count``: a
    rate count the read may carry (``tenancy.tokens.lookup.fetch_token``).
    """
    if not looks_like_token(raw):
        raise AuthenticationFailedError()
    token = fetch_token(digest(raw), count=count)
    if token is None:
        raise AuthenticationFailedError()
    now = timezone.now()
    if not _usable(token, now):
        raise AuthenticationFailedError()
    ensure_live(token.membership, credential_epoch=token.credential_epoch)
    _touch(token, now)
    return token


def _usable(token: AccessToken, now: datetime) -> bool:
    """Neither revoked nor expired."""
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now)


def ensure_still_live(
    membership: AbstractMembership, *, credential_epoch: int | None, token_id: int | None
) -> None:
    """Judge again work a credential started and that goes on after its request: a queued
    task (``mcp_tools.tasks``), an open stream.

    The request path's rule with what such work keeps of its credential (never the secret):
    the token it came with (``token_id``, ``None`` for other kinds) revoked or expired →
    ``AuthenticationFailedError``; then ``ensure_live`` at the epoch it was accepted at, or,
    with no epoch recorded (``None``: work from before it was kept), ``ensure_member_live``.
    ``membership`` needs its user and tenant loaded; the token costs one indexed read.
    """
    if token_id is not None:
        token = AccessToken.objects.filter(pk=token_id).only("revoked_at", "expires_at").first()
        if token is None or not _usable(token, timezone.now()):
            raise AuthenticationFailedError()
    if credential_epoch is None:
        ensure_member_live(membership)
    else:
        ensure_live(membership, credential_epoch=credential_epoch)


def ensure_live(membership: AbstractMembership, *, credential_epoch: int) -> None:
    """Refuse a credential issued at ``credential_epoch`` unless its membership still stands.

    The one liveness rule for every kind of credential (personal, session, OAuth): the epoch
    moved on (role or password change, suspension), the membership or user was disabled, or
    the tenant was suspended → the matching ``AuthenticationFailedError`` subclass.
    """
    if credential_epoch != membership.credential_epoch:
        raise CredentialsSupersededError()
    ensure_member_live(membership)


def ensure_member_live(membership: AbstractMembership) -> None:
    """Refuse ``membership`` unless it may act now, whatever credential it acts with.

    The rule every actor passes on every request (through ``ensure_live``) and again where its
    work runs later or long: a task worker (``mcp_tools.tasks``), an open stream. A disabled
    membership or user → ``AccountDisabledError``; a suspended tenant → ``TenantSuspendedError``.
    ``membership`` needs its user and tenant loaded (one read, no query here).
    """
    if membership.disabled_at is not None or not membership.get_user().is_active:
        raise AccountDisabledError()
    if not conf.tenant_is_active(membership.get_tenant()):
        raise TenantSuspendedError()


def _touch(token: AccessToken, now: datetime) -> None:
    resolution = timedelta(seconds=conf.get("TOKEN_LAST_USED_RESOLUTION_SECONDS"))
    if token.last_used_at is None or now - token.last_used_at >= resolution:
        AccessToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def revoke_token(token: AccessToken) -> None:
    if token.revoked_at is None:
        AccessToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        token.refresh_from_db(fields=["revoked_at"])
