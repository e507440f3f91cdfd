"""What an OAuth-capable MCP client discovers: RFC 9728 and RFC 8414 documents, 401 challenges."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import get_access_token_model

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.tenancy.oauth.flow import grant_tokens, mcp

pytestmark = pytest.mark.django_db

ISSUER = "http://testserver"
RESOURCE = "http://testserver/mcp"
METADATA = "http://testserver/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_protected_resource_metadata_names_the_mcp_endpoint_and_this_server(client, path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["mcp:read", "mcp:write"],
        "bearer_methods_supported": ["header"],
    }


def test_authorization_server_metadata_offers_pkce_s256_cimd_dcr_and_public_clients(client):
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == ISSUER
    assert metadata["authorization_endpoint"] == f"{ISSUER}/oauth/authorize/"
    assert metadata["token_endpoint"] == f"{ISSUER}/oauth/token/"
    assert metadata["revocation_endpoint"] == f"{ISSUER}/oauth/revoke/"
    assert metadata["registration_endpoint"] == f"{ISSUER}/oauth/register/"
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["authorization_response_iss_parameter_supported"] is True
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert "offline_access" not in metadata["scopes_supported"]


def test_other_resource_paths_publish_no_metadata(client):
    response = client.get("/.well-known/oauth-protected-resource/api/v1")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"


def _challenge(response) -> str:
    assert response.status_code == 401, response.content
    return str(response["WWW-Authenticate"])


def test_a_401_without_credentials_points_at_the_metadata_and_the_scopes():
    response = Client().post(
        "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}), "application/json"
    )
    challenge = _challenge(response)
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{METADATA}"' in challenge
    assert 'scope="mcp:read mcp:write"' in challenge
    assert "error=" not in challenge  # RFC 6750 §3.1: no error code without credentials


def test_every_refused_bearer_on_mcp_is_invalid_token_with_the_metadata():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    tokens = grant_tokens(membership)
    expired = grant_tokens(membership)["access_token"]
    access_model = get_access_token_model()
    access_model.objects.filter(pk__in=_token_pks(expired)).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    revoked = grant_tokens(membership)["access_token"]
    access_model.objects.filter(pk__in=_token_pks(revoked)).delete()
    for bearer in ("ck_oat_" + "x" * 43, expired, revoked, "garbage", bearer_for(membership)[:-1]):
        challenge = _challenge(mcp(Client(), bearer, "ping"))
        assert challenge.startswith('Bearer error="invalid_token"'), challenge
        assert f'resource_metadata="{METADATA}"' in challenge
    assert mcp(Client(), tokens["access_token"], "ping").status_code == 200


def _token_pks(raw: str) -> list[int]:
    import hashlib

    checksum = hashlib.sha256(raw.encode()).hexdigest()
    return list(
        get_access_token_model()
        .objects.filter(token_checksum=checksum)
        .values_list("pk", flat=True)
    )


def test_a_token_in_the_query_string_is_never_read():
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    token = grant_tokens(membership)["access_token"]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    response = Client().post(f"/mcp?access_token={token}", body, "application/json")
    challenge = _challenge(response)
    assert "error=" not in challenge  # as if no credentials were sent at all


def test_personal_tokens_keep_working_on_mcp_and_rest(member_client):
    client, membership = member_client()
    bearer = bearer_for(membership)
    assert mcp(Client(), bearer, "ping").status_code == 200
    assert client.get("/api/v1/me/").status_code == 200
