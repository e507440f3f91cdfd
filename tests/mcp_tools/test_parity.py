"""RBAC parity with the REST routes (guards 13–16) and the idempotency exemption (17)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from idempotency.markers import HANDLES_OWN_IDEMPOTENCY, exempt_views
from mcp_tools.authoring.factories import default_factories
from mcp_tools.authoring.registry import default_registry
from mcp_tools.catalogue.surfaces import active_catalogue
from mcp_tools.serving.views import mcp_view
from tenancy import Role, active_roles, evaluate
from tenancy.permissions import admitted_roles
from tenancy.probe import probe_actor
from tests.mutations import Edit, mutation

MIRRORING = [spec for spec in default_registry.specs() if spec.mirrors]


def _routes() -> dict[str, Any]:
    """Route name → URL callback, walking the live resolver (includes flattened)."""
    found: dict[str, Any] = {}

    def walk(patterns: list[Any]) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns)
            elif isinstance(entry, URLPattern) and entry.name:
                found.setdefault(entry.name, entry.callback)

    walk(get_resolver().url_patterns)
    return found


def _view_class(route_name: str) -> Any:
    callback = _routes()[route_name]
    routes = getattr(callback, "method_routes", None)
    if routes is not None:
        return routes.view_for(route_name)
    return getattr(callback, "cls", None) or getattr(callback, "view_class", None)


def _tool_roles(spec: Any) -> set[Role]:
    return {role for role in active_roles() if evaluate(spec.policy, probe_actor(role))}


def test_some_tools_mirror_routes():
    assert MIRRORING


@mutation("tenancy/urls.py", find='name="me")', replace='name="me-self")')
@pytest.mark.parametrize("spec", MIRRORING, ids=lambda s: s.name)
def test_mirrored_route_names_resolve(spec):
    """Guard 15. Mutation: rename the ``me`` route to ``me-self`` in tenancy/urls.py and leave
    ``mcptest_whoami``'s declaration → red (also the system check mcp_tools.E001)."""
    routes = _routes()
    for name in spec.mirrors:
        assert name in routes, f"{spec.name} mirrors unknown route {name!r}"


@mutation(
    Edit(
        "tenancy/api.py",
        find="from tenancy.permissions import IsTenantMember, request_actor",
        replace=(
            "from tenancy.permissions import IsTenantMember, policy_permission, request_actor\n"
            "from tenancy.roles import Policy"
        ),
    ),
    Edit(
        "tenancy/api.py",
        find=(
            "class MeApi(ProblemsByDefault, APIView):\n"
            "    authentication_classes = [TenancyAuthentication]\n"
            "    permission_classes = [IsTenantMember]"
        ),
        replace=(
            "class MeApi(ProblemsByDefault, APIView):\n"
            "    authentication_classes = [TenancyAuthentication]\n"
            '    permission_classes = [policy_permission(Policy("OwnersOnly", {"Owner"}))]'
        ),
    ),
)
@pytest.mark.parametrize("spec", MIRRORING, ids=lambda s: s.name)
def test_tool_roles_are_a_subset_of_every_mirrored_route_roles(spec):
    """Guard 14: evaluated through the live permission classes, keyed on route names.

    Mutation: set ``MeApi.permission_classes = [OwnerOnly]`` in tenancy/api.py and change
    nothing in MCP code → red for ``mcptest_whoami`` (drift detected from outside).
    """
    tool_roles = _tool_roles(spec)
    for name in spec.mirrors:
        view_class = _view_class(name)
        assert view_class is not None, name
        route_roles = admitted_roles(view_class.permission_classes)
        assert tool_roles <= route_roles, (name, tool_roles - route_roles)


def test_the_system_check_reports_an_unknown_mirror(settings):
    from mcp_tools.checks import check_mirrors

    assert check_mirrors() == []


@mutation(
    "mcp_tools/catalogue/surfaces.py",
    find="admitted = [spec for spec in specs if evaluate_role(spec.policy, actor)]",
    replace="admitted = list(specs)",
)
@pytest.mark.django_db
@pytest.mark.parametrize("role", ["Owner", "Manager", "Sales", "Worker", "ReadOnly"])
def test_tools_list_is_filtered_by_role_on_a_real_request(mcp_client, role):
    """Guard 16. Mutation: build every surface from all tools (drop the ``evaluate`` filter in
    ``build_catalogue``) → red (Worker sees the owner-only tool, ReadOnly the write tool)."""
    listed = {tool["name"] for tool in mcp_client(role).list_tools()["result"]["tools"]}
    admitted: list[Any] = [*active_catalogue().specs, *default_factories.specs()]
    expected = {
        spec.name for spec in admitted if evaluate(spec.policy, probe_actor(active_roles()[role]))
    }
    assert listed == expected or len(expected) > active_catalogue().page_size
    assert ("mcptest_owner_report" in listed) == (role == "Owner")
    assert ("mcptest_record_note" in listed) == (role in {"Owner", "Manager", "Worker"})


@mutation(
    "tenancy/api.py",
    find="class MeApi(ProblemsByDefault, APIView):",
    replace=(
        '@__import__("idempotency").handles_own_idempotency\n'
        "class MeApi(ProblemsByDefault, APIView):"
    ),
)
def test_only_mcp_and_a2a_handle_their_own_idempotency():
    """Guard 17 (a walk of every route; the marker is metadata, not a path). The two protocol
    endpoints carry the key in their messages and run writes in the idempotent unit.

    Mutation: put ``@handles_own_idempotency`` on a third view (e.g. ``MeApi``) → red.
    """
    from a2a_tools.views import a2a_view

    own = [view for view in exempt_views() if view.marker == HANDLES_OWN_IDEMPOTENCY]
    assert sorted((view.route, view.name) for view in own) == [("a2a", "a2a"), ("mcp", "mcp")]
    assert _routes()["mcp"] is mcp_view
    assert _routes()["a2a"] is a2a_view
    assert len(_routes()) > 10


@mutation(
    "cluck/mcp/production.py",
    find='    mirrors="stock-summary",\n    title="Read egg stock",\n',
    replace='    title="Read egg stock",\n',
)
def test_every_farm_tool_declares_what_it_mirrors():
    """The farm keeps REST and MCP in step: each of its tools names its route(s) or says why
    none exists. (Optional in ``mcp_tools``; a project without REST declares nothing.)

    Mutation: drop ``mirrors=`` from ``cluck_read_stock`` → red.
    """
    farm_tools = [spec for spec in default_registry.specs() if spec.name.startswith("cluck_")]
    assert farm_tools
    assert [s.name for s in farm_tools if not (s.mirrors or s.mirrors_no_route)] == []
