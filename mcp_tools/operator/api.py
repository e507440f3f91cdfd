"""REST views for a tenant's admins: their tenant's call audit and its MCP switches.

``GET  <prefix>/audit/``: the tenant's ``CallAudit`` rows, newest first, paginated by a keyset
cursor (``?cursor=`` the ``next`` of the previous page; ``?limit=`` 1–200, default 50) and
filterable by ``actor``, ``tool``, ``outcome``, ``protocol``, ``since`` and ``until`` (ISO 8601).
``GET/PUT <prefix>/switches/``: read-only mode and disabled tools (``mcp_tools.operator.switches``).

Every query is by the caller's own tenant key, taken from the resolved request; nothing a client
sends names a tenant, so no filter can reach another tenant's rows. Admitted by
``MCP_TOOLS_OPERATOR_POLICY`` (default: the highest-ranked role(s) of ``TENANCY_ROLES``).
"""

from __future__ import annotations

import functools
from typing import Any, Final

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils.dateparse import parse_datetime
from django.utils.module_loading import import_string
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from mcp_tools import conf
from mcp_tools.models import CallAudit, TenantSwitches
from mcp_tools.operator import switches
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy import Policy, active_roles, evaluate
from tenancy.drf_authentication import TenancyAuthentication
from tenancy.permissions import request_actor
from tenancy.problem_handler import ProblemsByDefault

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
MAX_DISABLED_TOOLS: Final = 500


@functools.lru_cache(maxsize=4)
def _configured_policy(path: str) -> Policy:
    policy = import_string(path)
    if not isinstance(policy, Policy):
        raise ImproperlyConfigured(f"MCP_TOOLS_OPERATOR_POLICY {path!r} is not a tenancy Policy")
    return policy


def operator_policy() -> Policy:
    """The policy admitted to these views (``MCP_TOOLS_OPERATOR_POLICY``)."""
    path = conf.get("OPERATOR_POLICY")
    if path:
        return _configured_policy(str(path))
    roles = [role for role in active_roles()]
    top = max(role.rank for role in roles)
    return Policy("TenantOperator", {role.label for role in roles if role.rank == top})


class IsTenantOperator(BasePermission):
    """A resolved member of the request's tenant admitted by the operator policy."""

    def has_permission(self, request: Request, view: Any) -> bool:
        tenant = getattr(request, "tenant", None)
        if tenant is None or not getattr(tenant, "is_resolved", False):
            return False
        return evaluate(operator_policy(), request_actor(request))


def _tenant_key(request: Request) -> str:
    return str(request.tenant.id)  # type: ignore[attr-defined]  # resolved: IsTenantOperator


class AuditRowSerializer(serializers.ModelSerializer[CallAudit]):
    class Meta:
        model = CallAudit
        fields = [
            "id",
            "at",
            "actor_id",
            "role",
            "token_id",
            "credential",
            "issuer",
            "subject",
            "tool",
            "protocol",
            "era",
            "protocol_version",
            "outcome",
            "error_code",
            "replayed",
            "idempotency_key",
            "duration_ms",
            "request_id",
            "arguments",
        ]


def _int_param(request: Request, name: str, *, default: int | None, low: int, high: int) -> Any:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # ASCII only: str.isdigit() also admits "５" and "²" (int() reads the first as 5).
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ValidationError({name: f"an integer from {low} to {high}"}, code="invalid")
    return int(raw)


def _text_param(request: Request, name: str) -> str | None:
    """``name``'s value; a 400 (``string_contains_nul``…) for text no column holds: compared
    with one in SQL it would be a database error, a 500."""
    raw = request.query_params.get(name)
    if raw is None:
        return None
    problems = _jsonrpc.unstorable_strings(raw)
    if problems:
        raise ValidationError({name: problems[0]["message"]}, code=problems[0]["code"])
    return raw


def _time_param(request: Request, name: str) -> Any:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise ValidationError({name: "an ISO 8601 time with its offset"}, code="invalid")
    return value


# Query parameter -> column (exact match).
_FILTERS: Final = {
    "actor": "actor_id",
    "tool": "tool",
    "outcome": "outcome",
    "protocol": "protocol",
}


class AuditPageSerializer(serializers.Serializer[Any]):
    """One page of the audit, newest first; ``next`` is the ``cursor`` of the next page."""

    items = AuditRowSerializer(many=True)
    next = serializers.CharField(allow_null=True)


class CallAuditListApi(ProblemsByDefault, APIView):
    """The caller's tenant's stored call audit (newest first)."""

    # For schema generators (drf-spectacular): what a page of the audit reads like.
    serializer_class = AuditPageSerializer

    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantOperator]

    def get(self, request: Request) -> Response:
        limit = _int_param(request, "limit", default=DEFAULT_LIMIT, low=1, high=MAX_LIMIT)
        cursor = _int_param(request, "cursor", default=None, low=1, high=2**63 - 1)
        rows = CallAudit.objects.filter(tenant_key=_tenant_key(request))
        for param, field in _FILTERS.items():
            value = _text_param(request, param)
            if value is not None:
                rows = rows.filter(**{field: value[:128]})
        since, until = _time_param(request, "since"), _time_param(request, "until")
        if since is not None:
            rows = rows.filter(at__gte=since)
        if until is not None:
            rows = rows.filter(at__lt=until)
        if cursor is not None:
            rows = rows.filter(id__lt=cursor)
        page = list(rows.order_by("-id")[: limit + 1])
        more = len(page) > limit
        page = page[:limit]
        return Response(
            {
                "items": AuditRowSerializer(page, many=True).data,
                "next": str(page[-1].id) if more and page else None,
            }
        )


class SwitchesInputSerializer(serializers.Serializer[Any]):
    readOnly = serializers.BooleanField(required=False)
    disabledTools = serializers.ListField(
        child=serializers.CharField(max_length=128),
        max_length=MAX_DISABLED_TOOLS,
        required=False,
    )


def _switches_body(row: TenantSwitches | None) -> dict[str, Any]:
    return {
        "readOnly": bool(row and row.read_only),
        "disabledTools": sorted(row.disabled_tools) if row else [],
    }


class TenantSwitchesApi(ProblemsByDefault, APIView):
    """The caller's tenant's MCP switches: read-only mode and disabled tools. A ``PUT`` is a
    write like any other under ``/api``: it carries an ``Idempotency-Key``."""

    # For schema generators (drf-spectacular): the switches' shape, read and written.
    serializer_class = SwitchesInputSerializer

    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantOperator]

    def get(self, request: Request) -> Response:
        row = TenantSwitches.objects.filter(tenant_key=_tenant_key(request)).first()
        return Response(_switches_body(row))

    def put(self, request: Request) -> Response:
        data = SwitchesInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = {}
        if "readOnly" in data.validated_data:
            values["read_only"] = data.validated_data["readOnly"]
        if "disabledTools" in data.validated_data:
            values["disabled_tools"] = sorted(set(data.validated_data["disabledTools"]))
        tenant_key = _tenant_key(request)
        row, _ = TenantSwitches.objects.update_or_create(tenant_key=tenant_key, defaults=values)
        transaction.on_commit(functools.partial(switches.forget, tenant_key))
        return Response(_switches_body(row))
