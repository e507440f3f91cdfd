"""``manage.py mcp_server_json --url URL [--name NAME] [--server-version V] [--output FILE]``.

Writes the ``server.json`` the MCP Registry publishes (``mcp-publisher publish``): this
server's identity and its one Streamable HTTP remote. ``--url`` defaults to
``MCP_TOOLS_PUBLIC_URL``; a URL holding ``{tenant}`` (a host per tenant) declares it as a
variable the client fills in. ``--output -`` prints it instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_tools import conf
from mcp_tools.serving.server_card import server_json


class Command(BaseCommand):
    help = "Write server.json (MCP Registry metadata) for this server's /mcp."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            help="The public Streamable HTTP URL (default: MCP_TOOLS_PUBLIC_URL), e.g. "
            "https://mcp.example.com/mcp or https://{tenant}.example.com/mcp.",
        )
        parser.add_argument(
            "--name",
            help="Reverse-DNS name (default: MCP_TOOLS_REGISTRY_NAME), e.g. io.github.acme/app.",
        )
        parser.add_argument(
            "--server-version", dest="server_version", help="Default: serverInfo's."
        )
        parser.add_argument("--output", default="server.json", help="A file, or - for stdout.")

    def handle(self, *args: Any, **options: Any) -> None:
        url = options["url"] or conf.get("PUBLIC_URL")
        if not url:
            raise CommandError("Pass --url (or set MCP_TOOLS_PUBLIC_URL): the public URL of /mcp.")
        if not str(url).startswith(("https://", "http://")):
            raise CommandError(f"--url must be an http(s) URL, not {url!r}.")
        document = server_json(
            url=str(url), name=options["name"], version=options["server_version"]
        )
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        if options["output"] == "-":
            self.stdout.write(text, ending="")
            return
        Path(options["output"]).write_text(text, encoding="utf-8")
        self.stdout.write(f"wrote {options['output']} ({document['name']} {document['version']})")
