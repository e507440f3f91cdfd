"""``tenancy.oauth`` settings (``TENANCY_OAUTH_*``), read at call time.

The authorization server itself is configured through django-oauth-toolkit's
``OAUTH2_PROVIDER`` dict; ``tenancy.oauth.defaults.oauth2_provider_settings()`` returns the one
this sub-app is built for.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # The path of the protected resource (the MCP endpoint) when OAUTH2_PROVIDER's
    # OAUTH2_PROTECTED_RESOURCE_IDENTIFIER does not name it absolutely.
    "RESOURCE_PATH": "/mcp",
    # Dynamic client registration per client address (django-ratelimit syntax; the address is
    # tenancy.rates.addresses.client_address, so TENANCY_TRUSTED_PROXIES applies).
    "REGISTRATION_RATE": "20/m",
    # A registration document: its size in bytes, how many redirect URIs it may list, the
    # length of each URI (and of any other string in it), the length of client_name. Real
    # clients send well under a kilobyte with one to three callbacks.
    "REGISTRATION_MAX_BYTES": 16 * 1024,
    "REGISTRATION_MAX_REDIRECT_URIS": 10,
    "REGISTRATION_MAX_URI_LENGTH": 2048,
    "REGISTRATION_MAX_NAME_LENGTH": 100,
    # The token endpoint (code exchange, refresh) per client address, and per client_id
    # whatever the address. A hosted assistant exchanges and refreshes for all its users from
    # a few addresses, so the per-address rate is the generous one. Revocation counts against
    # the per-address rate too.
    "TOKEN_RATE": "120/m",
    "TOKEN_CLIENT_RATE": "30/m",
    # TEST ONLY. Fetch a client ID metadata document whose https client_id names a loopback
    # host (127.0.0.1, ::1, localhost) over plain http from that host. Off by default; system
    # check tenancy_oauth.E001 refuses it wherever the server answers for a public host.
    "CIMD_LOOPBACK_HTTP_FOR_TESTS": False,
    # Client ID metadata documents (tenancy.oauth.cimd). First sight of a client_id URL (no
    # application has it yet: the server fetches it and may create one) per client address,
    # and per document path whatever its query string, in django-ratelimit syntax; over
    # either, the OAuth endpoint answers 429 with Retry-After before anything is fetched.
    "CIMD_FIRST_SIGHT_RATE": "20/h",
    "CIMD_FIRST_SIGHT_PER_PATH_RATE": "10/h",
    # Fetches in flight per process: per origin (scheme, host, port) and in all. A fetch waits
    # at most CIMD_FETCH_SLOT_WAIT_SECONDS for a slot, then the client is unknown.
    "CIMD_FETCHES_PER_ORIGIN": 2,
    "CIMD_MAX_CONCURRENT_FETCHES": 10,
    "CIMD_FETCH_SLOT_WAIT_SECONDS": 2.0,
    # manage.py purge_cimd_clients: applications a document created and no grant or token
    # ever used, once older than this.
    "CIMD_UNUSED_RETENTION_HOURS": 24,
    # Who signs a signed-out user in on the consent page. "project": the project's own login
    # at settings.LOGIN_URL (allauth, MFA, SSO: whatever it enforces applies). "toolkit": this
    # sub-app's email-and-password page (/oauth/sign-in/), for a project with no login of its
    # own; in "project" mode that page does not exist (404), so it cannot bypass the project's.
    "SIGN_IN": "project",
}

SIGN_IN_MODES = ("project", "toolkit")


def get(name: str) -> Any:
    if name not in DEFAULTS:
        raise AttributeError(f"unknown tenancy.oauth setting {name!r}")
    return getattr(settings, f"TENANCY_OAUTH_{name}", DEFAULTS[name])


def uses_own_sign_in() -> bool:
    """``TENANCY_OAUTH_SIGN_IN == "toolkit"``: the sub-app's own sign-in page serves."""
    return bool(get("SIGN_IN") == "toolkit")


def login_url() -> str:
    """Where a signed-out user goes (``redirect_to_login``, with ``next``): the project's
    ``settings.LOGIN_URL``, or the sub-app's own sign-in page in "toolkit" mode. A URL name,
    a path or an absolute URL, as ``LOGIN_URL`` takes."""
    if uses_own_sign_in():
        return "oauth2_provider:sign-in"
    return str(settings.LOGIN_URL)


def _provider(name: str) -> Any:
    from oauth2_provider.settings import oauth2_settings

    return getattr(oauth2_settings, name)


def resource_url(request: Any) -> str:
    """The canonical URL of the protected resource (RFC 8707 audience; RFC 9728 ``resource``).

    ``OAUTH2_PROTECTED_RESOURCE_IDENTIFIER`` when configured (production: the public HTTPS URL,
    so the answer never depends on proxy headers); otherwise this request's origin + the
    resource path. No trailing slash.
    """
    configured = _provider("OAUTH2_PROTECTED_RESOURCE_IDENTIFIER")
    if configured:
        return str(configured).rstrip("/")
    return str(request.build_absolute_uri(resource_path())).rstrip("/")


def resource_path() -> str:
    configured = _provider("OAUTH2_PROTECTED_RESOURCE_IDENTIFIER")
    if configured:
        return urlsplit(str(configured)).path.rstrip("/") or "/"
    return str(get("RESOURCE_PATH"))


def issuer_url(request: Any) -> str:
    """This authorization server's issuer: ``OIDC_ISS_ENDPOINT`` or the request's origin."""
    configured = _provider("OIDC_ISS_ENDPOINT")
    if configured:
        return str(configured).rstrip("/")
    return str(request.build_absolute_uri("/")).rstrip("/")


def supported_scopes() -> list[str]:
    return sorted(_provider("SCOPES"))
