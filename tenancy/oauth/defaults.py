"""The ``OAUTH2_PROVIDER`` settings ``tenancy.oauth`` is built for (no Django imports here).

``OAUTH2_PROVIDER = oauth2_provider_settings(issuer=..., resource=...)`` in a project's
settings. Every value below is a decision; each has its reason next to it.
"""

from __future__ import annotations

from typing import Any

from tenancy.oauth import READ_SCOPE, WRITE_SCOPE

SCOPES = {
    READ_SCOPE: "Use the read-only tools: look things up as you",
    WRITE_SCOPE: "Use the tools that record and change data, as you",
}


def oauth2_provider_settings(
    *, issuer: str | None = None, resource: str | None = None, **overrides: Any
) -> dict[str, Any]:
    """django-oauth-toolkit settings for an MCP authorization server bound to ``tenancy``.

    Args:
        issuer: the public origin, e.g. ``"https://app.example"`` (RFC 8414 ``issuer``);
            ``None`` derives it from each request (development only).
        resource: the canonical MCP URL, e.g. ``"https://app.example/mcp"`` (the RFC 8707
            audience every token is bound to); ``None`` derives it from each request.
        overrides: any other ``OAUTH2_PROVIDER`` key.
    """
    values: dict[str, Any] = {
        # The code and refresh grants only: every other grant is absent from the server itself
        # (not merely unadvertised), so no password or client secret is ever checked for one.
        "OAUTH2_SERVER_CLASS": "tenancy.oauth.server.TenancyOAuth2Server",
        "OAUTH2_VALIDATOR_CLASS": "tenancy.oauth.validators.TenancyOAuth2Validator",
        # offline_access is deliberately absent: refresh tokens come with the code grant.
        "SCOPES": dict(SCOPES),
        "DEFAULT_SCOPES": [READ_SCOPE, WRITE_SCOPE],
        # Short-lived, hashed at rest, recognisable prefixes for secret scanners.
        "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
        "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
        "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
        "ACCESS_TOKEN_GENERATOR": "tenancy.oauth.tokens.generate_access_token",
        "REFRESH_TOKEN_GENERATOR": "tenancy.oauth.tokens.generate_refresh_token",
        "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
        # Refresh tokens rotate on use; presenting a rotated one revokes its whole family.
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_REUSE_PROTECTION": True,
        # Authorization code + PKCE (S256 only) for public clients; nothing implicit, no
        # passwords, tokens only in the Authorization header, RFC 9207 iss on responses.
        "PKCE_REQUIRED": True,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
        "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
        "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
        "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
        "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
        "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
        "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
        "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
        # "none": public clients (CIMD, Claude's DCR registrations).
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
            "none",
            "client_secret_post",
            "client_secret_basic",
        ],
        # RFC 8252 §7.3: a loopback redirect URI matches on any port. Claude Code's client
        # declares http://localhost/callback and listens on a random port.
        "ALLOW_LOCALHOST_LOOPBACK": True,
        # The consent page every time: the user picks the tenant for each grant.
        "REQUEST_APPROVAL_PROMPT": "force",
        # Registration: open DCR (hosted assistants still use it) and CIMD, whose documents
        # are fetched by tenancy.oauth.cimd (https, public addresses, 16 KiB, 5 s, no
        # redirects) and cached between 5 minutes and an hour.
        "DCR_ENABLED": True,
        "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
        "CIMD_ENABLED": True,
        "CIMD_METADATA_FETCHER": "tenancy.oauth.cimd.MetadataFetcher",
        "CIMD_METADATA_MIN_AGE_SECONDS": 300,
        "CIMD_METADATA_MAX_AGE_SECONDS": 3600,
        "CIMD_FETCH_TIMEOUT_SECONDS": 5,
        "CIMD_MAX_DOCUMENT_SIZE": 16 * 1024,
        "OIDC_ISS_ENDPOINT": (issuer or "").rstrip("/"),
        "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER": (resource or "").rstrip("/"),
        "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
    }
    values.update(overrides)
    return values
