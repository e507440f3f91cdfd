"""django-oauth-toolkit's request validator, bound to ``tenancy`` (``OAUTH2_VALIDATOR_CLASS``).

The toolkit does the OAuth; these overrides add what a grant means here:

- the consent page passes the chosen membership as a credential; the authorization code is
  recorded as a ``ClientAuthorization`` of that membership (its epoch, scopes and the one
  resource this server protects);
- every access and refresh token issued is bound to that authorization;
- exchanging a code or a refresh token fails once the membership's epoch moved on, the
  membership, user or tenant is disabled, or the authorization was revoked;
- a code presented a second time revokes every token issued from it (RFC 6749 §4.1.2).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.utils import timezone
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from tenancy.exceptions import AuthenticationFailedError
from tenancy.members import memberships, related_paths, with_user_and_tenant
from tenancy.oauth.models import AccessTokenBinding, ClientAuthorization, RefreshTokenBinding
from tenancy.oauth.services import authorization_revoke, code_digest
from tenancy.tokens import ensure_live

security_logger = logging.getLogger("tenancy.security")

# Set on the oauthlib request by the consent view (through the authorization credentials).
MEMBERSHIP_CREDENTIAL = "tenancy_membership_id"


def _live(authorization: ClientAuthorization) -> bool:
    if authorization.revoked_at is not None:
        return False
    try:
        ensure_live(authorization.membership, credential_epoch=authorization.credential_epoch)
    except AuthenticationFailedError as error:
        security_logger.info("OAuth grant refused: %s", error.default_code)
        return False
    return True


def _authorization_for_code(code: str) -> ClientAuthorization | None:
    return (
        ClientAuthorization.objects.select_related(*related_paths("membership"))
        .filter(code_digest=code_digest(code))
        .first()
    )


# RFC 8252 §7.3 / RFC 9700 §2.1: plain http only back to this machine.
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class TenancyOAuth2Validator(OAuth2Validator):
    def validate_redirect_uri(
        self, client_id: Any, redirect_uri: str, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        # A registered http:// redirect to another host would carry codes in the clear.
        parts = urlsplit(redirect_uri)
        if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return False
        return bool(
            super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)
        )

    def _create_authorization_code(self, request: Any, code: Any, expires: Any = None) -> Any:
        membership_id = getattr(request, MEMBERSHIP_CREDENTIAL, None)
        membership = (
            with_user_and_tenant(memberships()).filter(pk=membership_id).first()
            if membership_id is not None
            else None
        )
        # Only the consent page issues codes, and only for a membership of the signed-in user.
        if membership is None or membership.get_user().pk != getattr(request.user, "pk", None):
            raise errors.AccessDeniedError(request=request)
        grant = super()._create_authorization_code(request, code, expires)
        ClientAuthorization.objects.create(
            membership=membership,
            application=request.client,
            credential_epoch=membership.credential_epoch,
            scope=grant.scope,
            resource=" ".join(grant.resource or []),
            code_digest=code_digest(code["code"]),
        )
        return grant

    def validate_code(
        self, client_id: Any, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        authorization = _authorization_for_code(code)
        if not super().validate_code(client_id, code, client, request, *args, **kwargs):
            if authorization is not None and authorization.code_redeemed_at is not None:
                # The code was exchanged already: whoever presents it again may have stolen
                # it, so nothing it produced may live on.
                security_logger.warning("authorization code replayed; its tokens are revoked")
                authorization_revoke(authorization=authorization)
            return False
        if authorization is None or not _live(authorization):
            return False
        request.tenancy_authorization = authorization
        return True

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            return False
        binding = (
            RefreshTokenBinding.objects.select_related(*related_paths("authorization__membership"))
            .filter(refresh_token=request.refresh_token_instance)
            .first()
        )
        if binding is None or not _live(binding.authorization):
            return False
        request.tenancy_authorization = binding.authorization
        return True

    def _create_access_token(
        self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None
    ) -> Any:
        authorization: ClientAuthorization | None = getattr(request, "tenancy_authorization", None)
        if authorization is None:  # only code and refresh grants reach here, both validated
            raise errors.InvalidGrantError(request=request)
        access_token = super()._create_access_token(expires, request, token, source_refresh_token)
        AccessTokenBinding.objects.create(access_token=access_token, authorization=authorization)
        if authorization.code_redeemed_at is None:
            authorization.code_redeemed_at = timezone.now()
            ClientAuthorization.objects.filter(pk=authorization.pk).update(
                code_redeemed_at=authorization.code_redeemed_at
            )
        return access_token

    def _create_refresh_token(
        self, request: Any, refresh_token_code: Any, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        RefreshTokenBinding.objects.create(
            refresh_token=refresh_token, authorization=request.tenancy_authorization
        )
        return refresh_token
