"""Per-role prepared surfaces of resources, resource templates and prompts.

Built next to the tool surfaces (``mcp_tools.catalogue.surfaces.build_catalogue``) with the same
policy
decision (``tenancy.evaluate`` on a probe actor of the role) and the same paging discipline
(``mcp_tools.catalogue.paging``). A request only looks things up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from mcp_tools.authoring.prompts import PromptRegistry, PromptSpec
from mcp_tools.authoring.resources import ResourceRegistry, ResourceSpec, ResourceTemplateSpec
from mcp_tools.catalogue import paging
from tenancy import Role


def _empty_listing(method: str) -> paging.Listing:
    return paging.Listing(method=method, digest="")


@dataclass(frozen=True)
class FeatureSurface:
    """What one role may list and read besides tools."""

    resources: Mapping[str, ResourceSpec] = field(default_factory=dict)
    templates: tuple[ResourceTemplateSpec, ...] = ()
    prompts: Mapping[str, PromptSpec] = field(default_factory=dict)
    resource_pages: paging.Listing = field(default_factory=lambda: _empty_listing("resources/list"))
    template_pages: paging.Listing = field(
        default_factory=lambda: _empty_listing("resources/templates/list")
    )
    prompt_pages: paging.Listing = field(default_factory=lambda: _empty_listing("prompts/list"))

    def template_by_uri_template(self, uri_template: str) -> ResourceTemplateSpec | None:
        return next((t for t in self.templates if t.uri_template == uri_template), None)


def build_features(
    role: Role,
    admits: Callable[[Any], bool],
    *,
    resources: ResourceRegistry,
    prompts: PromptRegistry,
    page_size: int,
    server_info: Mapping[str, Any],
) -> FeatureSurface:
    """``role``'s feature surface; ``admits(policy)`` is the live policy decision."""
    scope = role.label
    admitted_resources = [r for r in resources.resources() if admits(r.policy)]
    admitted_templates = [t for t in resources.templates() if admits(t.policy)]
    admitted_prompts = [p for p in prompts.specs() if admits(p.policy)]
    return FeatureSurface(
        resources=MappingProxyType({r.uri: r for r in admitted_resources}),
        templates=tuple(admitted_templates),
        prompts=MappingProxyType({p.name: p for p in admitted_prompts}),
        resource_pages=paging.prepare(
            "resources/list",
            "resources",
            [r.wire_definition() for r in admitted_resources],
            scope=scope,
            page_size=page_size,
            server_info=server_info,
        ),
        template_pages=paging.prepare(
            "resources/templates/list",
            "resourceTemplates",
            [t.wire_definition() for t in admitted_templates],
            scope=scope,
            page_size=page_size,
            server_info=server_info,
        ),
        prompt_pages=paging.prepare(
            "prompts/list",
            "prompts",
            [p.wire_definition() for p in admitted_prompts],
            scope=scope,
            page_size=page_size,
            server_info=server_info,
        ),
    )
