"""``manage.py mcp_tools``: the prepared catalogue per role."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand

from mcp_tools.surfaces import active_catalogue


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
    help = "List the prepared MCP tool catalogue per role (name, read/write, mirrored route)."

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
                self.stdout.write(f"  {spec.name:<40} {kind}  {mirror}".rstrip())
