"""What expires in mcp_tools, and in tenancy and idempotency when they are installed (they
cannot reach the registry: ``mcp_tools.management.retention``). Registered by ``ready()``."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.apps import apps
from django.db.models import QuerySet

from mcp_tools import conf
from mcp_tools.management.retention import Expiring, describe, register


def _in_seconds(name: str) -> dt.timedelta:
    return dt.timedelta(seconds=float(conf.get(name)))


def audit_rows(cutoff: dt.datetime) -> QuerySet[Any]:
    from mcp_tools.models import CallAudit

    return CallAudit.objects.filter(at__lt=cutoff)


def audit_age() -> dt.timedelta:
    return dt.timedelta(days=float(conf.get("AUDIT_RETENTION_DAYS")))


def _own() -> list[Expiring]:
    from mcp_tools.models import (
        ChangeEvent,
        ClientRequest,
        Listener,
        RequestStateRedemption,
        TaskRecord,
    )
    from mcp_tools.subscriptions.bus import STALE_AFTER

    change_age = "CHANGE_EVENT_RETENTION_SECONDS"
    return [
        Expiring(
            "mcp_tools_task",
            lambda now: TaskRecord.objects.filter(expires_at__lte=now),
            lambda: "its expires_at (the task's ttl)",
        ),
        Expiring(
            "mcp_tools_request_state_redemption",
            lambda now: RequestStateRedemption.objects.filter(expires_at__lt=now),
            lambda: "its state's expires_at",
        ),
        Expiring(
            "mcp_tools_client_request",
            lambda now: ClientRequest.objects.filter(expires_at__lt=now),
            lambda: "its expires_at",
        ),
        Expiring(
            "mcp_tools_change_event",
            lambda now: ChangeEvent.objects.filter(created_at__lt=now - _in_seconds(change_age)),
            lambda: f"{describe(_in_seconds(change_age))}, MCP_TOOLS_{change_age}",
        ),
        Expiring(
            "mcp_tools_listener",
            lambda now: Listener.objects.filter(seen_at__lt=now - STALE_AFTER),
            lambda: f"{describe(STALE_AFTER)} unseen",
        ),
        Expiring(
            "mcp_tools_call_audit",
            lambda now: audit_rows(now - audit_age()),
            lambda: f"{describe(audit_age())}, MCP_TOOLS_AUDIT_RETENTION_DAYS",
        ),
    ]


def _idempotency() -> Expiring:
    from idempotency import conf as idempotency_conf
    from idempotency.models import IdempotencyRecord
    from idempotency.purge import expired, retention_cutoff

    def age() -> str:
        hours = dt.timedelta(hours=float(idempotency_conf.get("RETENTION_HOURS")))
        return f"{describe(hours)}, IDEMPOTENCY_RETENTION_HOURS"

    return Expiring(
        IdempotencyRecord._meta.db_table,
        lambda now: expired(now=now, cutoff=retention_cutoff(now)),
        age,
    )


def _unused_cimd_clients() -> Expiring:
    from oauth2_provider.models import get_application_model

    from tenancy.oauth import conf as oauth_conf
    from tenancy.oauth.purge import unused_cimd_applications

    def hours() -> dt.timedelta:
        return dt.timedelta(hours=float(oauth_conf.get("CIMD_UNUSED_RETENTION_HOURS")))

    return Expiring(
        get_application_model()._meta.db_table,
        lambda now: unused_cimd_applications(cutoff=now - hours()),
        lambda: f"{describe(hours())} unused, TENANCY_OAUTH_CIMD_UNUSED_RETENTION_HOURS",
    )


def register_installed() -> None:
    """Register mcp_tools' tables, and tenancy's and idempotency's where installed."""
    entries = _own()
    if apps.is_installed("idempotency"):
        entries.append(_idempotency())
    if apps.is_installed("tenancy.oauth"):
        entries.append(_unused_cimd_clients())
    for entry in entries:
        register(entry)
