"""Purging applications that client ID metadata documents created and nobody used.

First sight of a client_id URL creates an ``Application`` (``tenancy.oauth.cimd``); one that no
grant, token or approval ever referred to is the trace of a probe, not of a client. Those older
than ``TENANCY_OAUTH_CIMD_UNUSED_RETENTION_HOURS`` are deleted in bounded batches. A real client
whose row was purged is simply seen for the first time again on its next request.
django-oauth-toolkit's ``clearcimdapplications`` is a different sweep: rows whose cached
document expired and that hold no *live* token.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_id_token_model,
    get_refresh_token_model,
)

from tenancy.oauth import conf
from tenancy.oauth.models import ClientAuthorization

BATCH_SIZE = 500
MAX_BATCHES = 20


@dataclass(frozen=True)
class PurgeResult:
    deleted: int
    # True when the batch limit stopped the sweep with eligible rows left for the next run.
    more: bool


def unused_cimd_applications(*, cutoff: datetime, using: str = "default") -> QuerySet[Any]:
    """CIMD-created applications created before ``cutoff`` that nothing ever referred to."""
    Application = get_application_model()
    queryset = Application.objects.using(using).filter(
        registration_source=Application.RegistrationSource.CIMD, created__lt=cutoff
    )
    for model in (
        get_grant_model(),
        get_access_token_model(),
        get_refresh_token_model(),
        get_id_token_model(),
        ClientAuthorization,
    ):
        queryset = queryset.exclude(
            Exists(model.objects.using(using).filter(application=OuterRef("pk")))
        )
    return queryset


def purge_unused_cimd_applications(
    *,
    now: datetime | None = None,
    retention_hours: float | None = None,
    batch_size: int = BATCH_SIZE,
    max_batches: int = MAX_BATCHES,
    using: str = "default",
) -> PurgeResult:
    """Delete unused CIMD applications older than the retention, oldest first.

    Each batch is locked and its predicate re-stated under the lock, so a grant written for
    one of them meanwhile (its insert checks the foreign key against the locked row) either is
    seen and keeps the row or waits until the row is gone and fails.
    """
    now = now or timezone.now()
    hours = float(
        retention_hours if retention_hours is not None else conf.get("CIMD_UNUSED_RETENTION_HOURS")
    )
    cutoff = now - timedelta(hours=hours)
    deleted = 0
    for _ in range(max_batches):
        ids = list(
            unused_cimd_applications(cutoff=cutoff, using=using)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch_size]
        )
        if not ids:
            return PurgeResult(deleted=deleted, more=False)
        with transaction.atomic(using=using):
            Application = get_application_model()
            locked = list(
                Application.objects.using(using)
                .select_for_update()
                .filter(pk__in=ids)
                .values_list("pk", flat=True)
            )
            _, per_model = (
                unused_cimd_applications(cutoff=cutoff, using=using).filter(pk__in=locked).delete()
            )
        deleted += per_model.get(Application._meta.label, 0)
        if len(ids) < batch_size:
            return PurgeResult(deleted=deleted, more=False)
    more = unused_cimd_applications(cutoff=cutoff, using=using).exists()
    return PurgeResult(deleted=deleted, more=more)
