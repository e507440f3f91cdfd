"""``manage.py mcp_tools``: the prepared catalogue per role."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from mcp_tools.surfaces import active_catalogue


class Command(BaseCommand):
    help = "List the prepared MCP tool catalogue per role (name, read/write, mirrored route)."

    def handle(self, *args: Any, **options: Any) -> None:
        catalogue = active_catalogue()
        self.stdout.write(f"catalogue {catalogue.digest[:16]}  ({len(catalogue.specs)} tools)")
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
