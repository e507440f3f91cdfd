"""System checks for ``tenancy.oauth``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
from django.shortcuts import resolve_url
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from django.utils.module_loading import import_string

from tenancy.oauth import conf

_LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1", "testserver"})
VALIDATOR = "tenancy.oauth.validators.TenancyOAuth2Validator"


def _serves_public_hosts() -> bool:
    """Production-like: the server answers for a host that is not this machine's loopback."""
    hosts = {str(host).lower() for host in settings.ALLOWED_HOSTS}
    if hosts - _LOCAL_HOSTS:
        return True
    provider = getattr(settings, "OAUTH2_PROVIDER", {})
    for key in ("OIDC_ISS_ENDPOINT", "OAUTH2_PROTECTED_RESOURCE_IDENTIFIER"):
        host = urlsplit(str(provider.get(key) or "")).hostname
        if host and host not in _LOCAL_HOSTS:
            return True
    return False


@checks.register(checks.Tags.security)
def check_test_overrides(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    if conf.get("CIMD_LOOPBACK_HTTP_FOR_TESTS") and _serves_public_hosts():
        return [
            checks.Error(
                "TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS is on in a deployment that serves "
                "public hosts.",
                hint="It lets client metadata documents be fetched over plain http; it exists "
                "for tests on loopback only. Remove it.",
                id="tenancy_oauth.E001",
            )
        ]
    return []


@checks.register(checks.Tags.security)
def check_validator(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    provider = getattr(settings, "OAUTH2_PROVIDER", {})
    configured = provider.get("OAUTH2_VALIDATOR_CLASS")
    validator = import_string(configured) if isinstance(configured, str) else configured
    if validator is None or not issubclass(validator, import_string(VALIDATOR)):
        return [
            checks.Error(
                "OAUTH2_PROVIDER['OAUTH2_VALIDATOR_CLASS'] is not tenancy.oauth's validator.",
                hint="Use tenancy.oauth.defaults.oauth2_provider_settings(); without the "
                "validator no grant is bound to a membership and no token is accepted.",
                id="tenancy_oauth.E002",
            )
        ]
    return []


@checks.register(checks.Tags.urls)
def check_sign_in(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TENANCY_OAUTH_SIGN_IN`` is a known mode, and in "project" mode ``LOGIN_URL`` is the
    project's own login: not the sub-app's page (which then answers 404) and, when it is a
    path, one this project routes."""
    mode = conf.get("SIGN_IN")
    if mode not in conf.SIGN_IN_MODES:
        return [
            checks.Error(
                f"TENANCY_OAUTH_SIGN_IN is {mode!r}.",
                hint='Use "project" (your LOGIN_URL signs people in) or "toolkit" (the '
                "sub-app's own email-and-password page, for a project without a login).",
                id="tenancy_oauth.E003",
            )
        ]
    if conf.uses_own_sign_in():
        return []
    try:
        toolkit_page = reverse("oauth2_provider:sign-in")
    except NoReverseMatch:
        return []  # tenancy.oauth.urls not routed: no consent page to sign in for
    unrouted = checks.Warning(
        f"LOGIN_URL ({settings.LOGIN_URL}) is not routed: a signed-out user on the OAuth "
        "consent page lands on a 404.",
        hint="Route your login there (or point LOGIN_URL at it); a project with no login of "
        'its own sets TENANCY_OAUTH_SIGN_IN = "toolkit".',
        id="tenancy_oauth.W001",
    )
    try:
        login = str(resolve_url(settings.LOGIN_URL))
    except NoReverseMatch:
        return [unrouted]
    path = urlsplit(login).path
    if path == toolkit_page:
        return [
            checks.Error(
                "LOGIN_URL is tenancy.oauth's sign-in page, which serves only when "
                'TENANCY_OAUTH_SIGN_IN = "toolkit".',
                hint='A project without a login of its own: set TENANCY_OAUTH_SIGN_IN = "toolkit"'
                " and leave LOGIN_URL alone. A project with one: set LOGIN_URL back to it.",
                id="tenancy_oauth.E004",
            )
        ]
    if login.startswith("/"):
        try:
            resolve(path)
        except Resolver404:
            return [unrouted]
    return []
