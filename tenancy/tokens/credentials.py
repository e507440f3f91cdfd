"""Which bearer credentials ``tenancy`` accepts: its own tokens, and registered verifiers.

Personal and session tokens (``ck_pat_``, ``ck_ses_``) are checked by ``tenancy.tokens``. An
extension adds another kind — ``tenancy.oauth`` adds OAuth access tokens — by registering a
verifier from its ``AppConfig.ready()``. Whatever the kind, the answer is a membership and the
middleware resolves tenant, actor and row scope from it exactly as for a personal token: there
is one identity path, and an extension only adds a way onto it.

A host project has credentials of its own (its JWTs, its session headers) on the same
``Authorization`` header. The toolkit claims a credential on the project's routes only when it
recognises it as its own, by the prefix of the kind that issued it (``claims``); everything
else reaches the project's authentication untouched. A verifier registered without prefixes
(a token format the toolkit cannot tell apart) is consulted only on the toolkit's endpoints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from tenancy.exceptions import AuthenticationFailedError
from tenancy.models import AbstractMembership
from tenancy.tokens import PREFIXES, check_token, looks_like_token
from tenancy.tokens.lookup import CountingCheck


@dataclass(frozen=True)
class Credential:
    """A verified bearer: the membership it acts for and what narrows it.

    Attributes:
        membership: with its user and tenant loaded, already checked live
            (``tenancy.tokens.ensure_live``).
        token_id: a ``tenancy.models.AccessToken`` id, or ``None`` for other kinds.
        scopes: the credential's scopes, or ``None`` when only the role decides.
        identity: ``(issuer, subject)`` of a token an external identity provider issued
            (``tenancy.idp.external_jwt``), or ``None``: what an audit records it as.
    """

    membership: AbstractMembership
    token_id: int | None = None
    scopes: frozenset[str] | None = None
    identity: tuple[str, str] | None = None


# ``verify(raw, request) -> Credential | None``: ``None`` = "not my kind of token"; a
# ``AuthenticationFailedError`` = "mine, and refused".
BearerVerifier = Callable[[str, Any], "Credential | None"]
_verifiers: list[BearerVerifier] = []
# Every token the toolkit issues starts with one of these (tenancy.tokens.PREFIXES and what
# extensions register).
_prefixes: set[str] = set(PREFIXES.values())


def register_bearer_verifier(verifier: BearerVerifier, *, prefixes: Iterable[str] = ()) -> None:
    """Accept another kind of bearer token (idempotent; call from ``AppConfig.ready()``).

    ``prefixes``: how the tokens of this kind start, so that the middleware claims them on
    every route (``claims``); without any, the kind is accepted on the toolkit's own
    endpoints only.
    """
    if verifier not in _verifiers:
        _verifiers.append(verifier)
    _prefixes.update(prefixes)


def claims(raw: str) -> bool:
    """Whether the bearer ``raw`` looks like a credential the toolkit issued (no I/O)."""
    return raw.startswith(tuple(_prefixes))


def authenticate_bearer(
    raw: str, request: Any, *, count: CountingCheck | None = None
) -> Credential:
    """The credential for the bearer ``raw`` presented on ``request``.

    ``count``: a rate count tenancy's own token check may carry in its statement
    (``tenancy.tokens.lookup.fetch_token``); other kinds leave it uncounted.

    Raises:
        AuthenticationFailedError: (or a subclass naming why) when no kind accepts it.
    """
    if looks_like_token(raw):
        token = check_token(raw, count=count)
        return Credential(membership=token.membership, token_id=token.pk)
    for verifier in _verifiers:
        credential = verifier(raw, request)
        if credential is not None:
            return credential
    raise AuthenticationFailedError()
