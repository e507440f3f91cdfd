"""``manage.py mcp_call TOOL --tenant CODE --email EMAIL [--arguments JSON] [--path PATH]``.

Calls one tool as that member through the same path a client's request takes (the ``/mcp``
view, the middleware, ``CallContext``; in-process, ``mcp_tools.testing.client.MCPClient``, no token
minted) and prints what the client would receive: the result, or the error code and data.
A replay under a reused ``idempotencyKey`` says so (on stderr; the JSON on stdout carries
``replayed``). The exit status is 1 on a tool error, 2 on a protocol error (JSON-RPC).
The endpoint is wherever the project's URLconf mounts ``mcp_tools.urls`` (``--path`` to name
another).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_tools.serving.routing import mcp_path
from mcp_tools.testing.client import ERAS, MODERN, MCPClient, MCPProtocolError
from tenancy.management.commands._tenant import add_tenant_argument, tenant_by_code
from tenancy.members import get_membership_model, memberships, user_field_path


class Command(BaseCommand):
    help = "Call one MCP tool as a member, in-process, and print what a client would see."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tool", help="The tool's name.")
        add_tenant_argument(parser)
        parser.add_argument("--email", required=True, help="The member's email.")
        parser.add_argument(
            "--arguments", default="{}", help="The arguments as a JSON object, e.g. '{\"a\": 1}'."
        )
        parser.add_argument("--era", choices=ERAS, default=MODERN, help="The protocol era.")
        parser.add_argument(
            "--idempotency-key",
            dest="idempotency_key",
            help="Sent as idempotencyKey (a write tool requires one; or put it in --arguments).",
        )
        parser.add_argument(
            "--path",
            help="The MCP endpoint's path (default: where the URLconf mounts mcp_tools.urls).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            arguments = json.loads(options["arguments"])
        except ValueError as exc:
            raise CommandError(f"--arguments is not JSON: {exc}") from exc
        if not isinstance(arguments, dict):
            raise CommandError("--arguments must be a JSON object.")
        tenant = tenant_by_code(options["tenant"])
        email = options["email"].strip()
        path = options["path"] or mcp_path()
        if path is None:
            raise CommandError(
                'No route serves the MCP endpoint: add path("", include("mcp_tools.urls")) '
                "to the URLconf, or pass --path (mcp_tools.W003)."
            )
        client = MCPClient(membership=_membership(tenant, email), era=options["era"], path=path)
        try:
            with _quiet_client_errors():
                result = client.call_tool(
                    options["tool"], arguments, idempotency_key=options["idempotency_key"]
                )
        except json.JSONDecodeError:
            raise CommandError(
                f"{path} did not answer JSON-RPC: is mcp_tools.urls mounted there? (--path)"
            ) from None
        except MCPProtocolError as error:
            self.stdout.write(_dump({"error": _protocol_error(error)}))
            raise CommandError(
                f"protocol error {error.code}: {error.message}", returncode=2
            ) from None
        if result.is_error:
            self.stdout.write(_dump(result.error))
            raise CommandError(f"tool error {result.error_code}", returncode=1)
        self.stdout.write(_dump(result.structured if result.structured is not None else result.raw))
        if result.replayed:
            self.stderr.write("replayed: the stored result of the first call with this key")
        elif result.replayed is False:
            self.stderr.write("executed (a retry with this idempotencyKey replays it)")


@contextmanager
def _quiet_client_errors() -> Iterator[None]:
    """No ``Bad Request: /mcp`` line from Django's request logger: a 4xx is the answer this
    command prints itself. Server errors (5xx, logged at ERROR) still show."""
    logger = logging.getLogger("django.request")
    level = logger.level
    logger.setLevel(max(logging.ERROR, logger.getEffectiveLevel()))
    try:
        yield
    finally:
        logger.setLevel(level)


def _membership(tenant: Any, email: str) -> Any:
    model = get_membership_model()
    lookup = {f"{user_field_path(model, 'email')}__iexact": email}
    membership = memberships(tenant=tenant).filter(**lookup).first()
    if membership is None:
        raise CommandError(f"{email} is not a member of {tenant}.")
    return membership


def _protocol_error(error: MCPProtocolError) -> dict[str, Any]:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return body


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
