"""``mcp_tools`` tables: the one-time ledger of request states and the task store.

Both hold what every replica must agree on (a request state redeemed on one replica is refused
on all; a task created on one is answered by any), so they live in the database, never in
process memory. ``manage.py purge_mcp_tools`` sweeps expired rows.
"""

from __future__ import annotations

from django.db import models


class RequestStateRedemption(models.Model):
    """A redeemed request state (its nonce): a second redemption is a replay."""

    nonce = models.CharField(max_length=64, primary_key=True)
    # Kept until the state itself would have expired; after that its signature refuses it.
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "mcp_tools_request_state_redemption"


class TaskStatus(models.TextChoices):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_STATUSES = (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)


class TaskRecord(models.Model):
    """One long-running operation, owned by one actor of one tenant.

    Protocol-neutral: ``operation`` names the work (an MCP tool, also behind an A2A skill),
    ``result`` and ``error`` are MCP's JSON, and each protocol's projection (``mcp_tools.tasks``,
    ``a2a_tools.rpc.task_from_view``) turns a row into its wire shapes.
    """

    task_id = models.CharField(max_length=64, primary_key=True)
    tenant_key = models.CharField(max_length=64)
    owner_key = models.CharField(max_length=64)
    operation = models.CharField(max_length=200)
    arguments = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=TaskStatus.choices)
    status_message = models.CharField(max_length=500, blank=True, default="")
    result = models.JSONField(null=True)
    error = models.JSONField(null=True)
    # Input the task waits for (``{key: request}``) and the answers it already has.
    input_requests = models.JSONField(null=True)
    answers = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    expires_at = models.DateTimeField(db_index=True)
    # A running task renews its lease; past it, the worker is presumed lost (task failed).
    lease_expires_at = models.DateTimeField(null=True)
    request_id = models.CharField(max_length=64, blank=True, default="")
    # The conversation the task belongs to, for a protocol that has one (A2A's ``contextId``);
    # empty for MCP tasks.
    context_id = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        db_table = "mcp_tools_task"
        indexes = [models.Index(fields=["tenant_key", "owner_key"], name="mcp_task_owner")]


class ChangeEvent(models.Model):
    """One change a ``subscriptions/listen`` stream may announce (``mcp_tools.notifications``).

    Written by whichever replica saw the change, read by every replica's poller, so a listener
    hears it wherever its stream is open. ``tenant_key`` empty: a change for every tenant (a
    tool list that changed with a deployment).
    """

    tenant_key = models.CharField(max_length=64, blank=True, default="")
    # The notification method: notifications/resources/updated, …/tools/list_changed, …
    method = models.CharField(max_length=64)
    uri = models.CharField(max_length=2048, blank=True, default="")
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "mcp_tools_change_event"


class Listener(models.Model):
    """An open ``subscriptions/listen`` stream, counted against its member's bound.

    Its replica renews ``seen_at`` while the stream is open and deletes the row when it ends;
    a row not renewed for long (its replica died) no longer counts.
    """

    listener_id = models.CharField(max_length=64, primary_key=True)
    tenant_key = models.CharField(max_length=64)
    owner_key = models.CharField(max_length=64)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "mcp_tools_listener"
        indexes = [models.Index(fields=["tenant_key", "owner_key"], name="mcp_listener_owner")]
