"""``mcp_tools`` tables: the one-time ledger of request states, the task store, and the
mailbox of server-to-client requests (2025-11-25) with the capabilities members declared.

All hold what every replica must agree on (a request state redeemed on one replica is refused
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


class ClientRequest(models.Model):
    """A request the server sent a client on a ``tools/call`` response stream (2025-11-25),
    waiting for the client's answer, which arrives as a separate POST on any replica
    (``mcp_tools.mailbox``). Bound to the tenant, the member, the tool and the call's id;
    answered once."""

    request_id = models.CharField(max_length=64, primary_key=True)
    tenant_key = models.CharField(max_length=64)
    owner_key = models.CharField(max_length=64)
    tool = models.CharField(max_length=200)
    call_id = models.CharField(max_length=200)
    method = models.CharField(max_length=64)
    # The client's JSON-RPC response: {"result": …} or {"error": …}; null until it arrives.
    answer = models.JSONField(null=True)
    answered_at = models.DateTimeField(null=True)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "mcp_tools_client_request"


class ClientDeclaration(models.Model):
    """The client capabilities a member declared at their last ``initialize`` (2025-11-25):
    whether a later ``tools/call`` may ask that member's client for input on its stream."""

    tenant_key = models.CharField(max_length=64)
    owner_key = models.CharField(max_length=64)
    capabilities = models.JSONField(default=dict)
    declared_at = models.DateTimeField()

    class Meta:
        db_table = "mcp_tools_client_declaration"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant_key", "owner_key"], name="mcp_declaration_owner"
            )
        ]
