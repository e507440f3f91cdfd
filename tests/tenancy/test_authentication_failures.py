"""A refused bearer: answered by the middleware (problem JSON), or recorded for a view that
renders it itself (``renders_authentication_failure``); one challenge builder for both."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from tenancy import AuthenticationFailedError, bearer_challenge, renders_authentication_failure
from tenancy.exceptions import CredentialsSupersededError
from tenancy.middleware import TenancyMiddleware
from tests.factories import MembershipFactory, bearer_for
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def plain_view(request: Any) -> HttpResponse:
    return HttpResponse("ran")


@renders_authentication_failure
def rendering_view(request: Any) -> HttpResponse:
    return HttpResponse("ran")


class RenderingClassView:
    tenancy_renders_authentication_failure = True


def _process(view: Any, authorization: str | None) -> tuple[Any, HttpResponse | None]:
    headers = {} if authorization is None else {"Authorization": authorization}
    request = RequestFactory().get("/anywhere", headers=headers)
    middleware = TenancyMiddleware(lambda r: HttpResponse())
    middleware.process_request(request)
    return request, middleware.process_view(request, view, (), {})


@mutation(
    "tenancy/middleware.py",
    find="    if has_marker(view_func, RENDERS_AUTHENTICATION_FAILURE):",
    replace="    if True:",
)
def test_an_unmarked_view_never_runs_for_a_refused_bearer():
    """REST keeps problem+json. Mutation: record the failure for every view → red."""
    request, response = _process(plain_view, "Bearer ck_pat_not-a-real-token")
    assert response is not None and response.status_code == 401
    assert response["Content-Type"] == "application/problem+json"
    assert response["WWW-Authenticate"] == bearer_challenge(AuthenticationFailedError())
    assert request.authentication_failure is None


@mutation(
    "tenancy/middleware.py",
    find="    if has_marker(view_func, RENDERS_AUTHENTICATION_FAILURE):",
    replace="    if False:",
)
@pytest.mark.parametrize("authorization", ["Bearer ck_pat_not-a-real-token", "Basic dXNlcjpwdw=="])
def test_a_marked_view_runs_unresolved_with_the_failure_recorded(authorization):
    """Mutation: answer 401 in the middleware regardless of the marker → red."""
    request, response = _process(rendering_view, authorization)
    assert response is None
    assert isinstance(request.authentication_failure, AuthenticationFailedError)
    assert request.authentication_failure.default_code == "Auth.InvalidToken"
    assert not request.tenant.is_resolved and not request.actor.is_resolved


def test_the_marker_is_read_from_the_class_behind_a_view():
    def view(request: Any) -> HttpResponse:
        return HttpResponse()

    view.cls = RenderingClassView  # type: ignore[attr-defined]
    request, response = _process(view, "Bearer ck_pat_not-a-real-token")
    assert response is None and request.authentication_failure is not None


def test_a_superseded_bearer_is_recorded_with_its_own_code():
    membership = MembershipFactory.create()
    raw = bearer_for(membership)
    from tenancy.services import user_credentials_changed

    user_credentials_changed(user=membership.user)
    request, response = _process(rendering_view, f"Bearer {raw}")
    assert response is None
    assert isinstance(request.authentication_failure, CredentialsSupersededError)


def test_a_marked_view_with_a_valid_or_no_bearer_records_nothing():
    membership = MembershipFactory.create()
    request, response = _process(rendering_view, f"Bearer {bearer_for(membership)}")
    assert response is None and request.authentication_failure is None
    assert request.tenant.is_resolved
    request, response = _process(rendering_view, None)
    assert response is None and request.authentication_failure is None
    assert not request.tenant.is_resolved


def test_the_bearer_challenge():
    assert bearer_challenge() == "Bearer"
    assert bearer_challenge(realm="mcp") == 'Bearer realm="mcp"'
    assert bearer_challenge(AuthenticationFailedError()) == (
        'Bearer error="invalid_token", error_description="The access token is invalid, '
        'expired or revoked. Sign in again."'
    )


@mutation(
    "tenancy/challenges.py",
    find='error_description="{_quoted(str(error.detail))}"',
    replace='error_description="{str(error.detail)}"',
)
def test_the_error_description_never_breaks_out_of_its_quoted_string():
    """RFC 6750 §3 allows printable ASCII without ``"`` and ``\\``.

    Mutation: interpolate the message unfiltered → red.
    """
    error = AuthenticationFailedError('Say "hi" \\ café\r\nX-Injected: 1')
    assert bearer_challenge(error) == (
        'Bearer error="invalid_token", error_description="Say hi  cafX-Injected: 1"'
    )
