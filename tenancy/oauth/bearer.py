"""OAuth access tokens as ``tenancy`` credentials, and the challenge of the protected resource.

``verify`` is registered with ``tenancy.tokens.credentials``: the middleware calls it for a bearer
that is not a personal or session token, and resolves tenant, actor and row scope from the
membership it returns, exactly as for a personal token. It accepts an access token only

- on the protected resource (the MCP endpoint), and only when the token was issued for that
  resource (RFC 8707: its canonical URL is among the token's resources) — a token issued for
  any other resource, or presented anywhere else, is ``Auth.InvalidAudience``;
- while unexpired and unrevoked, bound to a live ``ClientAuthorization`` whose membership
  still has the credential epoch it had at approval (``tenancy.tokens.ensure_live``).
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tenancy.exceptions import AuthenticationFailedError, TokenAudienceError
from tenancy.members import related_paths
from tenancy.oauth import conf
from tenancy.oauth.models import AccessTokenBinding
from tenancy.oauth.tokens import looks_like_access_token
from tenancy.tokens import ensure_live
from tenancy.tokens.credentials import Credential

WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"


def verify(raw: str, request: Any) -> Credential | None:
    """The credential for an OAuth access token; ``None`` for other kinds of bearer.

    Raises:
        AuthenticationFailedError: unknown, expired or revoked (``Auth.InvalidToken``), wrong
            audience (``Auth.InvalidAudience``), or a membership that no longer stands (the
            subclasses ``ensure_live`` raises).
    """
    if not looks_like_access_token(raw):
        return None
    checksum = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    binding = (
        AccessTokenBinding.objects.select_related(
            "access_token", *related_paths("authorization__membership")
        )
        .filter(access_token__token_checksum=checksum)
        .first()
    )
    if binding is None:  # never issued, revoked (deleted) or a registration token
        raise AuthenticationFailedError()
    token = binding.access_token
    if token.is_expired():
        raise AuthenticationFailedError()
    if request.path != conf.resource_path() or conf.resource_url(request) not in (
        token.resource or []
    ):
        raise TokenAudienceError()
    authorization = binding.authorization
    if authorization.revoked_at is not None:
        raise AuthenticationFailedError()
    membership = authorization.membership
    ensure_live(membership, credential_epoch=authorization.credential_epoch)
    return Credential(membership=membership, scopes=frozenset(token.scope.split()))


def resource_metadata_url(request: Any) -> str:
    """RFC 9728 §3.1: the well-known prefix inserted before the resource's path."""
    resource = urlsplit(conf.resource_url(request))
    path = WELL_KNOWN_RESOURCE + (resource.path if resource.path != "/" else "")
    return urlunsplit((resource.scheme, resource.netloc, path, "", ""))


def challenge_parameters(request: Any) -> dict[str, str]:
    """``resource_metadata`` and ``scope`` for challenges on the protected resource."""
    if getattr(request, "path", None) != conf.resource_path():
        return {}
    return {
        "resource_metadata": resource_metadata_url(request),
        "scope": " ".join(conf.supported_scopes()),
    }
