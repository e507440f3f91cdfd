"""The retention of stored tasks: what ``purge_expired`` (and its alias ``purge_a2a_tasks``)
sweeps from ``a2a_tools_tasks``, registered by ``A2AToolsConfig.ready()``."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import QuerySet

from a2a_tools import conf
from a2a_tools.models import A2ATask
from mcp_tools.management.retention import Expiring, describe


def retention() -> timedelta:
    return timedelta(hours=float(conf.get("TASK_RETENTION_HOURS")))


def expired(now: datetime) -> QuerySet[A2ATask]:
    """Tasks last updated before the retention (``A2A_TOOLS_TASK_RETENTION_HOURS``) at ``now``."""
    return A2ATask.objects.filter(updated_at__lt=now - retention())


EXPIRING = Expiring(
    A2ATask._meta.db_table,
    expired,
    lambda: f"{describe(retention())}, A2A_TOOLS_TASK_RETENTION_HOURS",
)
