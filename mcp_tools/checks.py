"""System checks: every mirrored route exists, and the endpoint's prerequisites are in place."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core import checks

from mcp_tools import conf

BODY_CAP_MIDDLEWARE = "mcp_tools.serving.middleware.BodyCapMiddleware"
TENANCY_MIDDLEWARE = "tenancy.middleware.TenancyMiddleware"
IDEMPOTENCY_MIDDLEWARE = "idempotency.middleware.IdempotencyMiddleware"
# The apps /mcp cannot serve without: (app, what it is needed for, check id).
REQUIRED_APPS = (
    (
        "rest_framework",
        "the toolkit's API views and their error answers are DRF's",
        "mcp_tools.E006",
    ),
    ("idempotency", "write tools claim their idempotencyKey in its table", "mcp_tools.E007"),
)


def route_names(urlconf: str | None = None) -> set[str]:
    """Every route name in the URLconf (includes flattened, namespaced as ``ns:name``)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    names: set[str] = set()

    def walk(patterns: list[Any], namespace: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
                walk(entry.url_patterns, ns)
            elif isinstance(entry, URLPattern) and entry.name:
                names.add(f"{namespace}{entry.name}")

    walk(get_resolver(urlconf).url_patterns, "")
    return names


@checks.register(checks.Tags.urls)
def check_mirrors(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from mcp_tools.authoring.registry import default_registry

    known = route_names()
    errors: list[checks.CheckMessage] = []
    for spec in default_registry.specs():
        for route in spec.mirrors:
            if route not in known:
                errors.append(
                    checks.Error(
                        f"MCP tool {spec.name!r} mirrors route {route!r}, which does not exist.",
                        hint="Fix the route name in mirrors=, or declare mirrors_no_route=.",
                        obj=spec.qualname,
                        id="mcp_tools.E001",
                    )
                )
    return errors


@checks.register(checks.Tags.security)
def check_middleware(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from tenancy.checks import middleware_index

    body_cap_at = middleware_index(BODY_CAP_MIDDLEWARE)
    tenancy_at = middleware_index(TENANCY_MIDDLEWARE)
    errors: list[checks.CheckMessage] = []
    if body_cap_at is None:
        errors.append(
            checks.Error(
                f"{BODY_CAP_MIDDLEWARE} is not in MIDDLEWARE.",
                hint="Add it right after SecurityMiddleware: the body cap must run before auth.",
                id="mcp_tools.E002",
            )
        )
    elif tenancy_at is not None and body_cap_at > tenancy_at:
        errors.append(
            checks.Error(
                "BodyCapMiddleware runs after TenancyMiddleware.",
                hint="Oversized bodies must be refused before any token lookup.",
                id="mcp_tools.E003",
            )
        )
    if tenancy_at is None:
        errors.append(
            checks.Error(
                f"{TENANCY_MIDDLEWARE} is not in MIDDLEWARE; /mcp has no identity.",
                id="mcp_tools.E004",
            )
        )
    if apps.is_installed("idempotency") and middleware_index(IDEMPOTENCY_MIDDLEWARE) is None:
        errors.append(
            checks.Error(
                f"{IDEMPOTENCY_MIDDLEWARE} is not in MIDDLEWARE.",
                hint=f'Add "{IDEMPOTENCY_MIDDLEWARE}" as the last entry of MIDDLEWARE.',
                id="mcp_tools.E008",
            )
        )
    from mcp_tools.execution.bounds import MAX_WORKER_THREADS

    if int(conf.get("MAX_CONCURRENT_CALLS")) > MAX_WORKER_THREADS:
        errors.append(
            checks.Error(
                f"MCP_TOOLS_MAX_CONCURRENT_CALLS exceeds {MAX_WORKER_THREADS} worker threads.",
                id="mcp_tools.E005",
            )
        )
    return errors


@checks.register()
def check_required_apps(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """The apps the endpoint's write path needs are installed (else every write tool answers
    ``Tool.InternalError``, found only by calling one)."""
    return [
        checks.Error(
            f"{app!r} is not in INSTALLED_APPS: {why}.",
            hint=f'Add "{app}" to INSTALLED_APPS.',
            id=check_id,
        )
        for app, why, check_id in REQUIRED_APPS
        if not apps.is_installed(app)
    ]


# Security: mcp_tools.serving.asgi runs these before serving, so it refuses a broken catalogue too.
@checks.register(checks.Tags.security)
def check_catalogue(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.E009``: a tool broke a registration rule and was left out, or the
    catalogue could not be prepared (nothing is served)."""
    from mcp_tools.authoring.registry import default_registry

    return [
        checks.Error(
            problem,
            hint="Change what the message names (docs/mcp_tools.md lists the rules for tools).",
            id="mcp_tools.E009",
        )
        for problem in default_registry.problems
    ]


@checks.register(checks.Tags.urls)
def check_endpoint_routed(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.W003``: no URL serves the MCP endpoint."""
    from mcp_tools.serving.routing import mcp_path

    if mcp_path() is not None:
        return []
    return [
        checks.Warning(
            "No URL pattern serves the MCP endpoint: clients and manage.py mcp_call have "
            "nothing to call.",
            hint='Add path("", include("mcp_tools.urls")) to your ROOT_URLCONF\'s urlpatterns.',
            id="mcp_tools.W003",
        )
    ]


@checks.register()
def check_server_name(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.W002``: ``serverInfo`` would name the server after a layout package."""
    from mcp_tools import conf

    if conf.get("SERVER_NAME"):
        return []
    name = conf.default_server_name()
    if name.lower() not in conf.GENERIC_PROJECT_NAMES:
        return []
    return [
        checks.Warning(
            f"MCP serverInfo (and the A2A agent card) would name this server {name!r}, the "
            "package holding the settings, which names no project.",
            hint='Set MCP_TOOLS_SERVER_NAME = "<your project>" (and MCP_TOOLS_SERVER_VERSION).',
            id="mcp_tools.W002",
        )
    ]


@checks.register(checks.Tags.security)
def check_raw_tools(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.W001``: raw tools (no CallContext, no tenant) are being served."""
    from mcp_tools.authoring.raw import served_raw_tools

    return [
        checks.Warning(
            f"MCP raw tool {spec.name!r} is served without a CallContext: no tenant, actor, "
            "role filter, argument model or idempotency protects it.",
            hint="Use @tool unless the tool truly has no tenant; set MCP_TOOLS_ALLOW_RAW_TOOLS "
            "= False to stop serving raw tools.",
            obj=spec.qualname,
            id="mcp_tools.W001",
        )
        for spec in served_raw_tools()
    ]


LOGIN_REQUIRED_MIDDLEWARE = "django.contrib.auth.middleware.LoginRequiredMiddleware"
# The packages whose views authenticate their callers themselves (a bearer token, an OAuth
# client, a signed health probe): under LoginRequiredMiddleware each must say so.
SELF_AUTHENTICATING_PACKAGES = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")


def _defined_in(view: Any) -> str:
    """The module a routed view comes from: a class-based view's class, else the function."""
    owner = getattr(view, "view_class", None) or getattr(view, "cls", None) or view
    return str(getattr(owner, "__module__", ""))


@checks.register(checks.Tags.security, checks.Tags.urls)
def check_login_not_required(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``mcp_tools.W004``: under ``LoginRequiredMiddleware``, a routed toolkit view would send
    its bearer-token caller to ``LOGIN_URL`` instead of answering it."""
    from django.urls import get_resolver

    from tenancy.checks import middleware_index, routed_views

    if middleware_index(LOGIN_REQUIRED_MIDDLEWARE) is None:
        return []
    warnings: list[checks.CheckMessage] = []
    for route, view in routed_views(get_resolver().url_patterns):
        if hasattr(view, "model_admin"):
            continue  # the admin signs its staff in on its own pages, by session
        package = _defined_in(view).partition(".")[0]
        if package in SELF_AUTHENTICATING_PACKAGES and getattr(view, "login_required", True):
            warnings.append(
                checks.Warning(
                    f"{_defined_in(view)}.{getattr(view, '__name__', view)} at {route!r} is not "
                    "login_not_required: LoginRequiredMiddleware redirects its clients, who "
                    "authenticate by token, to LOGIN_URL.",
                    hint=(
                        "Route the toolkit's own view (its URLconf marks it), or decorate the "
                        "wrapper you routed with django.contrib.auth.decorators.login_not_required."
                    ),
                    obj=route,
                    id="mcp_tools.W004",
                )
            )
    return warnings
