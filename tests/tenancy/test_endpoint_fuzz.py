"""Every endpoint of ``tenancy``, ``tenancy.oauth``, ``mcp_tools`` and ``a2a_tools``, fuzzed:
never a 5xx.

The endpoints are listed from the URL resolver (every route whose view lives in ``tenancy``),
so a new one is fuzzed without anyone remembering to add it. Each example sends one request:
a method the route may or may not allow, a query string, a form or JSON body (field names the
endpoints read, and others), ``Authorization`` (a tenant admin's real token among junk) and
``Content-Type`` headers, path parameters — built from text as it comes and from the strings no
store can keep (NUL, lone surrogates, sent as the bytes a client would put on the wire), signed
in as a member, as staff, or not. The answer is whatever
the endpoint decides, as long as it is not a server error.

Bounded for CI: ``CLUCK_FUZZ_EXAMPLES`` examples per route (default 25), derandomized
(``CLUCK_FUZZ_RANDOM=1`` to explore).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import MembershipFactory, bearer_for
from tests.mutations import mutation

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

EXAMPLES = int(os.environ.get("CLUCK_FUZZ_EXAMPLES", "25"))
DERANDOMIZE = os.environ.get("CLUCK_FUZZ_RANDOM") != "1"
CLIENT = "fuzz-public-client"
# Replaced by a real bearer of a tenant admin: the operator API reads its filters only then.
OWNER = "Bearer <owner>"

FIELDS = [
    "grant_type", "client_id", "client_secret", "code", "code_verifier", "redirect_uri",
    "refresh_token", "username", "password", "scope", "resource", "token", "token_type_hint",
    "response_type", "state", "code_challenge", "code_challenge_method", "prompt", "nonce",
    "client_name", "redirect_uris", "grant_types", "response_types", "client_uri", "logo_uri",
    "token_endpoint_auth_method", "software_id", "contacts", "membership", "allow", "next",
    "email", "tenantCode", "farmCode", "name", "expiresInDays", "csrfmiddlewaretoken",
    "actor", "tool", "outcome", "protocol", "since", "until", "limit", "cursor", "actor_id",
    "tenant_key", "q", "readOnly", "disabledTools",
]  # fmt: skip
VALUES = [
    "authorization_code", "refresh_token", "password", "client_credentials", "code", "S256",
    "plain", "none", "mcp:read mcp:write", "http://127.0.0.1:33418/callback",
    "http://testserver/mcp", "https://evil.example/landing", "com.example.app:/cb",
    "owner@sunrise.example", "cluck-demo-password", "sunrise", "ck_pat_" + "x" * 43,
    "ck_oat_" + "y" * 43, "login", "consent", "true", "1", "-1", "9" * 30,
]  # fmt: skip
# Text as it comes, and what no store can keep (NUL, a lone surrogate), and long ones.
text = (
    st.text(max_size=12)
    | st.sampled_from(["", "a\x00b", "\x00", "x\ud800", "\udfff", "t" * 300])
    | st.sampled_from(VALUES)
)
keys = st.sampled_from(FIELDS) | text
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**40), max_value=2**40) | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=8,
)
pairs = st.lists(st.tuples(keys, text), max_size=6)
POISON = ["a\x00b", "\x00", "x\ud800", "\udfff"]
# A plausible request — the fields the endpoints read, with values that take it past their
# first checks (a registered public client, a grant type served) — with one field poisoned:
# how a NUL reaches the database deep in a flow. Beside it, junk.
PLAUSIBLE: dict[str, Any] = {
    "grant_type": st.sampled_from(["authorization_code", "refresh_token", "password"]),
    "client_id": st.just(CLIENT),
    "code": st.just("c0de"),
    "code_verifier": st.just("v" * 43),
    "redirect_uri": st.just("http://127.0.0.1:33418/callback"),
    "refresh_token": st.just("ck_ort_" + "r" * 43),
    "username": st.just("owner@sunrise.example"),
    "password": st.just("cluck-demo-password"),
    "scope": st.just("mcp:read mcp:write"),
    "resource": st.just("http://testserver/mcp"),
    "token": st.just("ck_oat_" + "y" * 43),
    "response_type": st.just("code"),
    "state": st.just("st4te"),
    "code_challenge": st.just("c" * 43),
    "code_challenge_method": st.just("S256"),
    "prompt": st.sampled_from(["none", "login", "consent"]),
    "client_name": st.just("Fuzz client"),
    "redirect_uris": st.just(["http://127.0.0.1:33418/callback"]),
    "grant_types": st.just(["authorization_code", "refresh_token"]),
    "response_types": st.just(["code"]),
    "token_endpoint_auth_method": st.just("none"),
    "email": st.just("owner@sunrise.example"),
    "tenantCode": st.just("sunrise"),
    "farmCode": st.just("sunrise"),
    "name": st.just("laptop"),
    "expiresInDays": st.just("30"),
    # The operator API's filters and switches, the audit admin's filters.
    "tool": st.just("mcptest_whoami"),
    "actor": st.just("1"),
    "outcome": st.just("ok"),
    "limit": st.just("5"),
    "since": st.just("2026-12-01T00:00:00Z"),
    "disabledTools": st.just(["mcptest_whoami"]),
}


@st.composite
def plausible_with_one_poisoned(draw: Any) -> dict[str, Any]:
    found = {name: draw(value) for name, value in PLAUSIBLE.items()}
    poisoned = draw(st.sampled_from(sorted(PLAUSIBLE)))
    poison = draw(st.sampled_from(POISON))
    found[poisoned] = [poison] if isinstance(found[poisoned], list) else poison
    return found


fields = plausible_with_one_poisoned() | st.fixed_dictionaries(
    {}, optional={f: PLAUSIBLE.get(f, text) for f in FIELDS}
)


def _flat(found: dict[str, Any], extra: list[tuple[str, str]]) -> list[tuple[str, str]]:
    flat = [
        (k, str(v))
        for k, value in found.items()
        for v in (value if isinstance(value, list) else [value])
    ]
    return flat + extra


authorization = st.none() | st.sampled_from(
    [
        "Bearer",
        "Bearer ck_pat_" + "x" * 43,
        "Bearer ck_oat_" + "z" * 43,
        "Bearer eyJhbGciOiJub25lIn0.e30.",
        "Basic dXNlcjpwdw==",
        "Basic !!!",
        "Session abc",
        OWNER,
    ]
)
content_type = st.sampled_from(
    ["application/x-www-form-urlencoded", "application/json", "text/plain", "multipart/form-data"]
)
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
method_of = st.sampled_from(["GET", "POST"]) | st.sampled_from(METHODS)


def _wire(value: str) -> str:
    """``value`` percent-encoded as a client sends it: a lone surrogate as its raw bytes."""
    return quote(value, safe="", encoding="utf-8", errors="surrogatepass")


def _query(items: list[tuple[str, str]]) -> str:
    return "&".join(f"{_wire(key)}={_wire(value)}" for key, value in items)


def _routes() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []

    def walk(patterns: Any, prefix: str) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                module = getattr(pattern.callback, "__module__", "") or ""
                if module.partition(".")[0] in FUZZED_APPS:
                    found.append((prefix + str(pattern.pattern), pattern.callback))

    walk(get_resolver().url_patterns, "")
    return found


# The toolkit's apps: tenancy's REST views and OAuth server, and mcp_tools' and a2a_tools'
# endpoints (/mcp, /a2a, discovery, the operator API, the audit's admin list, health, metrics).
FUZZED_APPS = {"tenancy", "mcp_tools", "a2a_tools"}
ROUTES = sorted({route for route, _ in _routes()})
PARAMETER = re.compile(r"<(?:(\w+):)?(\w+)>")


def test_the_routes_are_found():
    """The resolver holds tenancy's REST views, the OAuth server's endpoints and the toolkit's
    own (the audit's admin list is its own view)."""
    assert {"oauth/token/", "oauth/register/", "oauth/authorize/"} <= set(ROUTES)
    assert {"api/v1/mcp/audit/", "api/v1/mcp/switches/", "mcp", "a2a"} <= set(ROUTES)
    assert "admin/mcp_tools/callaudit/" in ROUTES
    assert any(route.endswith("auth/login/") for route in ROUTES)
    assert any(route.endswith("me/tokens/") for route in ROUTES)


def _path(route: str, values: list[str]) -> str:
    filled = iter(values)

    def fill(match: re.Match[str]) -> str:
        value = next(filled, "1")
        if match.group(1) == "int":
            return str(abs(hash(value)) % 1000)
        return _wire(value) or "x"

    return "/" + PARAMETER.sub(fill, route.lstrip("^").rstrip("$"))


POISONED_OAUTH = [
    (
        "/oauth/token/",
        "grant_type=authorization_code&client_id=a%00b&code=c0de"
        "&redirect_uri=http://127.0.0.1:1/cb&code_verifier=x",
        "application/x-www-form-urlencoded",
    ),
    (
        "/oauth/token/",
        "grant_type=refresh_token&client_id=a%00b&refresh_token=r%00",
        "application/x-www-form-urlencoded",
    ),
    ("/oauth/revoke/", "token=a%00b&client_id=a%00b", "application/x-www-form-urlencoded"),
    (
        "/oauth/register/",
        json.dumps({"client_name": "a\u0000b", "redirect_uris": ["http://127.0.0.1:1/cb"]}),
        "application/json",
    ),
]


@mutation(
    "tenancy/oauth/inputs.py",
    find="    return _UNSAFE.search(text) is not None",
    replace="    return False",
)
@pytest.mark.parametrize(("path", "body", "content"), POISONED_OAUTH)
def test_a_poisoned_oauth_field_is_refused_before_the_database(
    path: str, body: str, content: str
) -> None:
    """The fuzz's sharpest cases, held by name (a derandomized fuzz of every route need not
    draw them). Mutation: the OAuth endpoints stop refusing NUL and lone surrogates before any
    work → a poisoned ``client_id``/token/``client_name`` reaches PostgreSQL: an HTML 500 → red."""
    client = Client(raise_request_exception=False)
    response = client.post(path, body.encode(), content_type=content)
    assert response.status_code < 500, response.content[:300]


@pytest.mark.slow
@pytest.mark.parametrize("route", ROUTES)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=DERANDOMIZE,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=method_of,
    query=pairs,
    query_fields=fields,
    form=pairs,
    form_fields=fields,
    json_body=st.none() | st.dictionaries(keys, json_values, max_size=6) | fields,
    content=st.none() | content_type,
    bearer=authorization,
    path_values=st.lists(text, min_size=1, max_size=2),
    signed_in=st.sampled_from(["", "member", "staff"]),
)
def test_an_endpoint_never_answers_a_server_error(
    route: str,
    method: str,
    query: list[tuple[str, str]],
    query_fields: dict[str, Any],
    form: list[tuple[str, str]],
    form_fields: dict[str, Any],
    json_body: dict[str, Any] | None,
    content: str | None,
    bearer: str | None,
    path_values: list[str],
    signed_in: str,
) -> None:
    """Whatever a route is sent, never a 5xx. A fuzz, not a guard: the invariant's recorded
    mutation is on ``test_a_poisoned_oauth_field_is_refused_before_the_database``."""
    _registered_client()
    client = Client(raise_request_exception=False)
    if signed_in:
        client.force_login(_member().user if signed_in == "member" else _staff())
    path = _path(route, path_values)
    query = _flat(query_fields, query)
    if query:
        path += "?" + _query(query)
    if json_body is not None:
        body = json.dumps(json_body).encode("ascii")  # lone surrogates as \ud800 escapes
        content = content or "application/json"
    else:
        body = _query(_flat(form_fields, form)).encode("ascii")
        content = content or "application/x-www-form-urlencoded"
    if bearer == OWNER:
        bearer = f"Bearer {_owner_bearer()}"
    headers = {} if bearer is None else {"Authorization": bearer}
    response = client.generic(method, path, body, content_type=content, headers=headers)
    assert response.status_code < 500, (method, path, body[:300], response.content[:500])


def _registered_client() -> None:
    """The public client ``CLIENT`` names, registered once per test (the database is emptied
    between tests)."""
    from oauth2_provider.models import get_application_model

    model = get_application_model()
    if not model.objects.filter(client_id=CLIENT).exists():
        model.objects.create(
            client_id=CLIENT,
            name="Fuzz client",
            client_type=model.CLIENT_PUBLIC,
            authorization_grant_type=model.GRANT_AUTHORIZATION_CODE,
            redirect_uris="http://127.0.0.1:33418/callback",
            client_secret="",
        )


_members: list[Any] = []
_owners: list[tuple[Any, str]] = []


def _owner_bearer() -> str:
    """A tenant admin's personal token (made once per test: the database is emptied between)."""
    if not _owners or not type(_owners[0][0]).objects.filter(pk=_owners[0][0].pk).exists():
        owner = MembershipFactory.create(roles=["Admin"])
        _owners[:] = [(owner, bearer_for(owner))]
    return _owners[0][1]


def _staff() -> Any:
    user = get_user_model().objects.filter(username="fuzz-staff").first()
    return user or get_user_model().objects.create_superuser(
        username="fuzz-staff", email="fuzz-staff@example.com", password="pw"
    )


def _member() -> Any:
    if not _members or not type(_members[0]).objects.filter(pk=_members[0].pk).exists():
        _members[:] = [MembershipFactory.create()]
    return _members[0]
