"""Errors raised by ``tenancy``. Codes are public API: add, never rename."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException


class TenancyError(Exception):
    """Base for programming errors in the identity bridge (never shown to a client)."""


class ReassignmentError(TenancyError):
    """A request-scoped identity value was resolved a second time with a different value."""


class TenantNotResolvedError(TenancyError):
    """A tenant-owned queryset was evaluated without a resolved tenant."""


class AuthenticationFailedError(APIException):
    """A bearer credential was presented and is not (or no longer) valid.

    Always answered with 401 and ``WWW-Authenticate: Bearer error="invalid_token"``.
    """

    status_code = status.HTTP_401_UNAUTHORIZED
    default_detail = "The access token is invalid, expired or revoked. Sign in again."
    default_code = "Auth.InvalidToken"


class CredentialsSupersededError(AuthenticationFailedError):
    default_detail = "Your credentials changed since this token was issued. Sign in again."
    default_code = "Auth.CredentialsSuperseded"


class AccountDisabledError(AuthenticationFailedError):
    default_detail = "This account is disabled."
    default_code = "Auth.AccountDisabled"


class FarmSuspendedError(AuthenticationFailedError):
    default_detail = "This farm is suspended."
    default_code = "Auth.FarmSuspended"


class UnknownFarmCodeError(AuthenticationFailedError):
    default_detail = "No farm has this code."
    default_code = "Auth.UnknownFarmCode"


class InvalidCredentialsError(AuthenticationFailedError):
    default_detail = "The email or password is incorrect."
    default_code = "Auth.InvalidCredentials"


class NotAuthenticatedError(APIException):
    status_code = status.HTTP_401_UNAUTHORIZED
    default_detail = "Authentication credentials were not provided."
    default_code = "Auth.NotAuthenticated"


class PermissionDeniedError(APIException):
    status_code = status.HTTP_403_FORBIDDEN
    default_detail = "Your role does not allow this action."
    default_code = "Auth.Forbidden"


class TokenNotFoundError(APIException):
    status_code = status.HTTP_404_NOT_FOUND
    default_detail = "No such token."
    default_code = "Token.NotFound"
