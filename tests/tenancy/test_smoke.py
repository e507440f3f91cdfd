import pytest


@pytest.mark.django_db
def test_me_answers_for_a_valid_bearer(member_client):
    client, membership = member_client()
    response = client.get("/api/v1/me/")
    assert response.status_code == 200, response.content
    assert response.json()["role"] == "Owner"


@pytest.mark.django_db
def test_garbage_bearer_is_401_with_invalid_token_challenge(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer nope")
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]
