"""``tenancy.oauth``: OAuth 2.1 sign-in for MCP clients, as one more credential of ``tenancy``.

An optional sub-app (``pip install cluck[oauth]``; ``INSTALLED_APPS += ["oauth2_provider",
"tenancy.oauth"]``). django-oauth-toolkit is the authorization server (authorization code with
PKCE, refresh rotation, revocation, DCR, CIMD, RFC 8414/9728 metadata); this package is the glue
to ``tenancy``: the sign-in and consent pages where the user picks a membership, the
``ClientAuthorization`` that binds every grant and token to that membership and its credential
epoch, and the bearer verifier through which an access token resolves tenant, actor and row
scope on the same path as a personal token.

Import-safe: nothing here imports django-oauth-toolkit at module level.
"""

READ_SCOPE = "mcp:read"
WRITE_SCOPE = "mcp:write"

__all__ = ["READ_SCOPE", "WRITE_SCOPE"]
