"""Guards of the OAuth credential. Each docstring names the mutation that was applied to the code
and seen to turn the test red.

Tools run in worker threads on their own database connections, so tests that call tools commit
their rows (``transaction=True``).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, get_application_model

from cluck.models import Flock, WorkerAssignment
from tenancy.models import Membership
from tenancy.oauth.models import AccessTokenBinding, ClientAuthorization
from tenancy.services import membership_disable, membership_set_roles
from tests.factories import (
    FarmFactory,
    FlockFactory,
    MembershipFactory,
    UserFactory,
    write_headers,
)
from tests.mutations import mutation
from tests.tenancy.oauth.flow import (
    REDIRECT_URI,
    RESOURCE,
    authorize_query,
    consent,
    exchange,
    grant_tokens,
    mcp,
    pkce,
    refresh,
    register,
)
from tests.tool_errors import tool_error

pytestmark = pytest.mark.django_db


def _auth_code(response: Any) -> str:
    """tenancy's stable code of a 401: problem JSON (REST) or JSON-RPC ``error.data`` (/mcp)."""
    body = response.json()
    return str(body["code"] if "code" in body else body["error"]["data"]["code"])


def _call(token: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
    return mcp(Client(), token, "tools/call", {"name": name, "arguments": arguments or {}})


def _result(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    return dict(response.json()["result"])


def _flock_names(token: str) -> set[str]:
    result = _result(_call(token, "cluck_list_flocks"))
    assert result["isError"] is False, result
    return {flock["name"] for flock in result["structuredContent"]["flocks"]}


def _record_args(flock_id: int, key: str) -> dict[str, Any]:
    return {
        "idempotencyKey": key,
        "flock": flock_id,
        "date": dt.date(2026, 2, 1).isoformat(),
        "totalEggs": 100,
        "crackedEggs": 1,
        "dirtyEggs": 1,
        "mortalityCount": 0,
    }


# --- audience ------------------------------------------------------------------------------


@mutation(
    "tenancy/oauth/bearer.py",
    find=(
        "    if request.path != conf.resource_path() or conf.resource_url(request) not in (\n"
        "        token.resource or []\n"
        "    ):"
    ),
    replace="    if request.path != conf.resource_path():",
)
def test_a_token_issued_for_another_resource_is_refused_as_invalid_token():
    """Mutation: in ``tenancy.oauth.bearer.verify`` drop the check that the canonical
    resource is among the token's resources (keep only the path check) → red."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    assert mcp(Client(), tokens["access_token"], "ping").status_code == 200
    AccessToken.objects.filter(tenancy_binding__isnull=False).update(
        resource=["https://elsewhere.example/mcp"]
    )
    response = mcp(Client(), tokens["access_token"], "ping")
    assert response.status_code == 401
    assert _auth_code(response) == "Auth.InvalidAudience"
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')


@mutation(
    "tenancy/oauth/bearer.py",
    find="if request.path != conf.resource_path() or conf.resource_url(request) not in (",
    replace="if conf.resource_url(request) not in (",
)
def test_an_mcp_token_is_not_accepted_by_the_rest_api():
    """Mutation: in ``tenancy.oauth.bearer.verify`` drop the request-path check → red."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    token = grant_tokens(membership)["access_token"]
    response = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert _auth_code(response) == "Auth.InvalidAudience"


@mutation(
    "tenancy/oauth/pages.py",
    find=(
        '        for resource in request.GET.getlist("resource"):\n'
        '            if resource.rstrip("/") != canonical:\n'
        "                raise _invalid_target(resource, credentials)\n"
        "        return scopes, credentials"
    ),
    replace="        return scopes, credentials",
)
def test_an_authorization_request_for_another_resource_is_refused():
    """Mutation: in ``ConsentView.validate_authorization_request`` skip the resource loop →
    red (the consent page renders instead of the invalid_target error). The client was never
    authorized by this user, so the error is shown on a page, not redirected (RFC 9700
    §4.11.2; ``test_hardening``)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, challenge, resource="https://elsewhere.example/mcp")
    response = browser.get(url)
    assert response.status_code == 400
    assert response.context["error"].error == "invalid_target"


# --- PKCE and codes ------------------------------------------------------------------------


@mutation(
    "tenancy/oauth/defaults.py",
    find='"COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,',
    replace='"COMPLIANT_BCP_RFC9700_PKCE_METHOD": False,',
)
def test_plain_pkce_is_refused():
    """Mutation: ``COMPLIANT_BCP_RFC9700_PKCE_METHOD: False`` in
    ``tenancy.oauth.defaults`` → red (a code is issued for a plain challenge)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, "p" * 43, method="plain")
    page = browser.get(url)
    if page.status_code == 200:  # refused when the code would be created
        form = {k: v for k, v in page.context["form"].initial.items() if v is not None}
        form.update({"allow": "Allow", "membership": membership.pk})
        page = browser.post(url, form)
        assert page.status_code == 302
        query = parse_qs(urlsplit(page["Location"]).query)
        assert "code" not in query and query["error"] == ["invalid_request"]
    else:  # refused up front: shown, not redirected, to a client never authorized
        assert page.status_code == 400
        assert page.context["error"].error == "invalid_request"
    assert not ClientAuthorization.objects.exists()


@mutation(
    "tenancy/oauth/validators.py",
    find="                authorization_revoke(authorization=authorization)\n",
    replace="",
)
def test_a_code_exchanged_twice_is_refused_and_its_tokens_revoked():
    """Mutation: in ``TenancyOAuth2Validator.validate_code`` remove the
    ``authorization_revoke`` of a replayed code → red (the first tokens live on)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client = Client()
    client_id = register(client)
    verifier, challenge = pkce()
    code = consent(Client(), membership.user, membership, client_id, challenge)["code"][0]
    first = exchange(client, client_id, code, verifier)
    assert first.status_code == 200
    tokens = first.json()
    assert mcp(Client(), tokens["access_token"], "ping").status_code == 200
    replay = exchange(client, client_id, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    assert mcp(Client(), tokens["access_token"], "ping").status_code == 401
    assert refresh(Client(), client_id, tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_a_wrong_verifier_gets_no_token():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client = Client()
    client_id = register(client)
    _, challenge = pkce()
    code = consent(Client(), membership.user, membership, client_id, challenge)["code"][0]
    other_verifier, _ = pkce()
    response = exchange(client, client_id, code, other_verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


def test_an_unknown_client_at_the_token_endpoint_is_401_invalid_client():
    """Claude re-registers on this answer (a DCR client the server forgot)."""
    response = refresh(Client(), "no-such-client", "ck_ort_" + "x" * 43)
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


# --- tenant, actor, row scope --------------------------------------------------------------


@mutation(
    "tenancy/oauth/validators.py",
    find="with_user_and_tenant(memberships()).filter(pk=membership_id).first()",
    replace=(
        "with_user_and_tenant(memberships())"
        '.filter(user_id=getattr(request.user, "pk", None)).order_by("pk").first()'
    ),
)
@pytest.mark.django_db(transaction=True)
def test_a_token_for_farm_a_never_reads_farm_b():
    """Mutation: in ``TenancyOAuth2Validator._create_authorization_code`` bind the grant to
    the user's first membership instead of the one chosen on the consent page → red."""
    farm_a, farm_b = FarmFactory.create(name="Alpha Farm"), FarmFactory.create(name="Bravo Farm")
    user = UserFactory.create()
    MembershipFactory.create(user=user, tenant=farm_a, roles=["Admin"])
    in_b = MembershipFactory.create(user=user, tenant=farm_b, roles=["ReadOnly"])
    FlockFactory.create(farm=farm_a, name="Alpha flock")
    FlockFactory.create(farm=farm_b, name="Bravo flock")
    token = grant_tokens(in_b)["access_token"]
    assert _flock_names(token) == {"Bravo flock"}
    me = _result(_call(token, "cluck_list_flocks"))
    assert "Alpha flock" not in json.dumps(me)
    # ReadOnly in B: its write tools are hidden, whatever the token's scopes.
    listed = mcp(Client(), token, "tools/list").json()["result"]["tools"]
    assert "cluck_record_daily_entry" not in {tool["name"] for tool in listed}


@mutation(
    "tenancy/middleware.py",
    find="    resolve_row_scope(tenant, actor, scope)\n",
    replace=(
        "    if token_id is None:\n"
        "        scope.resolve(unrestricted=True)\n"
        "    else:\n"
        "        resolve_row_scope(tenant, actor, scope)\n"
    ),
)
@pytest.mark.django_db(transaction=True)
def test_the_workers_flock_scope_holds_through_oauth():
    """Mutation: in ``resolve_member`` (what ``TenancyMiddleware.process_view`` calls) resolve
    the row scope unrestricted for credentials without a ``token_id`` (OAuth) → red."""
    farm = FarmFactory.create()
    assigned = FlockFactory.create(farm=farm, name="Assigned flock")
    other = FlockFactory.create(farm=farm, name="Other flock")
    worker = MembershipFactory.create(tenant=farm, roles=[])
    WorkerAssignment.all_tenants.create(farm=farm, membership=worker, flock=assigned)
    token = grant_tokens(worker)["access_token"]
    assert _flock_names(token) == {"Assigned flock"}
    error = tool_error(
        _result(_call(token, "cluck_record_daily_entry", _record_args(other.pk, "w")))
    )
    assert error["code"] == "FlockScope.NotAssigned"
    assert Flock.all_tenants.filter(pk=other.pk).exists()


# --- scopes ∩ role -------------------------------------------------------------------------


@mutation(
    "mcp_tools/methods/tools.py",
    find=(
        "        refused = scopes.refusal(ctx, read_only=spec.read_only, "
        'what=f"the tool {spec.name}")'
    ),
    replace="        refused = None",
)
def test_a_read_scoped_token_steps_up_for_a_write_tool_its_role_allows():
    """Mutation: in ``mcp_tools.methods.tools.call_tool`` skip ``scopes.refusal`` → red (the
    write runs, or fails validation, with HTTP 200)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Manager"])
    token = grant_tokens(membership, scope="mcp:read")["access_token"]
    listed = {tool["name"] for tool in mcp(Client(), token, "tools/list").json()["result"]["tools"]}
    assert "cluck_record_daily_entry" in listed  # discovery follows the role
    response = _call(token, "cluck_record_daily_entry", _record_args(1, "s"))
    assert response.status_code == 403
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope"')
    assert 'scope="mcp:read mcp:write"' in challenge
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"' in (
        challenge
    )
    assert response.json()["error"]["data"] == {"requiredScopes": ["mcp:read", "mcp:write"]}
    assert _result(_call(token, "cluck_list_flocks"))["isError"] is False


@mutation(
    "mcp_tools/methods/features.py",
    find="    refused = scopes.refusal(req.ctx, read_only=True, what=str(method))",
    replace="    refused = None",
)
@mutation(
    "mcp_tools/methods/tasks.py",
    find="    scoped = scopes.refusal(ctx, read_only=True, what=str(method))",
    replace="    scoped = None",
)
def test_reads_beyond_tools_need_the_read_scope_and_listings_follow_the_role():
    """Mutations: in ``mcp_tools.methods.features.handle`` skip ``scopes.refusal`` → red (a token
    without ``mcp:read`` reads a resource, gets a prompt, completes); in
    ``mcp_tools.methods.tasks.handle`` skip it → red (``tasks/get`` answers -32602 instead of
    403)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Manager"])
    token = grant_tokens(membership, scope="mcp:write")["access_token"]
    prompt = {"type": "ref/prompt", "name": "cluck_summarise_day"}
    for method, params in (
        ("resources/read", {"uri": "farm://grades"}),
        ("prompts/get", {"name": "cluck_summarise_day"}),
        ("completion/complete", {"ref": prompt, "argument": {"name": "flock", "value": ""}}),
        ("tasks/get", {"taskId": "no-such-task"}),
    ):
        response = mcp(Client(), token, method, params)
        assert response.status_code == 403, (method, response.content)
        assert response["WWW-Authenticate"].startswith('Bearer error="insufficient_scope"')
        assert 'scope="mcp:read"' in response["WWW-Authenticate"], method
        assert response.json()["error"]["data"] == {"requiredScopes": ["mcp:read"]}, method
    for method in ("resources/list", "resources/templates/list", "prompts/list"):
        assert mcp(Client(), token, method).status_code == 200, method


def test_a_write_scope_does_not_lift_a_read_only_role():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["ReadOnly"])
    token = grant_tokens(membership)["access_token"]
    response = _call(token, "cluck_record_daily_entry", _record_args(1, "r"))
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32602  # hidden, exactly like an unknown tool


# --- credential epoch ----------------------------------------------------------------------


def _assert_dead(tokens: dict[str, Any], code: str) -> None:
    response = mcp(Client(), tokens["access_token"], "ping")
    assert response.status_code == 401
    assert _auth_code(response) == code
    renewed = refresh(Client(), tokens["client_id"], tokens["refresh_token"])
    assert renewed.status_code == 400 and renewed.json()["error"] == "invalid_grant"


@mutation(
    "tenancy/oauth/bearer.py",
    find="    ensure_live(membership, credential_epoch=authorization.credential_epoch)\n",
    replace="",
)
@mutation(
    "tenancy/oauth/validators.py",
    find="        if binding is None or not _live(binding.authorization):",
    replace="        if binding is None:",
)
def test_a_role_change_ends_the_oauth_tokens_and_their_refresh():
    """Mutations: in ``tenancy.oauth.bearer.verify`` skip ``ensure_live`` → red; in
    ``TenancyOAuth2Validator.validate_refresh_token`` skip ``_live`` → red."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Manager"])
    tokens = grant_tokens(membership)
    membership_set_roles(membership=membership, roles=["ReadOnly"])
    _assert_dead(tokens, "Auth.CredentialsSuperseded")


def test_a_password_change_ends_the_oauth_tokens():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    membership.user.set_password("a brand new password")
    membership.user.save()
    _assert_dead(tokens, "Auth.CredentialsSuperseded")


def test_a_disabled_membership_or_user_ends_the_oauth_tokens():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    membership_disable(membership=membership)
    _assert_dead(tokens, "Auth.CredentialsSuperseded")
    other = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(other)
    other.user.is_active = False
    other.user.save()  # deactivation bumps every membership's epoch (tenancy.signals)
    _assert_dead(tokens, "Auth.CredentialsSuperseded")


def test_a_removed_membership_ends_the_oauth_tokens():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    Membership.objects.filter(pk=membership.pk).delete()
    _assert_dead(tokens, "Auth.InvalidToken")


def test_refresh_rotates_and_a_rotated_refresh_token_is_dead():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    renewed = refresh(Client(), tokens["client_id"], tokens["refresh_token"]).json()
    assert renewed["refresh_token"] != tokens["refresh_token"]
    again = refresh(Client(), tokens["client_id"], tokens["refresh_token"])
    assert again.status_code == 400
    # Reuse of a rotated token revokes the family: the renewed pair is dead as well.
    assert mcp(Client(), renewed["access_token"], "ping").status_code == 401


def test_access_tokens_live_an_hour_and_are_stored_only_as_a_checksum():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    stored = AccessToken.objects.get(tenancy_binding__isnull=False)
    assert stored.token == "" and tokens["access_token"] not in stored.token_checksum
    assert dt.timedelta(minutes=59) < stored.expires - timezone.now() <= dt.timedelta(hours=1)
    assert AccessTokenBinding.objects.get().authorization.membership == membership


CLAUDE_CALLBACK = "https://claude.ai/api/mcp/auth_callback"


# --- loopback redirect URIs ----------------------------------------------------------------


@mutation(
    "tenancy/oauth/defaults.py",
    find='"ALLOW_LOCALHOST_LOOPBACK": True,',
    replace='"ALLOW_LOCALHOST_LOOPBACK": False,',
)
@mutation(
    "tenancy/oauth/validators.py",
    find=(
        '        if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:\n'
        "            return False\n"
    ),
    replace="",
)
@pytest.mark.parametrize(
    ("registered", "requested", "allowed"),
    [
        ("http://localhost/callback", "http://localhost:51234/callback", True),
        ("http://localhost/callback", "http://localhost/callback", True),
        ("http://127.0.0.1/callback", "http://127.0.0.1:40000/callback", True),
        ("http://[::1]/callback", "http://[::1]:40000/callback", True),
        ("http://localhost/callback", "http://localhost.evil.example:51234/callback", False),
        ("http://localhost/callback", "http://127.0.0.1:51234/callback", False),
        ("http://localhost/callback", "http://localhost:51234/other", False),
        (CLAUDE_CALLBACK, "https://claude.ai:8443/api/mcp/auth_callback", False),
        (CLAUDE_CALLBACK, "https://evil.example/api/mcp/auth_callback", False),
        (CLAUDE_CALLBACK, CLAUDE_CALLBACK, True),
        ("http://farm-client.example/callback", "http://farm-client.example/callback", False),
    ],
)
def test_loopback_redirects_match_on_any_port_and_nothing_else_does(registered, requested, allowed):
    """Mutation: ``ALLOW_LOCALHOST_LOOPBACK: False`` in ``tenancy.oauth.defaults`` → red
    (Claude Code's ``http://localhost/callback`` on a random port is refused). Mutation: drop
    the non-loopback ``http`` refusal in ``TenancyOAuth2Validator.validate_redirect_uri`` →
    red (a plain-http redirect to another host is served)."""
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    if urlsplit(registered).scheme == "http" and urlsplit(registered).hostname == (
        "farm-client.example"
    ):
        # Registration refuses it up front now; an operator could still enter one by hand.
        client_id = (
            get_application_model()
            .objects.create(
                client_type="public",
                authorization_grant_type="authorization-code",
                redirect_uris=registered,
                client_secret="",
                hash_client_secret=False,
            )
            .client_id
        )
    else:
        client_id = register(Client(), redirect_uris=[registered])
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    response = browser.get(authorize_query(client_id, challenge, redirect_uri=requested))
    if allowed:
        assert response.status_code == 200, response.content
    else:
        # Never redirected to an unregistered URI: an error page, not a 302.
        assert response.status_code == 400, response.status_code
        assert b"redirect" in response.content.lower() or b"mismatch" in response.content.lower()


# --- REST and page: list and revoke ------------------------------------------------------


def test_a_member_lists_and_revokes_authorized_clients_over_rest(member_client):
    rest, membership = member_client()
    tokens = grant_tokens(membership)
    listed = rest.get("/api/v1/me/authorizations/").json()
    assert listed["complete"] is True
    (item,) = listed["items"]
    assert item["clientId"] == tokens["client_id"] and item["scopes"] == ["mcp:read", "mcp:write"]
    stranger, _ = member_client()
    url = f"/api/v1/me/authorizations/{item['id']}/"
    assert stranger.delete(url, **write_headers()).status_code == 404
    assert rest.delete(url, **write_headers()).status_code == 204
    assert rest.get("/api/v1/me/authorizations/").json()["items"] == []
    _assert_dead(tokens, "Auth.InvalidToken")


def test_a_signed_in_user_revokes_a_client_on_the_page():
    membership = MembershipFactory.create(
        tenant=FarmFactory.create(name="Page Farm"), roles=["Admin"]
    )
    tokens = grant_tokens(membership)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(membership.user)
    page = browser.get("/oauth/clients/")
    assert b"Page Farm" in page.content and b"Test Client" in page.content
    authorization = ClientAuthorization.objects.get()
    token = page.context["csrf_token"]
    revoked = browser.post(
        f"/oauth/clients/{authorization.pk}/revoke/", {"csrfmiddlewaretoken": str(token)}
    )
    assert revoked.status_code == 302
    _assert_dead(tokens, "Auth.InvalidToken")
    assert get_application_model().objects.filter(client_id=tokens["client_id"]).exists()


def test_denying_consent_issues_nothing():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, challenge)
    page = browser.get(url)
    form = {k: v for k, v in page.context["form"].initial.items() if v is not None}
    form["membership"] = membership.pk
    response = browser.post(url, form)  # no "allow"
    assert response.status_code == 302
    assert response["Location"].startswith(REDIRECT_URI)
    assert parse_qs(urlsplit(response["Location"]).query)["error"] == ["access_denied"]
    assert not ClientAuthorization.objects.exists()


def test_consent_for_a_membership_of_someone_else_is_refused():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    stranger = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client_id = register(Client())
    _, challenge = pkce()
    browser = Client()
    browser.force_login(membership.user)
    url = authorize_query(client_id, challenge)
    page = browser.get(url)
    form = {k: v for k, v in page.context["form"].initial.items() if v is not None}
    form.update({"allow": "Allow", "membership": stranger.pk})
    response = browser.post(url, form)
    assert response.status_code == 200  # the form again, with the error
    assert response.context["form"].errors["membership"]
    assert not ClientAuthorization.objects.exists()
    assert RESOURCE  # the resource every grant is bound to
