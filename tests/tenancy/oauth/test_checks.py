"""System checks of tenancy.oauth: the test-only CIMD override never on a public deployment."""

from __future__ import annotations

from django.test import override_settings

from tenancy.oauth.checks import check_test_overrides, check_validator
from tenancy.oauth.defaults import oauth2_provider_settings
from tests.mutations import mutation


def _ids(messages) -> list[str]:
    return [message.id for message in messages]


@mutation(
    "tenancy/oauth/checks.py",
    find="    hosts = {str(host).lower() for host in settings.ALLOWED_HOSTS}\n",
    replace="    return False\n",
)
def test_the_loopback_cimd_override_is_refused_where_public_hosts_are_served():
    """Mutation: make ``_serves_public_hosts`` return False → red."""
    with override_settings(TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS=True):
        assert _ids(check_test_overrides()) == []  # loopback-only test settings
        with override_settings(ALLOWED_HOSTS=["farm.example"]):
            assert _ids(check_test_overrides()) == ["tenancy_oauth.E001"]
        public = oauth2_provider_settings(resource="https://farm.example/mcp")
        with override_settings(OAUTH2_PROVIDER=public):
            assert _ids(check_test_overrides()) == ["tenancy_oauth.E001"]
    with override_settings(ALLOWED_HOSTS=["farm.example"]):
        assert _ids(check_test_overrides()) == []  # off by default


def test_a_toolkit_validator_that_binds_nothing_is_refused():
    plain = oauth2_provider_settings(
        OAUTH2_VALIDATOR_CLASS="oauth2_provider.oauth2_validators.OAuth2Validator"
    )
    with override_settings(OAUTH2_PROVIDER=plain):
        assert _ids(check_validator()) == ["tenancy_oauth.E002"]
    assert _ids(check_validator()) == []


def test_the_farm_settings_pass_the_checks(settings):
    assert settings.TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS is False
    assert _ids(check_test_overrides()) + _ids(check_validator()) == []
