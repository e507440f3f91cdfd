"""``manage.py mcp_tools``: the prepared catalogue per role, and the raw tools apart."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand

from mcp_tools import conf
from mcp_tools.authoring.raw import default_raw_tools
from mcp_tools.catalogue.surfaces import active_catalogue


def _write_a2a_projection(out: Any, catalogue: Any) -> None:
    """With ``a2a_tools`` installed, every tool is also an A2A skill; name the exceptions."""
    kept = [spec for spec in catalogue.specs if not spec.a2a_skill]
    out.write(f"A2A skills (a2a_tools): every tool below except {len(kept)}")
    for spec in kept:
        if not spec.a2a:
            why = "a2a=False"
        else:
            why = "needs MCP client capabilities " + ", ".join(spec.required_client_capabilities)
        out.write(f"  {spec.name:<40} MCP only: {why}")


class Command(BaseCommand):
    help = (
        "List the prepared MCP catalogue per role (tools with their kind and mirrored route, "
        "identity factories, resources, templates, prompts), then the raw tools apart."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        catalogue = active_catalogue()
        self.stdout.write(f"catalogue {catalogue.digest[:16]}  ({len(catalogue.specs)} tools)")
        if apps.is_installed("a2a_tools"):
            _write_a2a_projection(self.stdout, catalogue)
        for role, surface in catalogue.surfaces.items():
            self.stdout.write(f"\n{role.label} ({len(surface.tools)} tools)")
            for spec in surface.tools.values():
                kind = "read " if spec.read_only else "write"
                if spec.mirrors:
                    mirror = "mirrors " + ", ".join(spec.mirrors)
                elif spec.mirrors_no_route:
                    mirror = f"no route: {spec.mirrors_no_route}"
                else:  # mirrors= is optional: nothing was declared
                    mirror = ""
                task = "" if spec.task_support == "forbidden" else f"  [task {spec.task_support}]"
                self.stdout.write(f"  {spec.name:<40} {kind}  {mirror}{task}".rstrip())
            for factory in surface.factories.values():
                kind = "read " if factory.read_only else "write"
                self.stdout.write(f"  {factory.name:<40} {kind}  built per request (factory)")
            features = surface.features
            for uri in features.resources:
                self.stdout.write(f"  resource  {uri}")
            for template in features.templates:
                self.stdout.write(f"  template  {template.uri_template}")
            for name in features.prompts:
                self.stdout.write(f"  prompt    {name}")
        raw = default_raw_tools.specs()
        if raw:
            served = bool(conf.get("ALLOW_RAW_TOOLS"))
            state = "SERVED to every caller" if served else "not served"
            self.stdout.write(
                f"\nRAW TOOLS ({len(raw)}; no CallContext, no tenant; {state}: "
                "MCP_TOOLS_ALLOW_RAW_TOOLS)"
            )
            for raw_spec in raw:
                self.stdout.write(f"  {raw_spec.name:<40} {raw_spec.qualname}")
