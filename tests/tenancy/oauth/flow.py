"""In-process OAuth flow helpers: register, authorize (sign in + consent), exchange, refresh."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from django.contrib.auth.hashers import MD5PasswordHasher
from django.test import Client

REDIRECT_URI = "http://127.0.0.1:33418/callback"
RESOURCE = "http://testserver/mcp"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
    return verifier, challenge.rstrip("=")


def register(client: Client, redirect_uris: list[str] | None = None, **extra: Any) -> str:
    """Dynamic client registration of a public client; returns its client_id."""
    body = {
        "client_name": "Test Client",
        "redirect_uris": redirect_uris or [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **extra,
    }
    response = client.post("/oauth/register/", json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    return str(response.json()["client_id"])


def authorize_query(
    client_id: str,
    challenge: str,
    *,
    scope: str = "mcp:read mcp:write",
    redirect_uri: str = REDIRECT_URI,
    resource: str | None = RESOURCE,
    method: str = "S256",
    state: str = "st4te",
) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": method,
    }
    if resource is not None:
        params["resource"] = resource
    return "/oauth/authorize/?" + urlencode(params)


def consent(
    browser: Client,
    user: Any,
    membership: Any,
    client_id: str,
    challenge: str,
    **query: Any,
) -> dict[str, list[str]]:
    """Sign in as ``user``, approve for ``membership``; returns the redirect's query."""
    browser.force_login(user)
    url = authorize_query(client_id, challenge, **query)
    page = browser.get(url)
    assert page.status_code == 200, page.content
    form = {
        key: value
        for key, value in page.context["form"].initial.items()
        if value is not None and key != "membership"
    }
    form.update({"allow": "Allow", "membership": membership.pk})
    response = browser.post(url, form)
    assert response.status_code == 302, response.content
    return parse_qs(urlsplit(response["Location"]).query)


def exchange(
    client: Client,
    client_id: str,
    code: str,
    verifier: str,
    *,
    redirect_uri: str = REDIRECT_URI,
    resource: str | None = RESOURCE,
) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    if resource is not None:
        data["resource"] = resource
    return client.post(
        "/oauth/token/", urlencode(data), content_type="application/x-www-form-urlencoded"
    )


def refresh(client: Client, client_id: str, refresh_token: str) -> Any:
    data = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id}
    return client.post(
        "/oauth/token/", urlencode(data), content_type="application/x-www-form-urlencoded"
    )


def grant_tokens(
    membership: Any, *, scope: str = "mcp:read mcp:write", resource: str | None = RESOURCE
) -> dict[str, Any]:
    """The whole flow for ``membership``'s user: DCR, consent for ``membership``, exchange."""
    client = Client()
    client_id = register(client)
    verifier, challenge = pkce()
    query = consent(Client(), membership.user, membership, client_id, challenge, scope=scope)
    response = exchange(client, client_id, query["code"][0], verifier, resource=resource)
    assert response.status_code == 200, response.content
    return {**response.json(), "client_id": client_id}


def mcp(client: Client, token: str, method: str, params: dict[str, Any] | None = None) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )


class CountingHasher(MD5PasswordHasher):
    """A fast hasher that counts every password hash it computes (checks hash too)."""

    algorithm = "counting_md5"
    calls = 0

    def encode(self, password: str, salt: str) -> str:
        type(self).calls += 1
        return str(super().encode(password, salt))


COUNTING_HASHER = "tests.tenancy.oauth.flow.CountingHasher"


def token_post(client: Client, data: dict[str, str], **extra: Any) -> Any:
    return client.post(
        "/oauth/token/", urlencode(data), content_type="application/x-www-form-urlencoded", **extra
    )
