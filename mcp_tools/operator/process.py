"""Every long-lived object of one process, in one list: what it holds, who starts it.

Each is a ``tenancy.process.ProcessObject`` declared in the module named here, made on first
use, reset by ``reset_all()`` (tests) and made anew in a forked child (``os.register_at_fork``):
a worker forked from a preloaded parent (gunicorn ``--preload``, Celery prefork,
``django-tasks``' ``db_worker``) never runs on a copy of its parent's threads, locks, pools,
queued rows or caches. The prepared catalogue is the one thing a child keeps: it is read-only,
and sharing it is what preloading is for.

Kinds: ``thread`` (owns a thread of its own), ``pool`` (worker threads or slots that bound
them), ``cache`` (answers kept to be reused), ``table`` (work in flight on this process),
``prepared`` (built at start-up, read-only after).

``tests/test_process_state.py`` holds this list to the code: every declared object is listed,
every listed one is declared, and no module of ``mcp_tools`` or ``tenancy`` makes a thread, a
pool, a queue or a lock at module level outside a ``ProcessObject``.

Not listed, because they are not per-process state: the registries ``@tool``, ``@resource`` and
``@prompt`` fill at import (the code's declarations), the settings cache of ``mcp_tools.conf``
(emptied by ``setting_changed``), and ``mcp_tools.tasks.run.store`` (a ``TaskStore`` keeps
nothing: a task's state is its row). Nor the ``functools.cache`` memos of what the code and the
settings decide (the tracer, the metric instruments, ``import_string`` results, statements
built from a model): a child computes the same, so it keeps them. Connections are their
owners' business: Django's per thread, redis-py's pool renews itself in a child (its pid check).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tenancy.process import Kind, ProcessObject, declared, reset_all

__all__ = ["PROCESS_STATE", "Listed", "declared", "objects", "reset_all"]


@dataclass(frozen=True)
class Listed:
    """One process object: its name, kind, the module that declares it (``owner.ATTRIBUTE``),
    what it holds and what makes or starts it."""

    name: str
    kind: Kind
    owner: str
    holds: str
    started_by: str


PROCESS_STATE: Final[tuple[Listed, ...]] = (
    # --- serving a call -------------------------------------------------------------------
    Listed(
        "catalogue.active",
        "prepared",
        "mcp_tools.catalogue.surfaces.CATALOGUES",
        "the catalogue being served: every role's prepared surface and pages",
        "AppConfig.ready (surfaces.prepare); tests stack theirs with surfaces.activated",
    ),
    Listed(
        "execution.slots",
        "pool",
        "mcp_tools.execution.bounds.SLOTS",
        "the concurrency slots of tool calls (MAX_CONCURRENT_CALLS), their waiters, draining",
        "module import; taken by every tools/call",
    ),
    Listed(
        "execution.tool_threads",
        "pool",
        "mcp_tools.execution.bounds.TOOL_THREADS",
        "the worker threads synchronous tools run in (up to 2 x 64, thread name mcp-tool)",
        "the first tools/call of a synchronous tool",
    ),
    Listed(
        "call.in_flight",
        "table",
        "mcp_tools.call.cancellation.IN_FLIGHT",
        "calls that notifications/cancelled may cancel, by (tenant, user, request id)",
        "a call whose answer may be streamed",
    ),
    Listed(
        "asking.waiting",
        "table",
        "mcp_tools.asking.mailbox.WAITING",
        "input requests (elicitation, sampling, roots) waiting here for their answer",
        "a tool asking its client mid-call",
    ),
    Listed(
        "factories.definitions",
        "cache",
        "mcp_tools.authoring.factories.DEFINITIONS",
        "tools/list definitions of factories declaring varies_by, by surface digest and key "
        "(at most 1024)",
        "the first tools/list page holding such a factory (the query tool)",
    ),
    Listed(
        "operator.narrowed_surfaces",
        "cache",
        "mcp_tools.operator.switches.NARROWED",
        "surfaces narrowed by a tenant's switches, one per switch state seen (at most 1024)",
        "the first request under a narrowing switch state",
    ),
    Listed(
        "operator.switches_cache",
        "cache",
        "mcp_tools.operator.switches.SWITCHES_CACHE",
        "each caller's resolved switches for MCP_TOOLS_TENANT_SWITCHES_CACHE_SECONDS",
        "a request with MCP_TOOLS_TENANT_SWITCHES set and a cache time above zero",
    ),
    # --- behind the calls -----------------------------------------------------------------
    Listed(
        "observability.audit_writer",
        "thread",
        "mcp_tools.observability.audit.AUDIT_WRITER",
        "the queue of call audit rows and the thread writing them (mcp-audit-writer)",
        "the first audited call (MCP_TOOLS_AUDIT); flushed at exit",
    ),
    Listed(
        "tasks.engine",
        "thread",
        "mcp_tools.tasks.engine.TASK_ENGINE",
        "the in-process task pool (mcp-task), its reservations, and the lease renewer",
        "module import; its threads start with the first task run in this process",
    ),
    Listed(
        "subscriptions.hub",
        "thread",
        "mcp_tools.subscriptions.bus.HUB",
        "the open listen streams and the poller thread that feeds them (mcp-tools-listen)",
        "the first subscriptions/listen stream",
    ),
    Listed(
        "a2a.projection",
        "cache",
        "a2a_tools.skills.PROJECTION",
        "the A2A skills and agent cards projected from the catalogue being served",
        "the first A2A request (a2a_tools installed)",
    ),
    # --- tenancy --------------------------------------------------------------------------
    Listed(
        "tokens.plans",
        "cache",
        "tenancy.tokens.lookup.PLANS",
        "the compiled bearer token read, per database alias",
        "the first bearer token checked",
    ),
    Listed(
        "tokens.memberships",
        "cache",
        "tenancy.tokens.lookup.MEMBERSHIPS",
        "token digest to membership id, for the read that also counts the rate (at most 10,000)",
        "a bearer token checked with its rate counted",
    ),
    Listed(
        "idp.key_sets",
        "cache",
        "tenancy.idp.jwks.KEY_SETS",
        "each external issuer's signing keys and the thread refreshing them (jwks-refresh)",
        "the first external JWT of an issuer (TENANCY_EXTERNAL_JWT)",
    ),
    Listed(
        "idp.discovered",
        "cache",
        "tenancy.idp.jwks.DISCOVERED",
        "each external issuer's JWKS URL, found by discovery",
        "the first key refresh of an issuer configured without a JWKS URL",
    ),
    Listed(
        "oauth.fetch_slots",
        "pool",
        "tenancy.oauth.cimd.FETCH_SLOTS_STATE",
        "client ID metadata document fetches in flight and waiting, per origin and in all",
        "module import (tenancy.oauth); taken by each metadata document fetch",
    ),
)


def objects() -> list[tuple[Listed, ProcessObject[Any]]]:
    """Each listed object this process has declared (its module is imported: an optional app's
    only when it is installed), in the listing's order."""
    made = {item.name: item for item in declared()}
    return [(listed, made[listed.name]) for listed in PROCESS_STATE if listed.name in made]
