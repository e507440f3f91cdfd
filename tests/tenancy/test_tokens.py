"""Bearer tokens: revocation and credential changes take effect on the very next request."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tenancy.models import AccessToken
from tenancy.services import membership_disable, membership_set_roles
from tenancy.tokens import digest, looks_like_token, lookup
from tests.factories import DEFAULT_PASSWORD, UserFactory
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db


def _assert_invalid_token(response, code: str | None = None) -> None:
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert response["Content-Type"] == "application/problem+json"
    if code is not None:
        assert response.json()["code"] == code


def test_tokens_are_prefixed_256_bit_secrets_and_only_a_digest_is_stored(member_client):
    client, membership = member_client()
    raw = client._credentials["HTTP_AUTHORIZATION"].split()[1]
    assert raw.startswith("ck_pat_") and looks_like_token(raw) and len(raw) == 50
    token = AccessToken.objects.get(membership=membership)
    assert token.digest == digest(raw) and raw not in {token.prefix, token.digest}


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


@mutation(
    "tenancy/tokens/lookup.py",
    find=(
        "            for convert in converters:\n"
        "                value = convert(value, col, connection)\n"
    ),
    replace="",
)
@mutation(
    "tenancy/tokens/lookup.py",
    find="""f"{join('u', user_model, user_fk, 'm')} \"""",
    replace="""f"{join('u', user_model, tenant_fk, 'm')} \"""",
)
@mutation(
    "tenancy/tokens/lookup.py",
    find="    plan.tenant_fk.set_cached_value(membership, tenant)\n",
    replace="",
)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled-sql", "orm-fallback"])
def test_the_token_read_returns_what_the_orm_returns(
    member_client, django_assert_num_queries, monkeypatch, compiled
):
    """The compiled token read builds the same four objects as ``select_related(...).get()``.

    Mutations: drop the DB converters in ``_Part.build`` → red (``roles`` comes back as JSON
    text); join the user on ``m.tenant_id`` → red; skip ``set_cached_value`` for the tenant →
    red (a second query). The ``orm-fallback`` case runs the path taken for models whose fields
    span tables.
    """
    UserFactory.create_batch(2)  # user, membership and tenant ids differ: a wrong join shows
    client, membership = member_client(roles=["Manager", "Sales"])
    raw = client._credentials["HTTP_AUTHORIZATION"].split()[1]
    if not compiled:
        monkeypatch.setattr(lookup, "_plans", {"default": None})
    expected = AccessToken.objects.select_related(
        "membership", "membership__user", "membership__tenant"
    ).get(digest=digest(raw))
    with django_assert_num_queries(1):
        token = lookup.fetch_token(digest(raw))
        assert token is not None
        pairs = [
            (token, expected),
            (token.membership, expected.membership),
            (token.membership.user, expected.membership.user),
            (token.membership.tenant, expected.membership.tenant),
        ]
    for mine, theirs in pairs:
        assert type(mine) is type(theirs) and not mine._state.adding
        assert _fields(mine) == _fields(theirs)
    assert token.membership.roles == ["Manager", "Sales"]
    assert lookup.fetch_token(digest(raw + "x")) is None


@mutation(
    "tenancy/tokens/__init__.py",
    find="if credential_epoch != membership.credential_epoch:",
    replace="if False:",
)
def test_a_role_change_invalidates_the_token_on_the_next_request(member_client):
    """Mutation: remove the credential-epoch comparison from ``check_token`` → red."""
    client, membership = member_client(roles=["Manager"])
    assert client.get("/api/v1/me/").status_code == 200
    membership_set_roles(membership=membership, roles=["ReadOnly"])
    _assert_invalid_token(client.get("/api/v1/me/"), "Auth.CredentialsSuperseded")


@mutation(
    "tenancy/signals.py",
    find='@receiver(post_save, sender=User, dispatch_uid="tenancy.password_change.bump")\n',
    replace="",
)
def test_a_password_change_invalidates_the_token_on_the_next_request(member_client):
    """Mutation: disconnect the ``post_save`` receiver in ``tenancy.signals`` → red."""
    client, membership = member_client()
    assert client.get("/api/v1/me/").status_code == 200
    user = membership.user
    user.set_password("a different password entirely")
    user.save()
    _assert_invalid_token(client.get("/api/v1/me/"), "Auth.CredentialsSuperseded")


@mutation(
    Edit(
        "tenancy/tokens/__init__.py",
        find="if membership.disabled_at is not None or not membership.get_user().is_active:",
        replace="if not membership.get_user().is_active:",
    ),
    Edit(
        "tenancy/services.py",
        find="            disabled_at=membership.disabled_at\n        )",
        replace=(
            "            disabled_at=membership.disabled_at, "
            'credential_epoch=F("credential_epoch")\n'
            "        )"
        ),
    ),
)
def test_suspending_the_membership_invalidates_the_token(member_client):
    """Mutation: drop the ``disabled_at`` check and the epoch bump in ``membership_disable``
    → red."""
    client, membership = member_client()
    membership_disable(membership=membership)
    _assert_invalid_token(client.get("/api/v1/me/"))


@mutation(
    "tenancy/tokens/__init__.py",
    find="if not conf.tenant_is_active(membership.get_tenant()):",
    replace="if False:",
)
def test_suspending_the_farm_invalidates_the_token(member_client):
    """Mutation: remove the tenant-active check from ``check_token`` → red."""
    client, membership = member_client()
    farm = membership.tenant
    farm.is_active = False
    farm.save()
    _assert_invalid_token(client.get("/api/v1/me/"), "Auth.TenantSuspended")


@mutation(
    "tenancy/tokens/__init__.py", find="return token.revoked_at is None and (", replace="return ("
)
def test_a_revoked_token_is_refused_on_the_next_request(member_client):
    """Mutation: ignore ``revoked_at`` in ``check_token`` → red."""
    client, membership = member_client()
    token = AccessToken.objects.get(membership=membership)
    assert (
        client.delete(f"/api/v1/me/tokens/{token.pk}/", HTTP_IDEMPOTENCY_KEY="revoke-1").status_code
        == 204
    )
    _assert_invalid_token(client.get("/api/v1/me/"))


def test_an_expired_token_is_refused(member_client):
    client, membership = member_client()
    AccessToken.objects.filter(membership=membership).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    _assert_invalid_token(client.get("/api/v1/me/"))


def test_a_malformed_or_non_bearer_authorization_is_refused(api_client):
    for header in ("Bearer", "Bearer ck_pat_short", "Basic dXNlcjpwYXNz", "Token abc"):
        api_client.credentials(HTTP_AUTHORIZATION=header)
        _assert_invalid_token(api_client.get("/api/v1/me/"))


def test_no_credentials_is_401_with_a_bearer_challenge(api_client):
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["code"] == "Auth.NotAuthenticated"


def test_token_lifecycle_create_list_revoke(member_client):
    client, membership = member_client()
    created = client.post(
        "/api/v1/me/tokens/",
        {"name": "laptop", "expiresInDays": 30},
        format="json",
        HTTP_IDEMPOTENCY_KEY="t-1",
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["token"].startswith("ck_pat_") and body["prefix"] == body["token"][:12]
    listed = client.get("/api/v1/me/tokens/").json()
    assert {"laptop"} <= {item["name"] for item in listed["items"]}
    assert all("token" not in item and "digest" not in item for item in listed["items"])
    fresh = client.__class__()
    fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {body['token']}")
    assert fresh.get("/api/v1/me/").status_code == 200
    assert (
        client.delete(
            f"/api/v1/me/tokens/{body['id']}/", HTTP_IDEMPOTENCY_KEY="revoke-2"
        ).status_code
        == 204
    )
    _assert_invalid_token(fresh.get("/api/v1/me/"))


def test_a_user_cannot_revoke_someone_elses_token(member_client):
    client, membership = member_client()
    other_client, other = member_client(farm=membership.tenant)
    other_token = AccessToken.objects.get(membership=other)
    response = client.delete(
        f"/api/v1/me/tokens/{other_token.pk}/", HTTP_IDEMPOTENCY_KEY="revoke-3"
    )
    assert response.status_code == 404
    assert other_client.get("/api/v1/me/").status_code == 200


def test_login_returns_a_short_lived_token_checked_like_any_other(member_client, api_client):
    _, membership = member_client()
    response = api_client.post(
        "/api/v1/auth/login/",
        {
            "farmCode": membership.tenant.code.upper(),
            "email": membership.user.email,
            "password": DEFAULT_PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    raw = response.json()["accessToken"]
    assert raw.startswith("ck_ses_")
    api_client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api_client.get("/api/v1/me/").json()["farmCode"] == membership.tenant.code
    membership_set_roles(membership=membership, roles=["Sales"])
    _assert_invalid_token(api_client.get("/api/v1/me/"))


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"farmCode": "no-such-farm"}, "Auth.InvalidCredentials"),
        ({"password": "wrong password"}, "Auth.InvalidCredentials"),
        ({"email": "nobody@example.test"}, "Auth.InvalidCredentials"),
    ],
)
def test_login_failures_are_401_with_stable_codes(member_client, api_client, change, code):
    _, membership = member_client()
    body = {
        "farmCode": membership.tenant.code,
        "email": membership.user.email,
        "password": DEFAULT_PASSWORD,
        **change,
    }
    response = api_client.post("/api/v1/auth/login/", body, format="json")
    assert response.status_code == 401 and response.json()["code"] == code


@mutation(
    "tenancy/api.py",
    find='@ignores_ambient_credentials\n@never_replayed("returns a live bearer token")',
    replace='@never_replayed("returns a live bearer token")',
)
def test_login_ignores_an_ambient_bearer_of_another_farm(member_client):
    """A farm-A token sent to farm B's login must not resolve farm A — it is not even read.

    Mutation: remove ``@ignores_ambient_credentials`` from ``LoginApi`` → red (the ambient,
    now-revoked bearer is checked and refused with 401 before login runs).
    """
    client_a, membership_a = member_client()
    _, membership_b = member_client()
    AccessToken.objects.filter(membership=membership_a).update(revoked_at=timezone.now())
    response = client_a.post(
        "/api/v1/auth/login/",
        {
            "farmCode": membership_b.tenant.code,
            "email": membership_b.user.email,
            "password": DEFAULT_PASSWORD,
        },
        format="json",
    )
    assert response.status_code == 200, response.content
    fresh = client_a.__class__()
    fresh.credentials(HTTP_AUTHORIZATION=f"Bearer {response.json()['accessToken']}")
    assert fresh.get("/api/v1/me/").json()["farmCode"] == membership_b.tenant.code


def test_logout_revokes_the_presented_token_even_when_superseded(member_client):
    client, membership = member_client()
    membership_set_roles(membership=membership, roles=["Sales"])
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert AccessToken.objects.get(membership=membership).revoked_at is not None
