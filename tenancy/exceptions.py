"""Errors raised by ``tenancy``. Codes are public API: add, never rename."""

from __future__ import annotations

from django.utils.functional import lazy
from rest_framework import status
from rest_framework.exceptions import APIException, Throttled


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


class TokenAudienceError(AuthenticationFailedError):
    """An OAuth access token issued for another resource (RFC 8707), or presented elsewhere."""

    default_detail = "This access token was not issued for this resource."
    default_code = "Auth.InvalidAudience"


class UnknownSigningKeyError(AuthenticationFailedError):
    """An external JWT signed with a key its issuer's key set does not hold
    (``tenancy.idp.external_jwt``), even after fetching the set again."""

    default_detail = "This access token was signed with a key its issuer does not publish."
    default_code = "Auth.UnknownSigningKey"


class SigningKeysUnavailableError(AuthenticationFailedError):
    """An external JWT arrived before its issuer's key set was fetched (``tenancy.idp.jwks``
    fetches it in the background: no request waits on the issuer)."""

    default_detail = "The token issuer's signing keys are not available yet. Retry shortly."
    default_code = "Auth.SigningKeysUnavailable"


class AccountDisabledError(AuthenticationFailedError):
    default_detail = "This account is disabled."
    default_code = "Auth.AccountDisabled"


def _noun() -> str:
    # Read when the message is rendered, so TENANCY_TENANT_NOUN (and override_settings) apply.
    from tenancy import conf

    return str(conf.get("TENANT_NOUN"))


def _suspended() -> str:
    return f"This {_noun()} is suspended."


def _invalid_credentials() -> str:
    return f"The {_noun()} code, email or password is incorrect."


class TenantSuspendedError(AuthenticationFailedError):
    default_detail = lazy(_suspended, str)()
    default_code = "Auth.TenantSuspended"


class InvalidCredentialsError(AuthenticationFailedError):
    """Wrong password, unknown email, unknown tenant code or no membership: one answer for all,
    so login never confirms that a tenant code or an account exists."""

    default_detail = lazy(_invalid_credentials, str)()
    default_code = "Auth.InvalidCredentials"


class NotAuthenticatedError(APIException):
    status_code = status.HTTP_401_UNAUTHORIZED
    default_detail = "Authentication credentials were not provided."
    default_code = "Auth.NotAuthenticated"


class LoginRateLimitedError(Throttled):
    """Too many logins from one client address (``TENANCY_LOGIN_RATE``): 429 and
    ``Retry-After`` under any DRF exception handler, the project's or DRF's own."""

    default_detail = "Too many sign-in attempts. Retry shortly."
    default_code = "Http.RateLimited"


class TokenNotFoundError(APIException):
    status_code = status.HTTP_404_NOT_FOUND
    default_detail = "No such token."
    default_code = "Token.NotFound"


class TokenLimitReachedError(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "You hold the maximum number of live personal tokens. Revoke one first."
    default_code = "Token.LimitReached"
