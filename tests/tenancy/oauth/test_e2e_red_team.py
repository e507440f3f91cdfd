"""The red-team run of issue 23 (round two), replayed with httpx against the farm's uvicorn.

The server hashes passwords with Django's default hasher (PBKDF2, ~0.4 s of CPU each), not the
test runs' fast one, so the CPU the server process spends (``/proc/<pid>/stat``) shows whether
a request computed a hash: the password grant must not, nor must an anonymous registration.
Requests are bounded: at most a few dozen per limit, all on loopback.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tenancy.models import AbstractMembership
from tests.mcp_tools.servers import ServerURL, serve
from tests.mutations import mutation
from tests.tenancy.oauth.browser import EMAIL, PASSWORD, SERVER_ENV
from tests.tenancy.oauth.flow import pkce

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

EVIL = "https://evil.example/landing"
# Generous: one PBKDF2 hash alone costs more than this whole budget for a handful of requests.
CPU_BUDGET_SECONDS = 0.35
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


@pytest.fixture
def slow_hash_server(two_farm_owner: AbstractMembership) -> Iterator[ServerURL]:
    user = two_farm_owner.get_user()
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, "redteamsalt1234")
    user.save(update_fields=["password"])
    env = {**SERVER_ENV, "CLUCK_FAST_PASSWORD_HASHER": "0"}
    with serve("uvicorn", env=env) as url:
        yield url


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _register(http: httpx.Client, **extra: Any) -> httpx.Response:
    body = {
        "client_name": "Red Team",
        "redirect_uris": ["http://127.0.0.1:33418/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **extra,
    }
    return http.post(
        "/oauth/register/", content=json.dumps(body), headers={"Content-Type": "application/json"}
    )


def _token(http: httpx.Client, data: dict[str, str]) -> httpx.Response:
    return http.post("/oauth/token/", content=urlencode(data), headers=FORM)


def _sign_in(http: httpx.Client) -> None:
    page = http.get("/oauth/sign-in/")
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match, page.text
    signed_in = http.post(
        "/oauth/sign-in/",
        data={"csrfmiddlewaretoken": match.group(1), "username": EMAIL, "password": PASSWORD},
        headers={"Referer": f"{http.base_url}/oauth/sign-in/"},
    )
    assert signed_in.status_code == 302, signed_in.text


@mutation(
    "tenancy/oauth/defaults.py",
    find='        "OAUTH2_SERVER_CLASS": "tenancy.oauth.server.TenancyOAuth2Server",\n',
    replace="",
)
@mutation(
    "tenancy/oauth/endpoints.py",
    find="        if application.client_type == application_model.CLIENT_PUBLIC:",
    replace="        if False:",
)
@mutation(
    "tenancy/oauth/pages.py",
    find="            if not self._authorized_by_user(client_id):",
    replace="            if False:",
)
def test_the_red_team_sequences_are_answered(slow_hash_server: ServerURL) -> None:
    """Mutations: oauthlib's all-grants server (no ``OAUTH2_SERVER_CLASS``) → red (right and
    wrong passwords answered apart, a PBKDF2 hash each); the toolkit's secret for a public
    client too (generated, hashed, returned) → red; every error redirected → red (the redirect to
    evil.example)."""
    pid = slow_hash_server.process.pid
    with httpx.Client(base_url=slow_hash_server, timeout=30) as http:
        # Anonymous registration of a public client: no secret generated, nothing hashed.
        before = _cpu_seconds(pid)
        registered = [_register(http) for _ in range(3)]
        assert _cpu_seconds(pid) - before < CPU_BUDGET_SECONDS
        assert all(response.status_code == 201 for response in registered)
        assert "client_secret" not in registered[0].json()
        client_id = registered[0].json()["client_id"]

        # The password grant: one answer for the right and wrong passwords, and no hash.
        before = _cpu_seconds(pid)
        answers = {
            (response.status_code, response.content)
            for password in (PASSWORD, "WRONG", PASSWORD, "WRONG")
            for response in [
                _token(
                    http,
                    {
                        "grant_type": "password",
                        "client_id": client_id,
                        "username": EMAIL,
                        "password": password,
                    },
                )
            ]
        }
        assert answers == {(400, b'{"error": "unsupported_grant_type"}')}
        assert _cpu_seconds(pid) - before < CPU_BUDGET_SECONDS

        # NUL anywhere: a 4xx in the endpoint's format, never a 500.
        for path, data in (
            ("/oauth/token/", {"grant_type": "authorization_code", "client_id": "\x00"}),
            (
                "/oauth/token/",
                {"grant_type": "authorization_code", "client_id": client_id, "code": "\x00"},
            ),
            (
                "/oauth/token/",
                {"grant_type": "password", "client_id": client_id, "username": "\x00"},
            ),
            ("/oauth/revoke/", {"token": "\x00", "client_id": client_id}),
        ):
            response = http.post(path, content=urlencode(data), headers=FORM)
            assert response.status_code == 400, (path, data, response.text)
            assert response.json()["error"] == "invalid_request"
        nul_name = _register(http, client_name="evil\x00")
        assert nul_name.status_code == 400 and nul_name.json()["error"] == "invalid_request"
        _, challenge = pkce()
        nul_query = http.get(
            "/oauth/authorize/", params={"client_id": "\x00", "code_challenge": challenge}
        )
        assert nul_query.status_code == 400 and nul_query.headers["content-type"].startswith(
            "text/html"
        )

        # The open redirector: a client nobody authorized gets a page, not the browser.
        evil = _register(http, redirect_uris=[EVIL]).json()["client_id"]
        _sign_in(http)
        query = {
            "response_type": "code",
            "client_id": evil,
            "redirect_uri": EVIL,
            "scope": "nonexistent",
            "state": "s",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        page = http.get("/oauth/authorize/", params=query)
        assert page.status_code == 400 and "location" not in page.headers
        assert "invalid_scope" in page.text
        consent = http.get("/oauth/authorize/", params={**query, "scope": "mcp:read"})
        assert consent.status_code == 200 and "no-store" in consent.headers["cache-control"]

        # Past the limits: 429 with Retry-After, as OAuth JSON.
        refused = None
        for n in range(70):  # 30/m per client by default; a window may turn over once
            response = _token(
                http,
                {"grant_type": "refresh_token", "refresh_token": f"r{n}", "client_id": client_id},
            )
            if response.status_code == 429:
                refused = response
                break
            assert response.status_code == 400
        assert refused is not None
        assert refused.json()["error"] == "temporarily_unavailable"
        assert int(refused.headers["retry-after"]) >= 1
        refused = None
        for _ in range(45):  # 20/m per address by default
            response = _register(http)
            if response.status_code == 429:
                refused = response
                break
            assert response.status_code == 201
        assert refused is not None
        assert refused.json()["error"] == "temporarily_unavailable"
        assert int(refused.headers["retry-after"]) >= 1
