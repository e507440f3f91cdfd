"""System checks for ``tenancy.oauth``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks
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
