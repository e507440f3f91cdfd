"""``mcp_tools`` settings: defaults here, read at call time so ``override_settings`` works.

Values are cached per name (every call reads several; ``getattr`` on Django's settings for an
unset name raises and catches an ``AttributeError`` each time) and the cache is dropped on
``setting_changed``, the signal ``override_settings`` and pytest-django's ``settings`` send.

``PAGE_SIZE`` and ``SERVER_NAME``/``SERVER_VERSION`` shape the prepared surfaces and are read
once at start-up, when the catalogue is built.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any, Final

from django.conf import settings
from django.core.signals import setting_changed

DEFAULTS: dict[str, Any] = {
    # Patterns like "http://localhost:*" (any port). An absent Origin header passes: only
    # browsers send one, and a browser page on another origin is the DNS-rebinding threat.
    "ALLOWED_ORIGINS": ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    # One JSON-RPC message is small; 32 KiB bounds parsing work before anything else runs.
    "MAX_BODY_BYTES": 32 * 1024,
    # Every route without its own ``body_cap`` (REST, admin, ...). Django itself would buffer
    # up to DATA_UPLOAD_MAX_MEMORY_SIZE, and under ASGI spool any size to a temp file first.
    "DEFAULT_MAX_BODY_BYTES": 1024 * 1024,
    # mcp_tools.serving.asgi: the whole body must arrive within this many seconds of the request
    # head (408 otherwise), so a client trickling bytes cannot hold a request thread's slot.
    "BODY_READ_SECONDS": 30.0,
    "MAX_JSON_DEPTH": 32,
    "MAX_JSON_NODES": 4096,
    "MAX_ID_LENGTH": 128,
    # Tools run in worker threads; the limit bounds threads and DB connections per process.
    "MAX_CONCURRENT_CALLS": 8,
    # A call that finds every slot taken waits this long for one (first come, first served)
    # before it is refused as overloaded; 0 refuses at once. Measured: bench/mcp_load.py.
    "SLOT_WAIT_SECONDS": 0.0,
    # The retry hint of an overloaded refusal (data.retryAfterMs, spread ±50 %; Retry-After).
    "OVERLOAD_RETRY_AFTER_MS": 1000,
    "CALL_TIMEOUT_SECONDS": 30.0,
    # django-ratelimit rate per bearer token, counted on the default (shared) cache.
    # The cache is django-ratelimit's RATELIMIT_USE_CACHE (default: "default").
    "RATE": "300/m",
    # Dotted path to ``callable(exc) -> ToolFailure | None`` mapping domain errors.
    "ERROR_TRANSLATOR": None,
    "PAGE_SIZE": 50,
    # serverInfo; None → the project's name (server_info(): the settings module's package, the
    # URLconf's or BASE_DIR's name, skipping layout names like "config") and its installed
    # version, or "0.0.0". A generic name left standing is system check mcp_tools.W002.
    "SERVER_NAME": None,
    "SERVER_VERSION": None,
    # serverInfo.icons: [{"src": "https://…/logo.png", "mimeType": "image/png", "sizes": [...],
    # "theme": "light"}] (mcp_tools.authoring.icons checks them when the catalogue is built).
    "SERVER_ICONS": None,
    "INSTRUCTIONS": None,
    # mcp_tools.serving.asgi: threads serving requests' synchronous middleware (one per request).
    "REQUEST_THREADS": 32,
    # Input requests (2026-07-28): how long a request state may be echoed back.
    "REQUEST_STATE_TTL_SECONDS": 600,
    # A request state larger than this is refused when issued (it travels in every retry).
    "REQUEST_STATE_MAX_BYTES": 8192,
    # Handshake era: log messages of this level and above go to a streamed response
    # (logging/setLevel is accepted but a stateless server cannot remember it).
    "LOG_LEVEL": "info",
    # Tasks: running at once per process (a separate pool from MAX_CONCURRENT_CALLS), how long
    # one may run, how long its row is kept, the poll interval suggested to clients, and the
    # lease a running task renews (past it, its worker is presumed lost).
    "MAX_CONCURRENT_TASKS": 4,
    "TASK_TIMEOUT_SECONDS": 900.0,
    "TASK_TTL_SECONDS": 3600,
    "TASK_POLL_INTERVAL_MS": 500,
    "TASK_LEASE_SECONDS": 60.0,
    # What runs tasks (mcp_tools.tasks.engine): "django_tasks" (Django's tasks framework, on the
    # TASKS backend TASK_BACKEND, queue TASK_QUEUE) or "in_process" (threads of the web
    # process; development only).
    "TASK_ENGINE": "django_tasks",
    "TASK_BACKEND": "default",
    "TASK_QUEUE": "default",
    # Completions: at most this many values per answer (the spec's own ceiling is 100).
    "MAX_COMPLETIONS": 100,
    # Raw tools (no CallContext, no tenant): registered only through @raw_tool and served only
    # when this is True. A system check warns while it is.
    "ALLOW_RAW_TOOLS": False,
    # OAuth scopes a credential narrowed by scopes (tenancy's ``actor.scopes``) needs: every
    # tools/call needs READ_SCOPE; a write tool needs WRITE_SCOPE as well. A credential
    # without scopes (a personal token) is decided by its role alone.
    "READ_SCOPE": "mcp:read",
    "WRITE_SCOPE": "mcp:write",
    # --- subscriptions/listen (2026-07-28; mcp_tools.subscriptions.bus, docs/mcp_tools.md) ---
    # Off: the method is -32601 and the 2026-07-28 capabilities declare no change
    # notifications. On: a client listens on one SSE stream (ASGI only).
    "SUBSCRIPTIONS": False,
    # Open listen streams per member, across every replica (-32015 beyond it, HTTP 429).
    "MAX_LISTENERS_PER_MEMBER": 3,
    # How often each process's poller reads the change table while it has listeners; a
    # keep-alive comment on a quiet stream; a stream's longest life (then it ends with its
    # result, and the client listens again, its credential checked again).
    "LISTEN_POLL_SECONDS": 0.5,
    "LISTEN_KEEPALIVE_SECONDS": 15.0,
    "LISTEN_MAX_SECONDS": 3600.0,
    # How often the poller judges each open stream's caller again (tenancy's liveness rule:
    # revoked token, role change, suspension, deactivation end the stream) and reads its role
    # and row scope anew; at most this plus a poll round until a refused caller's stream ends.
    "LISTEN_RECHECK_SECONDS": 2.0,
    # Resource URIs one listen may subscribe to: each is read once when the stream opens.
    "LISTEN_MAX_RESOURCE_SUBSCRIPTIONS": 64,
    # Change rows are kept this long (manage.py purge_mcp_tools deletes older ones).
    "CHANGE_EVENT_RETENTION_SECONDS": 600,
    # --- observability (mcp_tools.observability, docs/operating.md) ---
    # /metrics answers 404 unless a guard is set: a bearer token the scraper sends, and/or the
    # addresses (IPs or CIDRs, matched against REMOTE_ADDR) it may come from. Both set: both.
    "METRICS_TOKEN": None,
    "METRICS_ALLOWED_IPS": [],
    # Optional fields of the per-call log record: "argument_names", "client", "email".
    # Argument values are never logged.
    "CALL_LOG_EXTRA_FIELDS": [],
    # Registry metadata (manage.py mcp_server_json, the server card): the server's name in
    # reverse-DNS form ("io.github.acme/widgets"), its public /mcp URL (may hold variables such
    # as "https://{tenant}.example.com/mcp"), a title and a description (at most 100 chars).
    "REGISTRY_NAME": None,
    "PUBLIC_URL": None,
    "SERVER_TITLE": None,
    "SERVER_DESCRIPTION": None,
    # --- the operator's kit (docs/operating.md) ---
    # The stored call audit (mcp_tools.observability.audit): one CallAudit row per tool /
    # skill call, written by a background thread in batches of up to AUDIT_BATCH_SIZE, after at most
    # AUDIT_LINGER_SECONDS; a full queue (AUDIT_QUEUE_SIZE rows) drops rows, never waits.
    "AUDIT": False,
    "AUDIT_QUEUE_SIZE": 10_000,
    "AUDIT_BATCH_SIZE": 500,
    "AUDIT_LINGER_SECONDS": 0.2,
    # Audit rows are kept this long (manage.py purge_expired deletes older ones).
    "AUDIT_RETENTION_DAYS": 90,
    # Dotted path to ``callable(ctx) -> Switches | None``: a tenant's (and credential's) allowed
    # tools per request (mcp_tools.operator.switches);
    # "mcp_tools.operator.switches.stored_switches" reads the
    # switches tenant admins set over REST. None: no switches.
    "TENANT_SWITCHES": None,
    # Each process keeps a caller's resolved switches this long (0: asks on every request). A
    # change made over REST applies at once in the process that made it, elsewhere within this.
    "TENANT_SWITCHES_CACHE_SECONDS": 0.0,
    # A tenant's budget of tool calls ("1000/m") over all its members, on the shared counter.
    "TENANT_RATE": None,
    # Dotted path to the tenancy Policy admitted to the operator REST views (the tenant's audit,
    # its switches); None: the highest-ranked role(s) of TENANCY_ROLES.
    "OPERATOR_POLICY": None,
}


# Top packages that name a layout, not a project: cookiecutter-django's ``config``,
# ``startproject . `` variants, the ``src`` layout. serverInfo never defaults to one of these
# while a better name is at hand.
GENERIC_PROJECT_NAMES: Final = frozenset(
    {
        "app", "apps", "backend", "base", "conf", "config", "configuration", "core", "django",
        "main", "project", "server", "settings", "site", "src", "web", "website",
    }
)  # fmt: skip


def _top_package(dotted: object) -> str:
    return dotted.split(".", 1)[0] if isinstance(dotted, str) and dotted else ""


def default_server_name() -> str:
    """The project's name for ``serverInfo``: the first of the settings module's top package,
    the ``ROOT_URLCONF``'s and ``BASE_DIR``'s directory name that is not a layout name
    (:data:`GENERIC_PROJECT_NAMES`); else the settings package, generic as it is."""
    import os

    settings_package = _top_package(os.environ.get("DJANGO_SETTINGS_MODULE")) or "django"
    base_dir = getattr(settings, "BASE_DIR", None)
    candidates = (
        settings_package,
        _top_package(getattr(settings, "ROOT_URLCONF", None)),
        Path(base_dir).name if isinstance(base_dir, str | os.PathLike) else "",
    )
    for name in candidates:
        if name and name.lower() not in GENERIC_PROJECT_NAMES:
            return name
    return settings_package


def server_info() -> tuple[str, str]:
    """``(name, version)`` for ``serverInfo``: ``MCP_TOOLS_SERVER_NAME``/``_VERSION``, else
    :func:`default_server_name` and the version of the distribution by that name, or "0.0.0"."""
    name = get("SERVER_NAME") or default_server_name()
    version = get("SERVER_VERSION")
    if not version:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "0.0.0"
    return str(name), str(version)


_values: dict[str, Any] = {}


def get(name: str) -> Any:
    """The value of ``MCP_TOOLS_<name>``, or its default. Unknown names raise."""
    try:
        return _values[name]
    except KeyError:
        pass
    if name not in DEFAULTS:
        raise AttributeError(f"unknown mcp_tools setting {name!r}")
    value = _values[name] = getattr(settings, f"MCP_TOOLS_{name}", DEFAULTS[name])
    return value


def _setting_changed(*, setting: str, **kwargs: Any) -> None:
    if setting.startswith("MCP_TOOLS_"):
        _values.clear()


setting_changed.connect(_setting_changed, dispatch_uid="mcp_tools.conf")
