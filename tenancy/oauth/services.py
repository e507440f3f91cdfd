"""Writes and reads on ``ClientAuthorization``: create on approval, revoke, list the live ones."""

from __future__ import annotations

import hashlib
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from tenancy.members import related_paths
from tenancy.oauth.models import AccessTokenBinding, ClientAuthorization, RefreshTokenBinding


def code_digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def authorization_revoke(*, authorization: ClientAuthorization) -> None:
    """End ``authorization``: its refresh tokens are revoked and its access tokens deleted.

    The next call with any of them is a 401; the client must send its user through the
    consent page again.
    """
    with transaction.atomic():
        now = timezone.now()
        ClientAuthorization.objects.filter(pk=authorization.pk, revoked_at__isnull=True).update(
            revoked_at=now
        )
        authorization.revoked_at = authorization.revoked_at or now
        refresh_model = get_refresh_token_model()
        for refresh_token in refresh_model.objects.filter(
            tenancy_binding__authorization=authorization, revoked__isnull=True
        ):
            refresh_token.revoke()
        get_access_token_model().objects.filter(
            tenancy_binding__authorization=authorization
        ).delete()


def live_authorizations(**filters: Any) -> QuerySet[ClientAuthorization]:
    """Approvals that still hold a usable token, newest first (``filters`` narrow them)."""
    now = timezone.now()
    live_refresh = RefreshTokenBinding.objects.filter(
        authorization=OuterRef("pk"), refresh_token__revoked__isnull=True
    )
    live_access = AccessTokenBinding.objects.filter(
        authorization=OuterRef("pk"), access_token__expires__gt=now
    )
    return (
        ClientAuthorization.objects.filter(revoked_at__isnull=True, **filters)
        .filter(Q(Exists(live_refresh)) | Q(Exists(live_access)))
        .select_related("application", *related_paths("membership"))
        .order_by("-created_at", "-pk")
    )
