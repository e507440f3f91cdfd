"""``manage.py mcp_tools``: the prepared catalogue per role."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand

from mcp_tools.surfaces import active_catalogue


class Command(BaseCommand):
    help = (
        "List the prepared MCP tool catalogue per role (name, read/write, A2A skill or not when "
        "a2a_tools is installed, mirrored route)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        catalogue = active_catalogue()
        a2a = apps.is_installed("a2a_tools")
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
                skill = ("a2a skill  " if spec.a2a_skill else "a2a -      ") if a2a else ""
                self.stdout.write(f"  {spec.name:<40} {kind}  {skill}{mirror}".rstrip())
