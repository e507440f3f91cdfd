"""The project's own logins beside the toolkit's: simplejwt and the session on its API, Cluck's
tokens on its API (TenancyAuthentication) and on /mcp, and never one in the other's place."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.existing.conftest import Guided
from tests.existing.harness import PASSWORD, refusal_code, rpc

pytestmark = [pytest.mark.e2e]


def _jwt(url: str, email: str) -> str:
    response = httpx.post(f"{url}/api/token/", json={"email": email, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return str(response.json()["access"])


def _project_names(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {project["name"] for project in response.json()}


def test_simplejwt_still_logs_in_on_the_projects_api(
    guided_tracker: Guided, tracker_servers: dict[str, str]
) -> None:
    url = tracker_servers["runserver"]
    access = _jwt(url, "cy@globex.example")
    bearer = {"Authorization": f"Bearer {access}"}
    before = _project_names(httpx.get(f"{url}/api/projects/", headers=bearer))
    created = httpx.post(
        f"{url}/api/projects/", json={"organization": "globex", "name": "JWT made"}, headers=bearer
    )
    # A simplejwt write needs no Idempotency-Key: the toolkit leaves other bearers alone.
    assert created.status_code == 201, created.text
    after = _project_names(httpx.get(f"{url}/api/projects/", headers=bearer))
    assert after == before | {"JWT made"}

    # Refusals are still simplejwt's and DRF's own.
    forged = httpx.get(f"{url}/api/projects/", headers={"Authorization": "Bearer not.a.jwt"})
    assert forged.status_code == 401 and forged.json()["code"] == "token_not_valid"
    anonymous = httpx.get(f"{url}/api/projects/")
    assert anonymous.status_code == 401
    assert anonymous.headers["WWW-Authenticate"] == 'Bearer realm="api"'


def test_a_signed_in_session_still_works_on_the_projects_api(
    tracker_servers: dict[str, str],
) -> None:
    url = tracker_servers["runserver"]
    with httpx.Client(base_url=url) as browser:
        page = browser.get("/accounts/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        assert csrf, page.text
        signed_in = browser.post(
            "/accounts/login/",
            data={
                "login": "ada@acme.example",
                "password": PASSWORD,
                "csrfmiddlewaretoken": csrf[1],
            },
        )
        assert signed_in.status_code == 302, signed_in.text
        assert "sessionid" in browser.cookies
        projects = browser.get("/api/projects/")
        assert projects.status_code == 200, projects.text
        assert {project["organization"] for project in projects.json()} <= {"acme"}
        listed = browser.get("/api/organizations/")
        assert listed.status_code == 200, listed.text
        assert listed.json() == [{"slug": "acme", "name": "Acme", "role": "owner"}]


def test_a_cluck_token_works_on_the_projects_api_and_a_jwt_never_on_mcp(
    guided_tracker: Guided, tracker_servers: dict[str, str]
) -> None:
    url = tracker_servers["runserver"]
    token = guided_tracker.token("cy@globex.example", "globex")
    bearer = {"Authorization": f"Bearer {token}"}
    listed = httpx.get(f"{url}/api/projects/", headers=bearer)
    assert listed.status_code == 200, listed.text
    assert {project["organization"] for project in listed.json()} <= {"globex"}
    body = {"organization": "globex", "name": "Token made"}
    keyless = httpx.post(f"{url}/api/projects/", json=body, headers=bearer)
    # Writes with a Cluck token run once per Idempotency-Key, on the project's API too.
    assert keyless.status_code == 400, keyless.text
    assert keyless.json()["code"] == "Idempotency.KeyRequired"
    keyed = {**bearer, "Idempotency-Key": "token-made"}
    created = httpx.post(f"{url}/api/projects/", json=body, headers=keyed)
    assert created.status_code == 201, created.text
    replayed = httpx.post(f"{url}/api/projects/", json=body, headers=keyed)
    assert replayed.status_code == 201 and replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.json() == created.json()

    # simplejwt's token is no credential of /mcp.
    access = _jwt(url, "cy@globex.example")
    assert refusal_code(rpc(url, access, "tools/list")) == "Auth.InvalidToken"
    assert refusal_code(rpc(url, "ck_pat_not-a-real-token", "tools/list")) == "Auth.InvalidToken"
