"""JWT access tokens from an external identity provider (``tenancy.idp.external_jwt``).

A local issuer (``tests.tenancy.external_issuer``: a real HTTP server, keys generated here)
signs RFC 9068 tokens; ``/mcp`` is driven through Django's test client, so the token travels
the real path: ``TenancyMiddleware`` → the registered verifier → the call context.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import checks
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils import timezone

from mcp_tools.serving.views import protected_resource_metadata
from tenancy.checks import check_external_jwt
from tenancy.exceptions import SigningKeysUnavailableError
from tenancy.idp import external_jwt, jwks
from tenancy.middleware import TenancyMiddleware
from tests.factories import FarmFactory, MembershipFactory
from tests.mutations import mutation
from tests.tenancy.external_issuer import LocalIssuer, generate_key, local_issuer, unsigned_token

pytestmark = pytest.mark.django_db

HANDSHAKE = "2025-11-25"


@pytest.fixture(scope="module")
def running_issuer() -> Iterator[LocalIssuer]:
    with local_issuer() as issuer:
        yield issuer


@pytest.fixture
def issuer(running_issuer: LocalIssuer, settings: Any) -> Iterator[LocalIssuer]:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.TENANCY_EXTERNAL_JWT = {
        "ISSUER": running_issuer.url,
        "USER_LOOKUP": "email",
        "JWKS_MIN_REFETCH_SECONDS": 0,
    }
    jwks.forget()
    _warm()
    running_issuer.requests.clear()
    yield running_issuer
    jwks.forget()


def _warm() -> None:
    """The key set fetched as a first token fetches it: in the background, then settled."""
    config = external_jwt.settings()
    assert config is not None
    with contextlib.suppress(SigningKeysUnavailableError):
        jwks.key_for(config, None)
    jwks.settle()


@pytest.fixture
def member() -> Any:
    return MembershipFactory(tenant=FarmFactory(), roles=["Manager"])


def _claims_for(membership: Any) -> dict[str, Any]:
    return {"sub": membership.user.email, "tenant": membership.tenant.code}


def _whoami(token: str, path: str = "/mcp") -> tuple[int, dict[str, Any]]:
    jwks.settle()  # a refresh an earlier call started has landed
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "mcptest_whoami", "arguments": {}},
    }
    response = Client().post(
        path,
        json.dumps(body),
        content_type="application/json",
        headers={
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": HANDSHAKE,
        },
    )
    return response.status_code, json.loads(response.content)


def _b64(value: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def _refusal_code(token: str) -> str:
    status, reply = _whoami(token)
    assert status == 401, reply
    return str(reply["error"]["data"]["code"])


def test_a_token_of_the_issuer_acts_as_the_member_it_names(issuer, member):
    status, reply = _whoami(issuer.token(**_claims_for(member)))
    assert status == 200, reply
    whoami = reply["result"]["structuredContent"]
    assert whoami["tenant_id"] == member.tenant_id
    assert whoami["user_id"] == member.user_id
    assert whoami["role"] == "Manager"


def test_the_role_comes_from_the_membership_never_from_the_token(issuer, member):
    status, reply = _whoami(issuer.token(role="Owner", roles=["Admin"], **_claims_for(member)))
    assert status == 200
    assert reply["result"]["structuredContent"]["role"] == "Manager"


@mutation(
    "tenancy/idp/external_jwt.py",
    find="    if not isinstance(granted_list, list) or not set(map(str, granted_list)) & set(",
    replace="    if False and (",
)
@pytest.mark.parametrize(
    "audience",
    ["https://other.example/mcp", ["https://other.example/mcp", "api://payroll"], None],
    ids=["another-resource", "other-resources", "no-aud"],
)
def test_a_token_for_another_audience_is_refused(issuer, member, audience):
    """A token the issuer minted for another resource must not open this one (RFC 9068 §4,
    RFC 8707). Mutation: skip the audience comparison → the call runs → red."""
    token = issuer.token(aud=audience, **_claims_for(member))
    assert _refusal_code(token) == "Auth.InvalidAudience"


def test_a_configured_audience_replaces_the_resource_url(issuer, member, settings):
    settings.TENANCY_EXTERNAL_JWT = {**settings.TENANCY_EXTERNAL_JWT, "AUDIENCE": "api://cluck"}
    assert _whoami(issuer.token(aud="api://cluck", **_claims_for(member)))[0] == 200
    assert _refusal_code(issuer.token(**_claims_for(member))) == "Auth.InvalidAudience"


@mutation("tenancy/idp/jwks.py", find="        if key.kid == kid:", replace="        if True:")
def test_a_token_signed_with_an_unknown_key_is_refused(issuer, member):
    """A key the issuer never published, even with a kid it invents or one it uses, verifies
    nothing. Mutation: pick a key whatever the token's kid → it is tried, fails on the
    signature, and the refusal no longer says the key is unknown → red."""
    stranger = generate_key("stranger")
    assert _refusal_code(issuer.token(key=stranger, **_claims_for(member))) == (
        "Auth.UnknownSigningKey"
    )
    current_kid = issuer.keys[0].kid
    forged = issuer.token(key=stranger, header={"kid": current_kid}, **_claims_for(member))
    assert _refusal_code(forged) == "Auth.InvalidToken"


def test_a_rotated_key_is_fetched_on_first_sight(issuer, member):
    old = issuer.keys[0]
    assert _whoami(issuer.token(**_claims_for(member)))[0] == 200
    assert _whoami(issuer.token(**_claims_for(member)))[0] == 200
    assert issuer.requests["/jwks"] == 0  # cached between calls
    issuer.rotate()
    # The first token of the new key is refused while the set is fetched in the background
    # (no request waits on the issuer); the next one finds it.
    assert _refusal_code(issuer.token(**_claims_for(member))) == "Auth.UnknownSigningKey"
    assert _whoami(issuer.token(**_claims_for(member)))[0] == 200
    assert issuer.requests["/jwks"] == 1
    # The old key left the set: its tokens are refused once the set is refetched.
    assert _refusal_code(issuer.token(key=old, **_claims_for(member))) == ("Auth.UnknownSigningKey")


@mutation(
    "tenancy/idp/jwks.py",
    find="now - cached.attempted_at >= config.min_refetch_seconds",
    replace="True",
)
def test_unknown_kids_refetch_the_key_set_at_a_bounded_rate(issuer, member, settings):
    """Made-up kids must cost the issuer one request per interval, not one per token.
    Mutation: drop the interval → each made-up kid fetches the set → red."""
    settings.TENANCY_EXTERNAL_JWT = {
        **settings.TENANCY_EXTERNAL_JWT,
        "JWKS_MIN_REFETCH_SECONDS": 3600,
    }
    assert _whoami(issuer.token(**_claims_for(member)))[0] == 200
    for n in range(5):
        token = issuer.token(key=generate_key(f"made-up-{n}"), **_claims_for(member))
        assert _refusal_code(token) == "Auth.UnknownSigningKey"
    assert issuer.requests["/jwks"] == 0


@mutation(
    "tenancy/idp/jwks.py",
    find="    if keys is None:\n        raise",
    replace="    if False:\n        raise",
)
def test_the_key_set_is_found_through_discovery_and_never_awaited(issuer, member):
    """Before the first set arrives a token is refused at once with its own code, while one
    background fetch (discovery, then the set) runs; the next token is let in. Mutation: no
    refusal without a set → the token falls through to "unknown key" → red."""
    jwks.forget()
    token = issuer.token(**_claims_for(member))
    assert _refusal_code(token) == "Auth.SigningKeysUnavailable"
    assert _whoami(token)[0] == 200
    assert issuer.requests["/.well-known/openid-configuration"] == 1
    assert issuer.requests["/jwks"] == 1


def test_a_configured_jwks_uri_skips_discovery(issuer, member, settings):
    settings.TENANCY_EXTERNAL_JWT = {**settings.TENANCY_EXTERNAL_JWT, "JWKS_URI": issuer.jwks_uri}
    jwks.forget()
    _warm()
    assert _whoami(issuer.token(**_claims_for(member)))[0] == 200
    assert issuer.requests["/.well-known/openid-configuration"] == 0
    assert issuer.requests["/jwks"] == 1


@pytest.mark.parametrize(
    "claims",
    [
        {"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200},
        {"exp": None},
        {"nbf": int(time.time()) + 3600},
        {"iat": int(time.time()) + 3600},
        {"iss": "https://idp.example"},
        {"tenant": "no-such-farm"},
        {"sub": "stranger@example.test"},
    ],
    ids=[
        "expired",
        "no-exp",
        "not-yet-valid",
        "issued-in-future",
        "wrong-issuer",
        "no-tenant",
        "no-user",
    ],
)
def test_a_token_with_bad_claims_is_refused(issuer, member, claims):
    token = issuer.token(**{**_claims_for(member), **claims})
    assert _refusal_code(token) == "Auth.InvalidToken"


def test_a_member_of_another_tenant_is_not_let_in_by_naming_this_one(issuer, member):
    outsider: Any = MembershipFactory(tenant=FarmFactory())
    token = issuer.token(sub=outsider.user.email, tenant=member.tenant.code)
    assert _refusal_code(token) == "Auth.InvalidToken"


def test_an_unsigned_token_is_refused(issuer, member):
    assert _refusal_code(unsigned_token(issuer.claims(**_claims_for(member)))) == (
        "Auth.InvalidToken"
    )


def test_an_hmac_token_keyed_with_the_public_key_is_refused(issuer, member):
    """The classic confusion: HS256 with the published public key as the shared secret."""
    public_pem = issuer.keys[0].as_pem(private=False)
    header = {"alg": "HS256", "typ": "at+jwt", "kid": issuer.keys[0].kid}
    signing_input = f"{_b64(header)}.{_b64(issuer.claims(**_claims_for(member)))}"
    signature = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    token = f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"
    assert _refusal_code(token) == "Auth.InvalidToken"


@pytest.mark.parametrize("typ", [None, "JWT"], ids=["no-typ", "id-token-typ"])
def test_a_jwt_that_is_not_an_access_token_is_refused(issuer, member, typ):
    token = issuer.token(header={"typ": typ}, **_claims_for(member))
    assert _refusal_code(token) == "Auth.InvalidToken"


def test_disabling_the_member_refuses_the_next_call(issuer, member):
    token = issuer.token(**_claims_for(member))
    assert _whoami(token)[0] == 200
    member.disabled_at = timezone.now()
    member.save(update_fields=["disabled_at"])
    assert _refusal_code(token) == "Auth.AccountDisabled"


def test_the_issuer_is_never_claimed_on_the_projects_routes(issuer, member):
    token = issuer.token(**_claims_for(member))
    request = RequestFactory().get("/projects/", headers={"Authorization": f"Bearer {token}"})
    middleware = TenancyMiddleware(lambda r: HttpResponse())
    middleware.process_request(request)
    assert middleware.process_view(request, lambda r: HttpResponse(), (), {}) is None
    assert request.META["HTTP_AUTHORIZATION"] == f"Bearer {token}"
    assert not request.tenant.is_resolved  # type: ignore[attr-defined]
    assert issuer.requests["/jwks"] == 0


def test_without_an_issuer_a_jwt_on_mcp_is_refused(member, settings):
    settings.TENANCY_EXTERNAL_JWT = None
    with local_issuer() as other:
        token = other.token(**_claims_for(member))
    assert _refusal_code(token) == "Auth.InvalidToken"


def test_the_protected_resource_metadata_names_the_issuer(issuer):
    served = Client().get("/.well-known/oauth-protected-resource/mcp")
    assert served.status_code == 200
    assert issuer.url in served.json()["authorization_servers"]
    # Without tenancy.oauth, mcp_tools serves the document of the external issuer alone.
    request = RequestFactory().get("/.well-known/oauth-protected-resource/mcp")
    alone = json.loads(protected_resource_metadata(request).content)
    assert alone == {
        "resource": "http://testserver/mcp",
        "authorization_servers": [issuer.url],
        "bearer_methods_supported": ["header"],
    }


def test_without_an_issuer_mcp_tools_serves_no_metadata(settings):
    settings.TENANCY_EXTERNAL_JWT = None
    request = RequestFactory().get("/.well-known/oauth-protected-resource/mcp")
    assert protected_resource_metadata(request).status_code == 404


@pytest.mark.parametrize(
    ("config", "ids"),
    [
        ({"ISSUER": "https://idp.example", "ALGORITHMS": ["RS256", "HS256"]}, ["tenancy.E021"]),
        ({"ISSUER": "https://idp.example", "ALGORITHMS": ["none"]}, ["tenancy.E021"]),
        ({"ISSUER": "https://idp.example", "AUDIENCES": "x"}, ["tenancy.E020"]),
        ({"JWKS_URI": "https://idp.example/jwks"}, ["tenancy.E020"]),
        ({"ISSUER": "https://idp.example"}, []),
        ({"ISSUER": "http://idp.example"}, ["tenancy.E022"]),
        (
            {"ISSUER": "https://idp.example", "JWKS_URI": "http://idp.example/jwks"},
            ["tenancy.E022"],
        ),
    ],
)
@mutation(
    "tenancy/checks.py",
    find='not fetched_from.startswith("https://")',
    replace="False",
)
def test_the_configuration_is_checked(settings, config, ids):
    """Mutation (tenancy.E022): accept a plain-http key set outside DEBUG → red."""
    settings.DEBUG = False
    settings.TENANCY_EXTERNAL_JWT = config
    found = check_external_jwt()
    assert [message.id for message in found] == ids
    assert all(isinstance(message, checks.Error) for message in found)


def test_a_plain_http_key_set_is_allowed_with_debug(settings):
    settings.DEBUG = True
    settings.TENANCY_EXTERNAL_JWT = {"ISSUER": "http://127.0.0.1:8080/realms/dev"}
    assert check_external_jwt() == []


@mutation(
    "tenancy/idp/external_jwt.py",
    find="    if tenant is None or len(users) != 1:",
    replace="    if tenant is None or not users:",
)
def test_a_subject_matching_two_users_is_refused_never_the_first(issuer, member):
    """Guard: ``USER_LOOKUP`` on a field that is not unique (``email`` here) and two users
    holding the token's subject: refused ``Auth.InvalidToken``, never acted on as the first of
    them. Mutation: accept the first match (``.first()``, as before) → the call runs as the
    member → red."""
    twin = type(member.user).objects.create_user(
        username=f"twin-{member.user.pk}", email=member.user.email, password="pw"
    )
    assert twin.pk != member.user_id
    assert _refusal_code(issuer.token(**_claims_for(member))) == "Auth.InvalidToken"


@mutation(
    "mcp_tools/observability/audit.py",
    find="        return None, EXTERNAL_JWT\n",
    replace="        return None, SESSION\n",
)
@mutation("tenancy/middleware.py", find="            identity=credential.identity,\n", replace="")
@pytest.mark.postgres  # the call audit is written on PostgreSQL (off in the SQLite stage)
@pytest.mark.django_db(transaction=True)
def test_an_external_jwt_call_is_audited_as_one_with_its_issuer_and_subject(issuer, member):
    """Guard: the audit row of a call made with the identity provider's token says so:
    credential ``external_jwt``, the issuer and the subject, no token id (it was recorded as
    ``session``). Mutations: the audit ignores the identity → ``session`` → red; the middleware
    drops it from the actor → ``session``, no issuer → red."""
    from mcp_tools.models import CallAudit
    from mcp_tools.observability import audit

    status, reply = _whoami(issuer.token(**_claims_for(member)))
    assert status == 200, reply
    audit.flush()
    (row,) = CallAudit.objects.filter(actor_id=str(member.user_id))
    assert (row.credential, row.token_id) == (audit.EXTERNAL_JWT, None)
    assert (row.issuer, row.subject) == (issuer.url, member.user.email)
