"""The host project's own credentials: the toolkit claims only what it issued.

A project already has an ``Authorization`` header in use — djangorestframework-simplejwt
``Bearer`` JWTs, ``Session <key>`` headers, Basic. ``TenancyMiddleware`` resolves only the
toolkit's tokens on the project's routes and lets everything else through untouched;
``TenancyAuthentication`` sits beside the project's DRF classes in either order without
changing what they answer. Real simplejwt, real DRF views, through Django's test client.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import checks
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory, override_settings
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.tokens import AccessToken as JWT

from tenancy.drf_authentication import TenancyAuthentication
from tenancy.middleware import TenancyMiddleware
from tests.factories import MembershipFactory, bearer_for
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def _process(authorization: str) -> tuple[HttpRequest, HttpResponse | None]:
    request = RequestFactory().get("/projects/", headers={"Authorization": authorization})
    middleware = TenancyMiddleware(lambda r: HttpResponse())
    middleware.process_request(request)
    return request, middleware.process_view(request, _project_view, (), {})


def _project_view(request: Any) -> HttpResponse:
    return HttpResponse("the project's own view")


class SessionHeaderAuthentication(BaseAuthentication):
    """A project's ``Authorization: Session <key>`` scheme (refuses any key it does not know)."""

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        scheme, _, key = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if scheme != "Session":
            return None
        user = get_user_model()._default_manager.filter(email=key).first()
        if user is None:
            raise AuthenticationFailed("unknown session")
        return (user, key)


def _who(request: Request) -> Response:
    return Response(
        {
            "email": getattr(request.user, "email", None),
            "auth": type(request.successful_authenticator).__name__,
        }
    )


class ProjectView(APIView):
    """A project view with DRF's own exception handling (the farm's problem handler answers
    every authentication failure with 401; a project's answers what DRF decides)."""

    def get_exception_handler(self) -> Any:
        return exception_handler


class JwtThenTenancy(ProjectView):
    authentication_classes = [JWTAuthentication, SessionHeaderAuthentication, TenancyAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        return _who(request)


class TenancyThenJwt(JwtThenTenancy):
    authentication_classes = [TenancyAuthentication, JWTAuthentication, SessionHeaderAuthentication]


class SessionOnly(ProjectView):
    authentication_classes = [SessionAuthentication]
    permission_classes = [IsAuthenticated]

    def get(self, request: Request) -> Response:
        return _who(request)


class TenancyThenSession(SessionOnly):
    authentication_classes = [TenancyAuthentication, SessionAuthentication]


def _call(view: type[APIView], authorization: str | None) -> Any:
    headers = {} if authorization is None else {"Authorization": authorization}
    request = RequestFactory().get("/projects/", headers=headers)
    middleware = TenancyMiddleware(lambda r: HttpResponse())
    middleware.process_request(request)
    handler = view.as_view()
    refused = middleware.process_view(request, handler, (), {})
    response = refused if refused is not None else handler(request)
    response.render() if hasattr(response, "render") else None
    return response


@mutation(
    "tenancy/middleware.py",
    find="        if not ours and not claims_every_header(view_func):",
    replace="        if False:",
)
@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "Session 4f3c2b1a",
        "Basic dXNlcjpwdw==",
        "Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b",
    ],
)
def test_a_foreign_authorization_header_reaches_the_project_untouched(authorization):
    """A credential the toolkit did not issue is not the toolkit's to refuse: no 401, nothing
    recorded, the header still there for the project's own authentication.

    Mutation: judge every header on every route (as before) → the middleware answers 401.
    """
    request, response = _process(authorization)
    assert response is None
    assert request.META["HTTP_AUTHORIZATION"] == authorization
    assert request.headers["Authorization"] == authorization
    assert request.authentication_failure is None  # type: ignore[attr-defined]
    assert not request.tenant.is_resolved  # type: ignore[attr-defined]


def test_a_toolkit_token_is_still_judged_on_the_project_routes():
    """A ``ck_pat_`` token is the toolkit's wherever it is sent: an unknown one is a 401."""
    _, response = _process("Bearer ck_pat_" + "x" * 43)
    assert response is not None and response.status_code == 401


@mutation(
    "tenancy/middleware.py",
    find="        _take_off_header(request, header)\n",
    replace="\n",
)
@pytest.mark.parametrize(
    "view", [JwtThenTenancy, TenancyThenJwt], ids=["jwt-first", "tenancy-first"]
)
def test_a_toolkit_token_on_a_project_view_in_either_order(view):
    """simplejwt listed before ``TenancyAuthentication`` would refuse a Cluck token it cannot
    decode; the token is off the header once resolved, so it never sees it.

    Mutation: leave the resolved token on the header → simplejwt refuses it (401, jwt-first).
    """
    membership = MembershipFactory.create()
    response = _call(view, f"Bearer {bearer_for(membership)}")
    assert response.status_code == 200, response.content
    assert response.data == {"email": membership.user.email, "auth": "TenancyAuthentication"}


@pytest.mark.parametrize(
    "view", [JwtThenTenancy, TenancyThenJwt], ids=["jwt-first", "tenancy-first"]
)
def test_the_project_logins_keep_working_beside_the_toolkit(view):
    user = MembershipFactory.create().user
    jwt = _call(view, f"Bearer {JWT.for_user(user)}")
    assert jwt.status_code == 200 and jwt.data["auth"] == "JWTAuthentication"
    session = _call(view, f"Session {user.email}")
    assert session.status_code == 200 and session.data["auth"] == "SessionHeaderAuthentication"
    refused = _call(view, "Session nobody@example.com")
    assert refused.status_code == 401  # the project's own refusal, not the toolkit's


@mutation(
    "tenancy/drf_authentication.py",
    find="        if others:",
    replace="        if False:",
)
def test_listed_first_it_does_not_turn_the_projects_403s_into_401s():
    """DRF answers a missing credential with the first class's challenge: listed first,
    ``TenancyAuthentication`` speaks for the project's classes.

    Mutation: always challenge for a bearer → the session-only view's 403 becomes a 401.
    """
    before = _call(SessionOnly, None)
    after = _call(TenancyThenSession, None)
    assert (before.status_code, after.status_code) == (403, 403)
    assert "WWW-Authenticate" not in after
    jwt_first = _call(JwtThenTenancy, None)
    tenancy_first = _call(TenancyThenJwt, None)
    assert jwt_first.status_code == tenancy_first.status_code == 401
    assert jwt_first["WWW-Authenticate"] == tenancy_first["WWW-Authenticate"]


class ProjectTenancyMiddleware(TenancyMiddleware):
    """A project's subclass (e.g. to log); installed in place of the toolkit's."""


@mutation(
    "tenancy/checks.py",
    find="        if isinstance(installed, type) and issubclass(installed, base):",
    replace="        if False:",
)
def test_the_checks_accept_a_subclass_of_the_middleware():
    """Mutation: compare dotted paths only → tenancy.E001 and mcp_tools.E004 fire."""
    from django.conf import settings

    subclass = f"{__name__}.ProjectTenancyMiddleware"
    middleware = [
        subclass if entry == "tenancy.middleware.TenancyMiddleware" else entry
        for entry in settings.MIDDLEWARE
    ]
    with override_settings(MIDDLEWARE=middleware):
        ids = {message.id for message in checks.run_checks()}
    assert not ids & {"tenancy.E001", "tenancy.E002", "mcp_tools.E003", "mcp_tools.E004"}
