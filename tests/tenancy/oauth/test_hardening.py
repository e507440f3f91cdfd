"""Guards of the authorization server against anonymous abuse (issue 23, round two): grants the
server does not offer, rate limits, registration bounds, NUL input, error redirects, prompt=none.
Each docstring names the mutation that was applied to the code and seen to turn the test red.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client
from oauth2_provider.models import get_application_model

from tenancy.oauth.models import ClientAuthorization
from tests.factories import DEFAULT_PASSWORD, FarmFactory, MembershipFactory
from tests.mutations import mutation
from tests.tenancy.oauth.flow import (
    COUNTING_HASHER,
    CountingHasher,
    authorize_query,
    consent,
    grant_tokens,
    pkce,
    register,
    token_post,
)

pytestmark = pytest.mark.django_db

DEVICE_CODE = "urn:ietf:params:oauth:grant-type:device_code"


def _register(body: dict[str, Any], client: Client | None = None) -> Any:
    return (client or Client()).post(
        "/oauth/register/", json.dumps(body), content_type="application/json"
    )


def _document(**extra: Any) -> dict[str, Any]:
    return {
        "client_name": "Test Client",
        "redirect_uris": ["https://client.example/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **extra,
    }


def _basic(client_id: str, secret: str) -> str:
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


# --- grants the server does not offer -------------------------------------------------------


@mutation(
    "tenancy/oauth/defaults.py",
    find='        "OAUTH2_SERVER_CLASS": "tenancy.oauth.server.TenancyOAuth2Server",\n',
    replace="",
)
@mutation(
    "tenancy/oauth/endpoints.py",
    find="        response: HttpResponse = self.authorization_flow_token_response(request)\n",
    replace="        response: HttpResponse = super().post(request, *args, **kwargs)\n",
)
def test_grants_the_server_does_not_offer_answer_alike_and_hash_nothing(settings):
    """Mutation: drop ``OAUTH2_SERVER_CLASS`` from ``tenancy.oauth.defaults`` (oauthlib's
    all-grants server) → red (a wrong password is ``invalid_grant``, the right one
    ``unauthorized_client``, each after a password hash). Mutation: let the toolkit's
    ``TokenView.post`` route the device-code grant → red (it answers before the server, a
    500 without ``device_code``)."""
    settings.PASSWORD_HASHERS = [COUNTING_HASHER]
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    email = membership.user.email
    public_id = register(Client())
    secret_response = _register(_document(token_endpoint_auth_method="client_secret_basic"))
    confidential = secret_response.json()
    CountingHasher.calls = 0
    answers = []
    for password in (DEFAULT_PASSWORD, "WRONG"):
        for client_id in (public_id, confidential["client_id"]):
            data = {
                "grant_type": "password",
                "client_id": client_id,
                "username": email,
                "password": password,
            }
            answers.append(token_post(Client(), data))
    for secret in (confidential["client_secret"], "WRONG"):
        header = _basic(confidential["client_id"], secret)
        answers.append(
            token_post(Client(), {"grant_type": "client_credentials"}, HTTP_AUTHORIZATION=header)
        )
    assert {(r.status_code, r.content) for r in answers} == {
        (400, b'{"error": "unsupported_grant_type"}')
    }
    assert CountingHasher.calls == 0
    for data in (
        {"grant_type": DEVICE_CODE, "client_id": public_id},
        {"grant_type": DEVICE_CODE, "client_id": public_id, "device_code": "x"},
    ):
        response = token_post(Client(), data)
        assert (response.status_code, response.json()) == (
            400,
            {"error": "unsupported_grant_type"},
        )


def test_the_authorization_endpoint_offers_no_implicit_grant():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, challenge).replace("response_type=code", "response_type=token")
    response = browser.get(url)
    assert response.status_code == 400
    assert response.context["error"].error == "unsupported_response_type"


# --- registration: no secret for public clients, bounded ------------------------------------


@mutation(
    "tenancy/oauth/endpoints.py",
    find='            application.client_secret = ""\n',
    replace="",
)
def test_a_public_client_gets_no_secret_and_its_registration_hashes_nothing(settings):
    """Mutation: in ``RegistrationView.post`` keep the toolkit's generated secret for a public
    client → red (one secret hashed per anonymous registration)."""
    settings.PASSWORD_HASHERS = [COUNTING_HASHER]
    CountingHasher.calls = 0
    client_id = register(Client())
    assert CountingHasher.calls == 0
    application = get_application_model().objects.get(client_id=client_id)
    assert application.client_secret == "" and application.client_type == "public"
    # A confidential client still gets its secret, hashed at rest.
    response = _register(_document(token_endpoint_auth_method="client_secret_basic"))
    assert response.status_code == 201 and response.json()["client_secret"]
    assert CountingHasher.calls == 1
    # A secret presented for a public client is compared with nothing, not hashed.
    answer = token_post(
        Client(),
        {"grant_type": "refresh_token", "refresh_token": "x", "client_id": client_id},
        HTTP_AUTHORIZATION=_basic(client_id, "guess"),
    )
    assert answer.status_code in (400, 401) and CountingHasher.calls == 1


@mutation(
    "tenancy/oauth/registration.py",
    find="    if len(uris) > max_uris:",
    replace="    if False:",
)
@mutation(
    "tenancy/oauth/registration.py",
    find="    if declared > limit or len(request.body) > limit:",
    replace="    if False:",
)
@mutation(
    "tenancy/oauth/registration.py",
    find="    if isinstance(grant_types, list) and not set(grant_types) <= set(GRANT_TYPES):",
    replace="    if False:",
)
@mutation(
    "tenancy/oauth/registration.py",
    find="    if private_use_scheme(scheme):",
    replace="    if scheme:",
)
@pytest.mark.parametrize(
    ("extra", "status", "error"),
    [
        ({"redirect_uris": [f"https://client.example/{n}" for n in range(11)]}, 400, "redirect"),
        ({"redirect_uris": ["https://client.example/" + "a" * 2100]}, 400, "metadata"),
        ({"client_name": "n" * 101}, 400, "metadata"),
        ({"contacts": [f"a{n}@client.example" for n in range(11)]}, 400, "metadata"),
        (
            {"redirect_uris": [f"https://client.example/{n}{'l' * 2000}" for n in range(9)]},
            413,
            "metadata",
        ),
        ({"grant_types": ["password"]}, 400, "metadata"),
        ({"grant_types": ["client_credentials"]}, 400, "metadata"),
        ({"grant_types": ["implicit"]}, 400, "metadata"),
        ({"grant_types": [DEVICE_CODE]}, 400, "metadata"),
        ({"response_types": ["token"]}, 400, "metadata"),
        ({"redirect_uris": ["javascript:alert(1)//"]}, 400, "redirect"),
        ({"redirect_uris": ["data:text/html,hi"]}, 400, "redirect"),
        ({"redirect_uris": ["file:///etc/passwd"]}, 400, "redirect"),
        ({"redirect_uris": ["http://client.example/cb"]}, 400, "redirect"),
        ({"redirect_uris": ["myapp:/cb"]}, 400, "redirect"),
        ({"redirect_uris": ["com.example.app://evil.example/cb"]}, 400, "redirect"),
        ({"redirect_uris": ["com.example.app:/cb"]}, 201, None),
        ({"redirect_uris": [f"https://client.example/{n}" for n in range(10)]}, 201, None),
    ],
)
def test_registration_is_bounded_and_offers_only_what_the_server_honours(extra, status, error):
    """Mutations in ``tenancy.oauth.registration``: drop the redirect-URI count → red; drop the
    body-size bound → red; drop the grant-type refusal → red; take any scheme as private-use
    → red (``myapp:`` and a host after ``com.example.app:`` registered)."""
    response = _register(_document(**extra))
    assert response.status_code == status, response.content
    if error is not None:
        code = response.json()["error"]
        assert (
            code
            == {"redirect": "invalid_redirect_uri", "metadata": "invalid_client_metadata"}[error]
        )
    assert get_application_model().objects.exists() == (status == 201)


@mutation(
    "tenancy/oauth/pages.py",
    find="        return OAuth2ResponseRedirect(redirect_to, allowed_schemes(application))\n",
    replace="        return super().redirect(redirect_to, application)\n",
)
def test_a_native_app_with_a_private_use_scheme_gets_its_code():
    """Mutation: ``ConsentView.redirect`` with the toolkit's schemes only → red (the code
    cannot be sent to ``com.example.app:/cb``)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    native = "com.example.app:/oauth/cb"
    client_id = register(Client(), redirect_uris=[native])
    _, challenge = pkce()
    query = consent(
        Client(), membership.user, membership, client_id, challenge, redirect_uri=native
    )
    assert query["code"] and query["state"] == ["st4te"]


# --- NUL and lone surrogates ---------------------------------------------------------------


def _form(path: str, data: dict[str, str], **extra: Any) -> Any:
    return Client().post(
        path, urlencode(data), content_type="application/x-www-form-urlencoded", **extra
    )


@mutation(
    "tenancy/oauth/inputs.py",
    find="    return _UNSAFE.search(text) is not None",
    replace="    return False",
)
def test_nul_and_lone_surrogates_are_a_4xx_in_each_endpoints_format(settings):
    """Mutation: ``tenancy.oauth.inputs.unsafe_text`` finds nothing → red (psycopg's
    ``DataError``: a 500)."""
    settings.PASSWORD_HASHERS = [COUNTING_HASHER]
    client_id = register(Client())
    user = MembershipFactory.create(tenant=FarmFactory.create()).user
    CountingHasher.calls = 0
    oauth_json = [
        _form("/oauth/token/", {"grant_type": "authorization_code", "client_id": "a\x00b"}),
        _form(
            "/oauth/token/",
            {
                "grant_type": "authorization_code",
                "client_id": client_id,
                "code": "c\x00",
                "code_verifier": "v" * 43,
            },
        ),
        _form(
            "/oauth/token/",
            {"grant_type": "password", "client_id": client_id, "username": "\x00", "password": "p"},
        ),
        _form(
            "/oauth/token/",
            {"grant_type": "refresh_token", "refresh_token": "r"},
            HTTP_AUTHORIZATION=_basic("a\x00b", "s"),
        ),
        _form("/oauth/revoke/", {"token": "t\x00", "client_id": client_id}),
        _form("/oauth/revoke/", {"token": "t", "client_id": "\x00"}),
        _register(_document(client_name="evil\x00")),
        _register(_document(client_name="evil\ud800")),
        _register(_document(redirect_uris=["https://client.example/\udfff"])),
        _register(_document(**{"software_id\x00": "x"})),
    ]
    for response in oauth_json:
        assert response.status_code == 400, response.content
        assert response.json()["error"] == "invalid_request"
    assert not get_application_model().objects.exclude(client_id=client_id).exists()
    _, challenge = pkce()
    for signed_in in (False, True):
        browser = Client()
        if signed_in:
            browser.force_login(user)
        page = browser.get(authorize_query("a\x00b", challenge))
        assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
        page = browser.get(authorize_query(client_id, challenge, state="s\x00"))
        assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
    sign_in = Client().post("/oauth/sign-in/", {"username": "a\x00@x.example", "password": "p"})
    assert sign_in.status_code == 400 and sign_in["Content-Type"].startswith("text/html")
    assert CountingHasher.calls == 0


# --- rate limits: 429 with Retry-After in the endpoint's format -----------------------------


def _retry_after(response: Any) -> int:
    return int(response["Retry-After"])


@mutation(
    "tenancy/oauth/limits.py",
    find=(
        '    Limit("tenancy.oauth.token.client", lambda: conf.get("TOKEN_CLIENT_RATE"), '
        "client_rate_key),\n"
    ),
    replace="",
)
@mutation(
    "tenancy/oauth/endpoints.py",
    find="        refused = _refusal(request, limits.TOKEN)\n",
    replace="        refused = _refusal(request, ())\n",
)
def test_the_token_endpoint_is_limited_per_address_and_per_client(settings):
    """Mutations: drop the per-client limit from ``tenancy.oauth.limits.TOKEN`` → red (a client
    rotating addresses is never refused); skip the count in ``TokenView.post`` → red."""
    # Per hour, so a run never straddles two counting windows.
    settings.TENANCY_OAUTH_TOKEN_RATE = "4/h"
    settings.TENANCY_OAUTH_TOKEN_CLIENT_RATE = "2/h"
    client_id = register(Client())
    data = {"grant_type": "refresh_token", "refresh_token": "ck_ort_x", "client_id": client_id}
    rotating = [
        token_post(Client(REMOTE_ADDR=f"192.0.2.{n}"), data) for n in range(1, 4)
    ]  # one client, three addresses
    assert [r.status_code for r in rotating] == [400, 400, 429]
    one_address = Client(REMOTE_ADDR="198.51.100.7")
    answers = [
        token_post(one_address, {**data, "client_id": f"other-{n}"}) for n in range(5)
    ]  # one address, five clients
    assert [r.status_code for r in answers] == [401, 401, 401, 401, 429]
    for refused in (rotating[-1], answers[-1]):
        assert refused.json()["error"] == "temporarily_unavailable"
        assert 1 <= _retry_after(refused) <= 3600
        assert refused["Cache-Control"] == "no-store"


@mutation(
    "tenancy/oauth/limits.py",
    find="        status=429,\n",
    replace="        status=403,\n",
)
@mutation(
    "tenancy/oauth/pages.py",
    find="status=429, retry=retry)",
    replace="status=403, retry=retry)",
)
def test_registration_and_sign_in_refusals_are_429_with_retry_after(settings):
    """Mutations: ``tenancy.oauth.limits.too_many`` answers 403 → red; ``SignInView.post``
    answers 403 (django-ratelimit's ``block=True`` status) → red."""
    settings.TENANCY_OAUTH_REGISTRATION_RATE = "2/h"
    settings.TENANCY_LOGIN_RATE = "2/h"
    answers = [_register(_document()) for _ in range(3)]
    assert [r.status_code for r in answers] == [201, 201, 429]
    assert answers[-1].json()["error"] == "temporarily_unavailable"
    assert 1 <= _retry_after(answers[-1]) <= 3600
    browser = Client()
    pages = [
        browser.post("/oauth/sign-in/", {"username": "a@x.example", "password": "p"})
        for _ in range(3)
    ]
    assert [p.status_code for p in pages] == [200, 200, 429]
    assert pages[-1]["Content-Type"].startswith("text/html")
    assert 1 <= _retry_after(pages[-1]) <= 3600


# --- errors: shown to strangers, redirected to clients the user authorized ------------------


@mutation(
    "tenancy/oauth/pages.py",
    find="            if not self._authorized_by_user(client_id):",
    replace="            if False:",
)
@mutation(
    "tenancy/oauth/pages.py",
    find='            **{user_lookup("membership"): user},\n        ).exists()',
    replace="        ).exists()",
)
def test_an_error_is_redirected_only_to_a_client_the_user_authorized():
    """Mutations: in ``ConsentView.error_response`` redirect every error → red (the open
    redirector: ``scope=nonexistent`` sends the browser to any registered site); count any
    user's authorization in ``_authorized_by_user`` → red."""
    evil = "https://evil.example/landing"
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client(), redirect_uris=[evil])
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, challenge, redirect_uri=evil, scope="nonexistent")
    page = browser.get(url)
    assert page.status_code == 400 and not page.has_header("Location")
    assert page.context["error"].error == "invalid_scope"
    # Someone else authorizing the client changes nothing for this user.
    other = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    consent(Client(), other.user, other, client_id, challenge, redirect_uri=evil)
    assert browser.get(url).status_code == 400
    # Once this user authorized it, the standard error redirect (RFC 6749 §4.1.2.1).
    consent(Client(), membership.user, membership, client_id, challenge, redirect_uri=evil)
    response = browser.get(url)
    assert response.status_code == 302 and response["Location"].startswith(evil + "?")
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == ["invalid_scope"]


@mutation(
    "tenancy/oauth/pages.py",
    find='        if "none" in request.GET.get("prompt", "").split():\n'
    '            return self._prompt_none("consent_required")\n',
    replace="",
)
def test_prompt_none_never_shows_the_page_nor_issues_a_code():
    """Mutation: drop the ``prompt=none`` branch of ``ConsentView.get`` → red (the consent
    page is shown)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    client_id = tokens["client_id"]
    stranger = register(Client())
    _, challenge = pkce()
    signed_out = Client().get(authorize_query(client_id, challenge) + "&prompt=none")
    assert signed_out.status_code == 400 and signed_out.context["error"].error == "login_required"
    browser = Client()
    browser.force_login(membership.user)
    page = browser.get(authorize_query(stranger, challenge) + "&prompt=none")
    assert page.status_code == 400 and page.context["error"].error == "consent_required"
    response = browser.get(authorize_query(client_id, challenge) + "&prompt=none")
    assert response.status_code == 302
    query = parse_qs(urlsplit(response["Location"]).query)
    assert query["error"] == ["consent_required"] and query["state"] == ["st4te"]
    assert "code" not in query
    assert ClientAuthorization.objects.count() == 1


@mutation(
    "tenancy/oauth/pages.py",
    find='@method_decorator(never_cache, name="dispatch")\nclass ConsentView(',
    replace="class ConsentView(",
)
def test_the_consent_page_is_never_stored():
    """Mutation: drop ``never_cache`` from ``ConsentView`` → red."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    page = browser.get(authorize_query(client_id, challenge))
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]
