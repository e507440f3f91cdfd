"""Who signs a signed-out user in on the consent page: the project's login (``LOGIN_URL``) by
default, the sub-app's own page only with ``TENANCY_OAUTH_SIGN_IN = "toolkit"`` (the farm)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client, override_settings

from tenancy.oauth.checks import check_sign_in
from tests.mutations import mutation
from tests.tenancy.oauth.flow import authorize_query, pkce, register

PROJECT_LOGIN = "/accounts/login/"
project_login = override_settings(TENANCY_OAUTH_SIGN_IN="project", LOGIN_URL=PROJECT_LOGIN)


@pytest.fixture
def authorize_url(db: Any) -> str:
    return authorize_query(register(Client()), pkce()[1])


def _redirect(response: Any) -> tuple[str, str]:
    """``(path, next)`` of a redirect to a login page."""
    assert response.status_code == 302, response.content
    location = urlsplit(response["Location"])
    return location.path, parse_qs(location.query)["next"][0]


@mutation(
    "tenancy/oauth/conf.py",
    find="    return str(settings.LOGIN_URL)",
    replace='    return "oauth2_provider:sign-in"',
)
@project_login
def test_signed_out_authorize_redirects_to_settings_login_url(authorize_url: str) -> None:
    """The project's login (allauth, MFA, SSO) signs people in, then sends them back.

    Mutation: send them to the sub-app's own page instead of ``settings.LOGIN_URL`` → red.
    """
    assert _redirect(Client().get(authorize_url)) == (PROJECT_LOGIN, authorize_url)


@project_login
def test_prompt_login_also_goes_to_the_projects_login_without_the_prompt(
    authorize_url: str,
) -> None:
    path, next_url = _redirect(Client().get(authorize_url + "&prompt=login"))
    assert path == PROJECT_LOGIN
    assert "prompt" not in parse_qs(urlsplit(next_url).query)


@project_login
@pytest.mark.django_db
def test_the_clients_page_and_revoke_send_a_signed_out_user_to_the_projects_login() -> None:
    assert _redirect(Client().get("/oauth/clients/")) == (PROJECT_LOGIN, "/oauth/clients/")
    assert _redirect(Client().post("/oauth/clients/1/revoke/")) == (
        PROJECT_LOGIN,
        "/oauth/clients/",
    )


@project_login
@pytest.mark.django_db
def test_the_toolkits_password_page_does_not_exist_beside_the_projects_login() -> None:
    """It would sign people in past the project's MFA or SSO."""
    client = Client()
    assert client.get("/oauth/sign-in/").status_code == 404
    assert client.post("/oauth/sign-in/", {"username": "a@b.test"}).status_code == 404


@override_settings(TENANCY_OAUTH_SIGN_IN="toolkit")
def test_the_toolkit_mode_keeps_the_sub_apps_own_sign_in(authorize_url: str) -> None:
    assert _redirect(Client().get(authorize_url)) == ("/oauth/sign-in/", authorize_url)
    assert Client().get("/oauth/sign-in/").status_code == 200


@override_settings(TENANCY_OAUTH_SIGN_IN="toolkit", TENANCY_TENANT_NOUN="school")
@pytest.mark.django_db
def test_a_failed_sign_in_never_says_tenant() -> None:
    page = Client().post("/oauth/sign-in/", {"username": "nobody@x.test", "password": "wrong"})
    assert page.status_code == 200
    assert page.context["form"].non_field_errors()
    assert "tenant" not in page.content.decode().lower()


# --- the system check ---------------------------------------------------------------------


def test_the_farm_reports_nothing() -> None:
    assert check_sign_in() == []


@override_settings(TENANCY_OAUTH_SIGN_IN="ours")
def test_an_unknown_mode_is_an_error() -> None:
    assert [error.id for error in check_sign_in()] == ["tenancy_oauth.E003"]


@override_settings(TENANCY_OAUTH_SIGN_IN="project", LOGIN_URL="oauth2_provider:sign-in")
def test_the_old_advice_login_url_is_the_toolkit_page_is_an_error() -> None:
    """What the docs used to say: that page now answers 404 unless the mode is "toolkit"."""
    assert [error.id for error in check_sign_in()] == ["tenancy_oauth.E004"]


@pytest.mark.parametrize("login_url", [PROJECT_LOGIN, "account_login"])
def test_an_unrouted_login_url_is_a_warning(login_url: str) -> None:
    with override_settings(TENANCY_OAUTH_SIGN_IN="project", LOGIN_URL=login_url):
        assert [error.id for error in check_sign_in()] == ["tenancy_oauth.W001"]


@override_settings(TENANCY_OAUTH_SIGN_IN="project", LOGIN_URL="https://sso.example/login")
def test_an_external_login_is_taken_on_trust() -> None:
    assert check_sign_in() == []
