"""Prometheus metrics (``prometheus-client``, the ``metrics`` extra) and the guarded /metrics.

Without ``prometheus-client`` nothing is counted and /metrics is a 404. With it, every process
counts into the default registry; under several server processes set
``PROMETHEUS_MULTIPROC_DIR`` (an empty directory, before the server starts) and /metrics, served
by whichever process, sums them all (prometheus-client's multiprocess mode).

=============================================  =========================================
``mcp_tools_calls_total``                      protocol, tool, outcome, code
``mcp_tools_call_duration_seconds`` (histo.)   protocol, tool, outcome
``mcp_tools_bound_refusals_total``             bound (``concurrency``, ``deadline``)
``mcp_tools_audit_rows_dropped_total``         reason (``queue_full``, ``unstorable``,
                                               ``database``)
``idempotency_outcomes_total``                 outcome (``executed``, ``failed``,
                                               ``replayed``, ``key_reused``, ``in_progress``)
``idempotency_leases_stolen_total``            —
``tenancy_bearer_refusals_total``              reason (tenancy's code)
``tenancy_rate_limit_refusals_total``          group (django-ratelimit group)
=============================================  =========================================

The tenancy and idempotency series come from those apps' signals (``tenancy.bearer_refused``,
``tenancy.rate_limited``, ``idempotency.unit_finished``, ``idempotency.lease_stolen``), which
``connect`` subscribes to; the apps themselves know nothing of Prometheus.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from idempotency import (
    Executed,
    Failure,
    InProgress,
    KeyConflict,
    Replayed,
    lease_stolen,
    unit_finished,
)
from mcp_tools import conf
from tenancy import (
    bearer_refused,
    handles_own_transactions,
    ignores_ambient_credentials,
    rate_limited,
)

try:
    import prometheus_client
except ImportError:  # the "metrics" extra is not installed
    prometheus_client = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from mcp_tools.observability.records import ToolCall

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
# Seconds; a tool call runs from about a millisecond to its deadline (30 s by default).
DURATION_BUCKETS: Final = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    30.0,
)


def available() -> bool:
    """``prometheus-client`` is installed."""
    return prometheus_client is not None


@dataclass(frozen=True)
class _Instruments:
    calls: Any
    duration: Any
    bound_refusals: Any
    audit_rows_dropped: Any
    idempotency_outcomes: Any
    leases_stolen: Any
    bearer_refusals: Any
    rate_limit_refusals: Any


@functools.cache
def instruments() -> _Instruments:
    """The metric objects, made once per process in the default registry."""
    from prometheus_client import Counter, Histogram

    return _Instruments(
        calls=Counter(
            "mcp_tools_calls",
            "Tool calls by tool and outcome (code: the tool error or JSON-RPC error code).",
            ["protocol", "tool", "outcome", "code"],
        ),
        duration=Histogram(
            "mcp_tools_call_duration_seconds",
            "Tool call duration, from the call's arrival to its answer.",
            ["protocol", "tool", "outcome"],
            buckets=DURATION_BUCKETS,
        ),
        bound_refusals=Counter(
            "mcp_tools_bound_refusals",
            "Work refused by a bound: every slot busy (concurrency) or the deadline missed.",
            ["bound"],
        ),
        audit_rows_dropped=Counter(
            "mcp_tools_audit_rows_dropped",
            "Stored call audit rows lost: queue full, refused even alone, or the database down.",
            ["reason"],
        ),
        idempotency_outcomes=Counter(
            "idempotency_outcomes",
            "IdempotentUnit.run outcomes (executed, failed, replayed, key_reused, in_progress).",
            ["outcome"],
        ),
        leases_stolen=Counter(
            "idempotency_leases_stolen",
            "Expired leases taken over by a retry of the same request.",
        ),
        bearer_refusals=Counter(
            "tenancy_bearer_refusals",
            "Bearer tokens refused, by tenancy's reason code.",
            ["reason"],
        ),
        rate_limit_refusals=Counter(
            "tenancy_rate_limit_refusals",
            "Requests refused for their rate, by django-ratelimit group.",
            ["group"],
        ),
    )


# --- samples ------------------------------------------------------------------------------------


@functools.cache
def _call_series(protocol: str, tool: str, outcome: str, code: str) -> tuple[Any, Any]:
    # Label values are bounded (catalogue names, outcomes, codes): one lookup per series.
    metrics = instruments()
    return (
        metrics.calls.labels(protocol, tool, outcome, code),
        metrics.duration.labels(protocol, tool, outcome),
    )


def observe_call(call: ToolCall) -> None:
    """Count ``call`` and its duration."""
    if prometheus_client is None:
        return
    count, duration = _call_series(
        call.protocol, call.tool_label, str(call.outcome), call.error_code or ""
    )
    count.inc()
    if call.duration_seconds is not None:
        duration.observe(call.duration_seconds)


def bound_refused(bound: str) -> None:
    """Count one refusal by a bound: ``"concurrency"`` or ``"deadline"``."""
    if prometheus_client is not None:
        instruments().bound_refusals.labels(bound).inc()


def audit_rows_dropped(reason: str, rows: int = 1) -> None:
    """Count ``rows`` stored call audit rows lost, and why (``mcp_tools.observability.audit``)."""
    if prometheus_client is not None:
        instruments().audit_rows_dropped.labels(reason).inc(rows)


def idempotency_outcome(outcome: Any) -> str:
    """The label of an ``IdempotentUnit.run`` outcome."""
    if isinstance(outcome, Executed):
        return "failed" if isinstance(outcome.result, Failure) else "executed"
    if isinstance(outcome, Replayed):
        return "replayed"
    if isinstance(outcome, KeyConflict):
        return "key_reused"
    if isinstance(outcome, InProgress):
        return "in_progress"
    return "unknown"


def _on_unit_finished(sender: Any, *, outcome: Any, **kwargs: Any) -> None:
    instruments().idempotency_outcomes.labels(idempotency_outcome(outcome)).inc()


def _on_lease_stolen(sender: Any, **kwargs: Any) -> None:
    instruments().leases_stolen.inc()


def _on_bearer_refused(sender: Any, *, reason: str, **kwargs: Any) -> None:
    instruments().bearer_refusals.labels(reason).inc()


def _on_rate_limited(sender: Any, *, group: str, **kwargs: Any) -> None:
    instruments().rate_limit_refusals.labels(group).inc()


def connect() -> None:
    """Subscribe to tenancy's and idempotency's signals (no-op without prometheus-client)."""
    if prometheus_client is None:
        return
    unit_finished.connect(_on_unit_finished, dispatch_uid="mcp_tools.metrics.unit_finished")
    lease_stolen.connect(_on_lease_stolen, dispatch_uid="mcp_tools.metrics.lease_stolen")
    bearer_refused.connect(_on_bearer_refused, dispatch_uid="mcp_tools.metrics.bearer_refused")
    rate_limited.connect(_on_rate_limited, dispatch_uid="mcp_tools.metrics.rate_limited")


# --- /metrics -----------------------------------------------------------------------------------


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``MCP_TOOLS_METRICS_ALLOWED_IPS`` as networks (a bare address is a /32 or /128).

    Raises:
        ValueError: an entry is neither an address nor a network (system check E010).
    """
    return [ipaddress.ip_network(str(entry), strict=False) for entry in _setting_ips()]


def _setting_ips() -> list[Any]:
    return list(conf.get("METRICS_ALLOWED_IPS") or [])


def _bearer(request: HttpRequest) -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def admitted(request: HttpRequest) -> bool:
    """Whether ``request`` may read /metrics: some guard is set, and every guard set holds."""
    token = conf.get("METRICS_TOKEN")
    ips = _setting_ips()
    if not token and not ips:
        return False  # never open by default
    if token:
        presented = _bearer(request)
        if presented is None or not hmac.compare_digest(presented.encode(), str(token).encode()):
            return False
    if ips:
        try:
            address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
        except ValueError:
            return False
        if not any(address in network for network in allowed_networks()):
            return False
    return True


def exposition() -> tuple[bytes, str]:
    """The text exposition of every metric: of all processes under ``PROMETHEUS_MULTIPROC_DIR``,
    else of this one."""
    from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

    registry = REGISTRY
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        # A fresh registry per scrape: the collector reads every process's files.
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return generate_latest(registry), CONTENT_TYPE_LATEST


@login_not_required
@handles_own_transactions
@never_cache
@require_safe
@ignores_ambient_credentials
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus metrics, or 404: disabled, not installed, or the guard refused.

    Every refusal looks like a path that does not exist. The bearer here is the scraper's
    (``MCP_TOOLS_METRICS_TOKEN``), never a member's: tenancy does not read it.
    """
    if prometheus_client is None or not admitted(request):
        raise Http404("not found")
    body, content_type = exposition()
    return HttpResponse(body, content_type=content_type)
