"""Prepared surfaces: per role, the tool catalogue built and serialized once at start-up.

A request only looks up its role's surface (a dict lookup) and writes prepared bytes. The
catalogue digest binds ``tools/list`` cursors: a cursor from another role, another deployment
or nobody's imagination is simply not in the surface's cursor table (-32602).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from mcp_types import methods as wire_methods
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    KNOWN_PROTOCOL_VERSIONS,
    MODERN_PROTOCOL_VERSIONS,
)

from mcp_tools import conf
from mcp_tools.authoring.factories import FactoryRegistry, ToolFactorySpec, default_factories
from mcp_tools.authoring.icons import check_icons
from mcp_tools.authoring.prompts import PromptRegistry, default_prompts
from mcp_tools.authoring.raw import RawRegistry, RawToolSpec, default_raw_tools, served_raw_tools
from mcp_tools.authoring.registry import Registry
from mcp_tools.authoring.resources import ResourceRegistry, default_resources
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.catalogue.features import FeatureSurface, build_features
from mcp_tools.catalogue.paging import cursor_table, page_result, pages_of
from mcp_tools.eras.envelope import CACHE_SCOPE, LIST_TTL_MS, modern_envelope
from mcp_tools.exceptions import UnknownSurfaceError
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy import Role, active_roles, evaluate_role
from tenancy.process import ProcessObject

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"

CURSOR_PREFIX: Final = "mcpc1."
# tools/list may vary by authorization, so shared caches must not serve one caller's list to
# another; a zero TTL keeps a role change visible on the next request.


def _admits(actor: Any, policy: Any) -> bool:
    # The role half only: a per-user policy (has_perm) is asked again per request.
    return evaluate_role(policy, actor)


def _probe_actor(role: Role) -> Any:
    from tenancy.probe import probe_actor

    return probe_actor(role)


@dataclass(frozen=True)
class Surface:
    """One role's prepared catalogue."""

    key: Role
    digest: str
    tools: Mapping[str, ToolSpec]
    pages: Mapping[str, tuple[bytes, ...]]  # protocol version -> serialized result pages
    cursors: Mapping[str, int]  # opaque cursor -> page index (>= 1)
    features: FeatureSurface = field(default_factory=FeatureSurface)
    # Raw tools (served only when MCP_TOOLS_ALLOW_RAW_TOOLS) and identity factories admitted
    # for this role. A page holding a factory tool is a template completed per request.
    raw_tools: Mapping[str, RawToolSpec] = field(default_factory=dict)
    factories: Mapping[str, ToolFactorySpec] = field(default_factory=dict)
    dynamic_pages: Mapping[str, Mapping[int, dict[str, Any]]] = field(default_factory=dict)

    def page_index(self, cursor: str | None) -> int | None:
        """The page a ``tools/list`` cursor points at; ``None`` if the cursor is not ours."""
        return 0 if cursor is None else self.cursors.get(cursor)

    def page(self, version: str, cursor: str | None) -> bytes | None:
        """The serialized ``tools/list`` result for ``cursor``; ``None`` if it is not ours
        (or if that page holds a factory tool: see ``dynamic_pages``)."""
        index = self.page_index(cursor)
        if index is None or index in self.dynamic_pages.get(version, {}):
            return None
        return self.pages[version][index]


@dataclass(frozen=True)
class Catalogue:
    """Every surface, plus the results that do not depend on the caller.

    There is one surface per role the project declares (``TENANCY_ROLES``): a finite set, so
    every surface is prepared once; nothing is built or cached per identity.
    """

    digest: str
    surfaces: Mapping[Role, Surface]
    specs: tuple[ToolSpec, ...]
    page_size: int
    initialize_results: Mapping[str, bytes]  # negotiated version -> InitializeResult
    discover_result: bytes
    server_info: Mapping[str, Any]
    # Tools that may hand their work to a task (the tasks projections are served when any).
    tasks_enabled: bool = False
    # Some policy asks the user's Django permissions (has_perm): they are loaded per request.
    per_user: bool = False

    def surface_for(self, key: object) -> Surface:
        """The surface for ``key``.

        Raises:
            UnknownSurfaceError: ``key`` is not a prepared surface key.
        """
        surface = self.surfaces.get(key) if isinstance(key, Role) else None
        if surface is None:
            raise UnknownSurfaceError(f"no prepared surface for {key!r}")
        return surface


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _serialize(method: str, version: str, result: dict[str, Any]) -> bytes:
    # The SDK's per-revision sieve: validates the result and drops fields that revision lacks.
    return _jsonrpc.dumps(wire_methods.serialize_server_result(method, version, result))


# How each revision advertises tasks: 2025-11-25 core tasks (experimental in that revision:
# tools/call only, no list); 2026-07-28 the tasks extension.
HANDSHAKE_TASKS: Final[Mapping[str, Any]] = {
    "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}
}
MODERN_TASKS: Final[Mapping[str, Any]] = {"extensions": {TASKS_EXTENSION: {}}}


def _capabilities(
    *,
    tasks_entry: Mapping[str, Any],
    resources: bool = False,
    prompts: bool = False,
    completions: bool = False,
    tasks: bool = False,
    listen: bool = False,
) -> dict[str, Any]:
    # Advertise only what is served, and nothing that needs a session: no list-change
    # notifications, no resource subscriptions. Log messages travel on a request's own
    # streamed response (see mcp_tools.serving.streaming).
    # 2026-07-28 with MCP_TOOLS_SUBSCRIPTIONS: change notifications ride subscriptions/listen
    # streams (mcp_tools.methods.subscriptions), so the flags say so, as the SDK derives them.
    capabilities: dict[str, Any] = {"tools": {"listChanged": listen}, "logging": {}}
    if resources:
        capabilities["resources"] = {"subscribe": listen, "listChanged": listen}
    if prompts:
        capabilities["prompts"] = {"listChanged": listen}
    if completions:
        capabilities["completions"] = {}
    if tasks:
        capabilities.update(copy.deepcopy(dict(tasks_entry)))
    return capabilities


def build_catalogue(
    registry: Registry,
    *,
    page_size: int,
    server_name: str,
    server_version: str,
    instructions: str | None = None,
    resources: ResourceRegistry | None = None,
    prompts: PromptRegistry | None = None,
    raw: RawRegistry | None = None,
    factories: FactoryRegistry | None = None,
    server_icons: Sequence[Mapping[str, Any]] | None = None,
) -> Catalogue:
    """Build every role's surface from ``registry``.

    Raises:
        ImproperlyConfigured: via the SDK sieve when a definition is not a valid wire ``Tool``
            (a pydantic ``ValidationError`` is re-raised as a configuration error).
    """
    from django.core.exceptions import ImproperlyConfigured
    from pydantic import ValidationError

    if page_size < 1:
        raise ImproperlyConfigured("MCP_TOOLS_PAGE_SIZE must be at least 1")
    specs = tuple(registry.specs())
    resources = default_resources if resources is None else resources
    prompts = default_prompts if prompts is None else prompts
    raw_specs = served_raw_tools(default_raw_tools if raw is None else raw)
    factory_specs = (default_factories if factories is None else factories).specs()
    definitions: dict[str, dict[str, Any] | None] = {
        spec.name: spec.wire_definition() for spec in specs
    }
    others: list[RawToolSpec | ToolFactorySpec] = [*raw_specs, *factory_specs]
    for other in others:
        if other.name in definitions:
            raise ImproperlyConfigured(
                f"MCP tool name {other.name!r} is registered twice ({other.qualname}); tool, "
                "raw tool and tool factory names share one namespace."
            )
        definitions[other.name] = (
            other.wire_definition() if isinstance(other, RawToolSpec) else None
        )
    digest = hashlib.sha256(
        _canonical(
            [[spec.name, spec.policy.name, definitions[spec.name]] for spec in specs]
            + [[raw_spec.name, "raw", definitions[raw_spec.name]] for raw_spec in raw_specs]
            + [[f.name, f.policy.name, "factory"] for f in factory_specs]
        )
    ).hexdigest()
    server_info: dict[str, Any] = {"name": server_name, "version": server_version}
    icons = check_icons("MCP_TOOLS_SERVER_ICONS", server_icons)
    if icons:
        server_info["icons"] = [dict(icon) for icon in icons]

    surfaces: dict[Role, Surface] = {}
    for role in active_roles():
        actor = _probe_actor(role)
        # The same decision function the REST permission classes call.
        admitted = [spec for spec in specs if evaluate_role(spec.policy, actor)]
        admitted_factories = [f for f in factory_specs if evaluate_role(f.policy, actor)]
        # Tools whose policy also asks the user (has_perm): their pages are completed per
        # request, like a factory's, leaving out what this user may not use.
        gated = {spec.name for spec in admitted if spec.policy.per_user}
        names = sorted([s.name for s in admitted] + [r.name for r in raw_specs])
        names = sorted(names + [f.name for f in admitted_factories])
        # Bound to the page size too: a cursor from another paging must not land mid-list.
        surface_digest = hashlib.sha256(
            f"{digest}:{page_size}:{role.label}:{','.join(names)}".encode()
        ).hexdigest()
        pages, cursors, dynamic = tool_pages(
            names,
            definitions,
            page_size=page_size,
            surface_digest=surface_digest,
            server_info=server_info,
            where=role.label,
            gated=gated,
        )
        try:
            features = build_features(
                role,
                functools.partial(_admits, actor),
                resources=resources,
                prompts=prompts,
                page_size=page_size,
                server_info=server_info,
            )
        except ValidationError as exc:
            raise ImproperlyConfigured(
                f"MCP resources/prompts of {role.label} are not valid on the wire: {exc}"
            ) from exc
        surfaces[role] = Surface(
            key=role,
            digest=surface_digest,
            tools=MappingProxyType({spec.name: spec for spec in admitted}),
            pages=pages,
            cursors=cursors,
            features=features,
            raw_tools=MappingProxyType({r.name: r for r in raw_specs}),
            factories=MappingProxyType({f.name: f for f in admitted_factories}),
            dynamic_pages=dynamic,
        )
    has_completions = any(t.completers for t in resources.templates()) or any(
        p.completers for p in prompts.specs()
    )
    tasks_enabled = any(spec.task_support != "forbidden" for spec in specs)
    flags = {
        "resources": len(resources) > 0,
        "prompts": len(prompts) > 0,
        "completions": has_completions,
        "tasks": tasks_enabled,
    }

    initialize_results = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        result = {
            "protocolVersion": version,
            "capabilities": _capabilities(tasks_entry=HANDSHAKE_TASKS, **flags),
            "serverInfo": server_info,
        }
        if instructions:
            result["instructions"] = instructions
        initialize_results[version] = _serialize("initialize", version, result)
    discover: dict[str, Any] = {
        "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
        "capabilities": _capabilities(
            tasks_entry=MODERN_TASKS, listen=bool(conf.get("SUBSCRIPTIONS")), **flags
        ),
        "ttlMs": LIST_TTL_MS,
        "cacheScope": CACHE_SCOPE,
    }
    if instructions:
        discover["instructions"] = instructions
    discover_result = _serialize(
        "server/discover",
        MODERN_PROTOCOL_VERSIONS[-1],
        modern_envelope(discover, server_info),
    )
    return Catalogue(
        digest=digest,
        surfaces=MappingProxyType(surfaces),
        specs=specs,
        page_size=page_size,
        initialize_results=MappingProxyType(initialize_results),
        discover_result=discover_result,
        server_info=MappingProxyType(server_info),
        tasks_enabled=tasks_enabled,
        per_user=any(
            policy.per_user
            for policy in [
                *(spec.policy for spec in specs),
                *(f.policy for f in factory_specs),
                *(r.policy for r in resources.resources()),
                *(t.policy for t in resources.templates()),
                *(p.policy for p in prompts.specs()),
            ]
        ),
    )


def tool_pages(
    names: list[str],
    definitions: Mapping[str, dict[str, Any] | None],
    *,
    page_size: int,
    surface_digest: str,
    server_info: Mapping[str, Any],
    where: str,
    gated: frozenset[str] | set[str] = frozenset(),
) -> tuple[
    Mapping[str, tuple[bytes, ...]], Mapping[str, int], Mapping[str, Mapping[int, dict[str, Any]]]
]:
    """Serialize the ``tools/list`` pages of ``names`` for every known protocol version.

    Returns the pages, the cursor table and the page templates holding a factory's tool or a
    tool whose policy is decided per user (``gated``).

    Raises:
        ImproperlyConfigured: a page is not a valid wire result at some version.
    """
    from django.core.exceptions import ImproperlyConfigured
    from pydantic import ValidationError

    chunks = pages_of(names, page_size)
    cursors = cursor_table(surface_digest, len(chunks), prefix=CURSOR_PREFIX)
    by_index = {index: cursor for cursor, index in cursors.items()}
    pages: dict[str, tuple[bytes, ...]] = {}
    dynamic: dict[str, dict[int, dict[str, Any]]] = {}
    for version in KNOWN_PROTOCOL_VERSIONS:
        serialized = []
        for index, chunk in enumerate(chunks):
            tools = [definitions[name] for name in chunk]
            result = page_result("tools", tools, by_index.get(index + 1), version, server_info)
            if any(definitions[name] is None or name in gated for name in chunk):
                # A factory's definition is built per request: keep the page as a
                # template, the factory's name where its definition goes.
                result["tools"] = [definitions[name] or name for name in chunk]
                dynamic.setdefault(version, {})[index] = result
                serialized.append(b"")
                continue
            try:
                serialized.append(_serialize("tools/list", version, result))
            except ValidationError as exc:
                raise ImproperlyConfigured(
                    f"MCP tools/list page for {where} is not valid at {version}: {exc}"
                ) from exc
        pages[version] = tuple(serialized)
    return (
        MappingProxyType(pages),
        MappingProxyType(cursors),
        MappingProxyType({version: MappingProxyType(p) for version, p in dynamic.items()}),
    )


# The catalogue being served: the last one (tests stack theirs with ``activated``). Prepared at
# start-up (mcp_tools.operator.process): kept across fork, shared read-only by every worker.
CATALOGUES: Final = ProcessObject[list[Catalogue]]("catalogue.active", list, kind="prepared")
active = CATALOGUES.get()


def prepare(registry: Registry) -> Catalogue:
    """Build the catalogue from settings and make it the active one (``AppConfig.ready``)."""
    from mcp_tools import conf

    server_name, server_version = conf.server_info()
    catalogue = build_catalogue(
        registry,
        page_size=int(conf.get("PAGE_SIZE")),
        server_name=server_name,
        server_version=server_version,
        instructions=conf.get("INSTRUCTIONS"),
        server_icons=conf.get("SERVER_ICONS"),
    )
    active[:] = [catalogue]
    return catalogue


def active_catalogue() -> Catalogue:
    """The catalogue built at start-up.

    Raises:
        RuntimeError: the ``mcp_tools`` app has not been made ready (not in INSTALLED_APPS).
    """
    if not active:
        raise RuntimeError("mcp_tools is not ready: add 'mcp_tools' to INSTALLED_APPS")
    return active[-1]


def surface_for(role: object) -> tuple[Catalogue, Surface]:
    """The active catalogue and its surface for ``role``.

    Raises:
        UnknownSurfaceError: ``role`` has no prepared surface.
    """
    catalogue = active_catalogue()
    return catalogue, catalogue.surface_for(role)


@contextmanager
def activated(catalogue: Catalogue) -> Iterator[Catalogue]:
    """Serve ``catalogue`` for the duration of the block (tests of paging and staleness)."""
    active.append(catalogue)
    try:
        yield catalogue
    finally:
        active.remove(catalogue)
