"""``manage.py mcp_tools_reference [--prefix P]``: print the Markdown tool reference."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from mcp_tools.authoring.reference import render_reference


class Command(BaseCommand):
    help = "Print a Markdown reference of the registered MCP tools (for docs/)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--prefix", default="", help="Only tools whose name starts with it.")

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(render_reference(prefix=options["prefix"]), ending="")
