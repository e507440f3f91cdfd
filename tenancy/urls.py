"""``include("tenancy.urls")``: login, logout, me and personal access tokens.

Route names are ``auth-login``, ``auth-logout``, ``me``, ``me-token-list`` and
``me-token-revoke`` (and, with ``tenancy.oauth`` installed, ``me-authorization-list`` and
``me-authorization-revoke``); the credential views carry their markers (never replayed, superseded
credentials accepted for logout, ambient bearer ignored for login).
"""

from django.apps import apps
from django.urls import path

from tenancy import api

urlpatterns = [
    path("auth/login/", api.LoginApi.as_view(), name="auth-login"),
    path("auth/logout/", api.LogoutApi.as_view(), name="auth-logout"),
    path("me/", api.MeApi.as_view(), name="me"),
    path("me/tokens/", api.TokenListCreateApi.as_view(), name="me-token-list"),
    path("me/tokens/<int:token_id>/", api.TokenRevokeApi.as_view(), name="me-token-revoke"),
]

if apps.is_installed("tenancy.oauth"):
    # The OAuth clients this member authorized (tenancy.oauth): list, revoke.
    from tenancy.oauth import api as oauth_api

    urlpatterns += [
        path(
            "me/authorizations/",
            oauth_api.AuthorizationListApi.as_view(),
            name="me-authorization-list",
        ),
        path(
            "me/authorizations/<int:authorization_id>/",
            oauth_api.AuthorizationRevokeApi.as_view(),
            name="me-authorization-revoke",
        ),
    ]
