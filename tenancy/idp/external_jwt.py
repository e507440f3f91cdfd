"""JWT access tokens (RFC 9068) from an external identity provider, as ``tenancy`` credentials.

A company whose identity provider (Keycloak, Okta, Entra ID, Auth0) issues JWT access tokens
points its MCP clients at this server with such a token. ``TENANCY_EXTERNAL_JWT`` names the
issuer; ``verify`` is registered with ``tenancy.tokens.credentials`` without a prefix (a JWT has
none the toolkit could claim), so it is consulted on the toolkit's own endpoints (``/mcp``,
``/a2a``) only: on the project's routes the project's authentication decides.

A token is accepted when

- its header names an allowed asymmetric algorithm (``ALGORITHMS``; never ``none``, never an
  HMAC one, which a public key set could otherwise be abused to "verify") and, by default,
  ``typ: at+jwt`` (RFC 9068 §2.1);
- its signature verifies with the issuer's key of that ``kid`` (``tenancy.idp.jwks``: fetched,
  cached, refetched on an unknown ``kid`` at a bounded rate);
- ``iss`` is the issuer, ``aud`` names this resource (``AUDIENCE``, by default the MCP
  endpoint's URL), ``exp`` is in the future and ``nbf``/``iat`` not (``LEEWAY_SECONDS``);
- the tenant claim names a tenant (by ``TENANCY_TENANT_CODE_FIELD``) and the user claim a user
  (by ``USER_LOOKUP``) who is a live member of it (``tenancy.tokens.ensure_live``).

The role is the membership's, read fresh on every call, so disabling the member or suspending
the tenant takes effect on the next call whatever the token says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from joserfc import jws, jwt
from joserfc.errors import JoseError

from tenancy import conf
from tenancy.exceptions import (
    AuthenticationFailedError,
    TokenAudienceError,
    UnknownSigningKeyError,
)
from tenancy.idp import jwks
from tenancy.members import memberships, with_user_and_tenant
from tenancy.tokens import ensure_live
from tenancy.tokens.credentials import Credential

WELL_KNOWN_RESOURCE = "/.well-known/oauth-protected-resource"
# Three base64url segments: a JWS in compact form. Anything else is not this kind of bearer.
_COMPACT_JWS = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")
# An RFC 9068 token is a few hundred bytes to a few kilobytes; refuse to parse more.
MAX_TOKEN_BYTES = 16 * 1024
# Symmetric and unsigned algorithms are never allowed: the key set is public.
FORBIDDEN_ALGORITHM_PREFIXES = ("HS", "none")

DEFAULTS: dict[str, Any] = {
    # The issuer's identifier, exactly as its tokens' ``iss`` carries it. Required.
    "ISSUER": None,
    # The issuer's JWKS. None: found through discovery at the issuer (OpenID Connect
    # ``/.well-known/openid-configuration``, then RFC 8414).
    "JWKS_URI": None,
    # The protected resource's identifier (the MCP endpoint's public URL). None: this
    # request's origin + "/mcp" (set it in production so proxies cannot change it).
    "RESOURCE": None,
    # What ``aud`` must name (one of): a string or a list. None: the resource.
    "AUDIENCE": None,
    # The claim naming the tenant (matched against TENANCY_TENANT_CODE_FIELD).
    "TENANT_CLAIM": "tenant",
    # The claim naming the user, and the user model's field it is matched against.
    "USER_CLAIM": "sub",
    "USER_LOOKUP": "username",
    # The claim carrying space-separated scopes that narrow the role (as OAuth scopes do on
    # /mcp). None: the role alone decides.
    "SCOPE_CLAIM": None,
    "ALGORITHMS": ("RS256", "PS256", "ES256", "EdDSA"),
    # RFC 9068 §2.1: ``typ`` is "at+jwt" (an ID token or another JWT is not an access token).
    "REQUIRE_TYP": True,
    "LEEWAY_SECONDS": 30,
    # How long a fetched key set is used before it is fetched again, and how often at most an
    # unknown ``kid`` may make this process fetch it (a stream of forged kids must not turn
    # into a stream of requests to the issuer).
    "JWKS_CACHE_SECONDS": 300,
    "JWKS_MIN_REFETCH_SECONDS": 30,
    "HTTP_TIMEOUT_SECONDS": 5.0,
}


@dataclass(frozen=True)
class Settings:
    issuer: str
    jwks_uri: str | None
    resource: str | None
    audience: tuple[str, ...] | None
    tenant_claim: str
    user_claim: str
    user_lookup: str
    scope_claim: str | None
    algorithms: tuple[str, ...]
    require_typ: bool
    leeway: int
    cache_seconds: float
    min_refetch_seconds: float
    timeout: float


def settings() -> Settings | None:
    """``TENANCY_EXTERNAL_JWT`` with its defaults, or ``None`` when no issuer is configured.

    Raises:
        ImproperlyConfigured: an unknown key (system check ``tenancy.E020`` says the same).
    """
    raw = conf.get("EXTERNAL_JWT")
    if not raw:
        return None
    unknown = set(raw) - set(DEFAULTS)
    if unknown:
        raise ImproperlyConfigured(f"TENANCY_EXTERNAL_JWT: unknown keys {sorted(unknown)}")
    values = {**DEFAULTS, **raw}
    if not values["ISSUER"]:
        return None
    audience = values["AUDIENCE"]
    if isinstance(audience, str):
        audience = (audience,)
    return Settings(
        issuer=str(values["ISSUER"]),
        jwks_uri=values["JWKS_URI"],
        resource=values["RESOURCE"].rstrip("/") if values["RESOURCE"] else None,
        audience=tuple(audience) if audience else None,
        tenant_claim=str(values["TENANT_CLAIM"]),
        user_claim=str(values["USER_CLAIM"]),
        user_lookup=str(values["USER_LOOKUP"]),
        scope_claim=values["SCOPE_CLAIM"],
        algorithms=allowed_algorithms(values["ALGORITHMS"]),
        require_typ=bool(values["REQUIRE_TYP"]),
        leeway=int(values["LEEWAY_SECONDS"]),
        cache_seconds=float(values["JWKS_CACHE_SECONDS"]),
        min_refetch_seconds=float(values["JWKS_MIN_REFETCH_SECONDS"]),
        timeout=float(values["HTTP_TIMEOUT_SECONDS"]),
    )


def allowed_algorithms(configured: Any) -> tuple[str, ...]:
    """The configured algorithms without any symmetric or unsigned one (check E021 names them)."""
    return tuple(
        str(name) for name in configured if not str(name).startswith(FORBIDDEN_ALGORITHM_PREFIXES)
    )


def configured() -> bool:
    return settings() is not None


def resource_url(request: Any, config: Settings) -> str:
    """The protected resource's identifier: ``RESOURCE``, or this origin + ``/mcp``."""
    if config.resource:
        return config.resource
    return str(request.build_absolute_uri("/mcp")).rstrip("/")


def looks_like_jwt(raw: str) -> bool:
    return len(raw) <= MAX_TOKEN_BYTES and bool(_COMPACT_JWS.match(raw))


def verify(raw: str, request: Any) -> Credential | None:
    """The credential for an external JWT access token; ``None`` for other kinds of bearer.

    Raises:
        AuthenticationFailedError: a bad signature, algorithm, ``typ``, issuer, lifetime or
            unknown tenant, user or membership (``Auth.InvalidToken``); a key the issuer's
            set does not hold (``Auth.UnknownSigningKey``); another audience
            (``Auth.InvalidAudience``); a membership that no longer stands (the subclasses
            ``ensure_live`` raises).
    """
    config = settings()
    if config is None or not looks_like_jwt(raw):
        return None
    try:
        compact = jws.extract_compact(raw.encode("ascii"))
    except (JoseError, ValueError, UnicodeError) as exc:
        raise AuthenticationFailedError() from exc
    header = compact.headers()
    algorithm = header.get("alg")
    if algorithm not in config.algorithms:
        raise AuthenticationFailedError()
    if config.require_typ and str(header.get("typ", "")).lower() not in (
        "at+jwt",
        "application/at+jwt",
    ):
        raise AuthenticationFailedError()
    kid = header.get("kid")
    key = jwks.key_for(config, kid if isinstance(kid, str) else None)
    if key is None:
        raise UnknownSigningKeyError()
    try:
        token = jwt.decode(raw, key, algorithms=list(config.algorithms))
    except (JoseError, ValueError) as exc:
        raise AuthenticationFailedError() from exc
    claims = token.claims
    _check_lifetime(claims, config)
    if claims.get("iss") != config.issuer:
        raise AuthenticationFailedError()
    audiences = config.audience or (resource_url(request, config),)
    granted = claims.get("aud")
    granted_list = [granted] if isinstance(granted, str) else granted
    if not isinstance(granted_list, list) or not set(map(str, granted_list)) & set(audiences):
        raise TokenAudienceError()
    membership = _membership(claims, config)
    ensure_live(membership, credential_epoch=membership.credential_epoch)
    return Credential(
        membership=membership,
        scopes=_scopes(claims, config),
        identity=(config.issuer, str(claims.get(config.user_claim))),
    )


def _check_lifetime(claims: Mapping[str, Any], config: Settings) -> None:
    now = timezone.now().timestamp()
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if not _is_number(exp) or exp <= now - config.leeway:
        raise AuthenticationFailedError()
    if nbf is not None and (not _is_number(nbf) or nbf > now + config.leeway):
        raise AuthenticationFailedError()
    if iat is not None and (not _is_number(iat) or iat > now + config.leeway):
        raise AuthenticationFailedError()


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _membership(claims: Mapping[str, Any], config: Settings) -> Any:
    tenant_code = claims.get(config.tenant_claim)
    user_key = claims.get(config.user_claim)
    if not isinstance(tenant_code, str) or not isinstance(user_key, str):
        raise AuthenticationFailedError()
    tenant_model = apps.get_model(conf.tenant_model_label())
    tenant = (
        tenant_model._default_manager.filter(**{conf.get("TENANT_CODE_FIELD"): tenant_code})
        .only("pk")
        .first()
    )
    # Two users matching (USER_LOOKUP on a field that is not unique, like ``email``) name no
    # one: refused, never the first of them.
    users = list(
        get_user_model()._default_manager.filter(**{config.user_lookup: user_key}).only("pk")[:2]
    )
    if tenant is None or len(users) != 1:
        raise AuthenticationFailedError()
    (user,) = users
    membership = with_user_and_tenant(memberships(user=user, tenant=tenant)).first()
    if membership is None:
        raise AuthenticationFailedError()
    return membership


def _scopes(claims: Mapping[str, Any], config: Settings) -> frozenset[str] | None:
    if config.scope_claim is None:
        return None
    value = claims.get(config.scope_claim)
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(str(item) for item in value)
    return frozenset()


def protected_resource_metadata(request: Any) -> dict[str, Any] | None:
    """RFC 9728 metadata naming the external issuer, or ``None`` when none is configured."""
    config = settings()
    if config is None:
        return None
    return {
        "resource": resource_url(request, config),
        "authorization_servers": [config.issuer],
        "bearer_methods_supported": ["header"],
    }


def challenge_parameters(request: Any) -> dict[str, str]:
    """``resource_metadata`` on the toolkit's challenges (RFC 9728 §5.1) when the issuer is
    external; with ``tenancy.oauth`` installed, its own parameters already name the document."""
    config = settings()
    if config is None or apps.is_installed("tenancy.oauth"):
        return {}
    path = getattr(request, "path", None)
    if path not in ("/mcp", "/a2a"):
        return {}
    resource = resource_url(request, config)
    scheme, _, rest = resource.partition("://")
    host, _, resource_path = rest.partition("/")
    suffix = f"/{resource_path}" if resource_path else ""
    return {"resource_metadata": f"{scheme}://{host}{WELL_KNOWN_RESOURCE}{suffix}"}
