"""What binds an OAuth grant to ``tenancy``: the user's approval for one membership.

django-oauth-toolkit owns applications, grants and tokens. A ``ClientAuthorization`` is one
approval on the consent page — this membership lets this client act with these scopes — and
records the membership's credential epoch at that moment. Every access and refresh token
issued under it is bound to it, so a token resolves tenant, actor and row scope exactly as a
personal token of that membership would, and dies with the epoch.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone
from oauth2_provider.settings import oauth2_settings

from tenancy import conf


class ClientAuthorization(models.Model):
    membership = models.ForeignKey(
        conf.membership_model_label(),
        on_delete=models.CASCADE,
        related_name="client_authorizations",
    )
    application = models.ForeignKey(
        oauth2_settings.APPLICATION_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # The membership's epoch when the user approved: a role change, password change or
    # suspension since then ends every token of this authorization.
    credential_epoch = models.PositiveIntegerField()
    scope = models.TextField()
    resource = models.TextField()
    # SHA-256 of the authorization code; kept after the toolkit deletes the grant so that a
    # replayed code is recognised and the tokens it produced are revoked (RFC 6749 §4.1.2).
    code_digest = models.CharField(max_length=64, unique=True)
    code_redeemed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["membership", "revoked_at"], name="tenancy_oauth_member_live")
        ]

    def __str__(self) -> str:
        return f"{self.application} for {self.membership}"

    @property
    def scopes(self) -> list[str]:
        return self.scope.split()


class AccessTokenBinding(models.Model):
    """This access token was issued under this authorization (deleted with the token)."""

    access_token = models.OneToOneField(
        oauth2_settings.ACCESS_TOKEN_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="tenancy_binding",
    )
    authorization = models.ForeignKey(
        ClientAuthorization, on_delete=models.CASCADE, related_name="access_bindings"
    )


class RefreshTokenBinding(models.Model):
    """This refresh token was issued under this authorization."""

    refresh_token = models.OneToOneField(
        oauth2_settings.REFRESH_TOKEN_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="tenancy_binding",
    )
    authorization = models.ForeignKey(
        ClientAuthorization, on_delete=models.CASCADE, related_name="refresh_bindings"
    )
