"""``mcp_tools`` tables: the one-time ledger of request states, the task store, the stored
call audit and the tenants' switches, and the mailbox of server-to-client requests
(2025-11-25) with the capabilities members declared.

All hold what every replica must agree on (a request state redeemed on one replica is refused
on all; a task created on one is answered by any), so they live in the database, never in
process memory. ``manage.py purge_mcp_tools`` sweeps expired rows.
"""

from __future__ import annotations

from typing import Any

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
    ``result`` and ``error`` are MCP's JSON, and each protocol's projection
    (``mcp_tools.methods.tasks``,
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
    # What the task engine's worker needs to run the work again from this row alone (the job it
    # is handed carries the task id, nothing else): the owner's membership (its role and row
    # scope are resolved again when the work starts), the credential's OAuth scopes at
    # acceptance (null: not narrowed), the request's protocol revision and client
    # capabilities, and whether the client can answer input requests.
    membership_key = models.CharField(max_length=64, blank=True, default="")
    scopes = models.JSONField(null=True)
    # What the worker judges the credential by again (``tenancy.tokens.ensure_still_live``):
    # the membership's credential epoch at acceptance and the tenancy token it came with (null:
    # another kind of credential; both null on tasks from before they were kept).
    credential_epoch = models.PositiveIntegerField(null=True)
    token_id = models.BigIntegerField(null=True)
    protocol_version = models.CharField(max_length=32, blank=True, default="")
    capabilities = models.JSONField(null=True)
    can_ask = models.BooleanField(default=False)
    # Runs started (a claim by a worker) and how many are allowed: 1 + the tool's task_retry.
    attempts = models.PositiveSmallIntegerField(default=0)
    max_attempts = models.PositiveSmallIntegerField(default=1)

    class Meta:
        db_table = "mcp_tools_task"
        indexes = [models.Index(fields=["tenant_key", "owner_key"], name="mcp_task_owner")]


class CallAudit(models.Model):
    """One MCP tool call or A2A skill call, as the stored call audit keeps it.

    Plain values, not foreign keys (like idempotency records and tasks): an audit row must
    outlive, and never block the deletion of, the tenant, member or token it names. Argument
    values are kept only where the tool's redaction policy allows (``@tool(audit_arguments=)``);
    by default ``arguments`` is null. Written off the request's path
    (``mcp_tools.observability.audit``).
    """

    id = models.BigAutoField(primary_key=True)
    at = models.DateTimeField(db_index=True)
    tenant_key = models.CharField(max_length=64)
    actor_id = models.CharField(max_length=64, blank=True, default="")
    role = models.CharField(max_length=64, blank=True, default="")
    # The credential: tenancy's token id (a personal or session token) and its kind ("token",
    # "oauth": an OAuth access token, narrowed by scopes; "external_jwt": an external identity
    # provider's token, named by its issuer and subject; "session": none of these).
    token_id = models.BigIntegerField(null=True)
    credential = models.CharField(max_length=16, blank=True, default="")
    issuer = models.CharField(max_length=255, blank=True, default="")
    subject = models.CharField(max_length=255, blank=True, default="")
    tool = models.CharField(max_length=128, blank=True, default="")
    protocol = models.CharField(max_length=8)
    era = models.CharField(max_length=32, blank=True, default="")
    protocol_version = models.CharField(max_length=32, blank=True, default="")
    outcome = models.CharField(max_length=32)
    error_code = models.CharField(max_length=128, blank=True, default="")
    replayed = models.BooleanField(default=False)
    # The idempotency record a write used: ``IdempotencyRecord`` with this tenant, the tool's
    # operation key and this caller key (SHA-256 of the idempotencyKey).
    idempotency_key = models.CharField(max_length=64, blank=True, default="")
    duration_ms = models.FloatField(null=True)
    request_id = models.CharField(max_length=64, blank=True, default="")
    arguments = models.JSONField(null=True)

    class Meta:
        db_table = "mcp_tools_call_audit"
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["tenant_key", "-at"], name="mcp_audit_tenant_at"),
            models.Index(fields=["tenant_key", "tool", "-at"], name="mcp_audit_tenant_tool"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.tenant_key} {self.tool} {self.outcome}"

    def idempotency_record(self) -> Any:
        """The ``IdempotencyRecord`` this call used (``None``: a read, or since purged)."""
        from idempotency.fingerprint import sha256_hex
        from idempotency.models import IdempotencyRecord

        if not self.idempotency_key:
            return None
        return IdempotencyRecord.objects.filter(
            tenant_id=self.tenant_key,
            operation_key=sha256_hex(f"mcp:tool:{self.tool}"),
            caller_key=self.idempotency_key,
        ).first()


class TenantSwitches(models.Model):
    """A tenant's MCP switches, as its admins set them (``mcp_tools.operator.switches``).

    ``read_only``: every write tool is hidden and refused; ``disabled_tools``: these tool names
    are hidden and refused. One row per tenant, created on the first change.
    """

    tenant_key = models.CharField(max_length=64, primary_key=True)
    read_only = models.BooleanField(default=False)
    disabled_tools = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "mcp_tools_tenant_switches"
        verbose_name_plural = "tenant switches"


class ClientRequest(models.Model):
    """A request the server sent a client on a ``tools/call`` response stream (2025-11-25),
    waiting for the client's answer, which arrives as a separate POST on any replica
    (``mcp_tools.asking.mailbox``). Bound to the tenant, the member, the tool and the call's id;
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


class ChangeEvent(models.Model):
    """One change a ``subscriptions/listen`` stream may announce (``mcp_tools.subscriptions.bus``).

    Written by whichever replica saw the change, read by every replica's poller, so a listener
    hears it wherever its stream is open. ``tenant_key`` empty: a change for every tenant (a
    tool list that changed with a deployment).
    """

    tenant_key = models.CharField(max_length=64, blank=True, default="")
    # The notification method: notifications/resources/updated, …/tools/list_changed, …
    method = models.CharField(max_length=64)
    uri = models.CharField(max_length=2048, blank=True, default="")
    # The changed row in tenancy's row-scope terms (empty: none): a stream whose caller's
    # row scope leaves it out does not hear the change (``notify_resource_updated(row=)``).
    row_key = models.CharField(max_length=64, blank=True, default="")
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
