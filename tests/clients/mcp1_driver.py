"""Drive ``langchain-mcp-adapters`` (which needs ``mcp`` 1.x) against a Cluck server.

Runs in var/clients-mcp1, never in the project venv, so it imports nothing from the project.
Reads one JSON object on stdin — ``{"url", "bearers": {role: token}, "steps": [[name, step]]}``
where a step is ``{"as": role, "list": true}`` or ``{"as": role, "tool": name, "arguments":
{...}}`` — and prints ``{"client": {...}, "observations": {name: observation}}`` on stdout:
what the client handed its caller, in the shape ``test_python_clients.py`` compares across
clients (``tools`` / ``result`` / ``tool_error`` / ``rpc_error``, plus ``surface`` and, where the
client has one, ``model_text``: what a model would read).
"""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp.shared.exceptions import McpError
from mcp.types import LATEST_PROTOCOL_VERSION
from mcp.types import Tool as McpTool


def _connection(url: str, bearer: str) -> dict[str, Any]:
    return {
        "transport": "streamable_http",
        "url": url,
        "headers": {"Authorization": f"Bearer {bearer}"},
    }


def _text(message: ToolMessage) -> str:
    blocks = message.content if isinstance(message.content, list) else [message.content]
    return "".join(b if isinstance(b, str) else b.get("text", "") for b in blocks)


class Driver:
    def __init__(self, url: str, bearers: dict[str, str]) -> None:
        self.url = url
        self.bearers = bearers
        self.tools: dict[str, dict[str, BaseTool]] = {}

    def client(self, role: str) -> MultiServerMCPClient:
        connection = _connection(self.url, self.bearers[role])
        return MultiServerMCPClient({"cluck": connection})  # type: ignore[dict-item]

    async def tools_for(self, role: str) -> dict[str, BaseTool]:
        if role not in self.tools:
            self.tools[role] = {tool.name: tool for tool in await self.client(role).get_tools()}
        return self.tools[role]

    async def definition(self, name: str) -> McpTool:
        for role in self.bearers:
            async with self.client(role).session("cluck") as session:
                for definition in (await session.list_tools()).tools:
                    if definition.name == name:
                        return definition
        raise LookupError(name)

    async def tool(self, role: str, name: str) -> BaseTool:
        tools = await self.tools_for(role)
        if name in tools:
            return tools[name]
        # A tool this role does not list: the definition another token saw (a stale list after
        # a role change), bound to this role's connection.
        return convert_mcp_tool_to_langchain_tool(
            None,
            await self.definition(name),
            connection=_connection(self.url, self.bearers[role]),  # type: ignore[arg-type]
        )

    async def step(self, step: dict[str, Any]) -> dict[str, Any]:
        role = step["as"]
        if step.get("list"):
            return {"tools": sorted(await self.tools_for(role))}
        tool = await self.tool(role, step["tool"])
        call = {"type": "tool_call", "id": "call-1", "name": tool.name, "args": step["arguments"]}
        try:
            message = await tool.ainvoke(call)
        except McpError as exc:
            return {
                "rpc_error": {"code": exc.error.code, "message": exc.error.message},
                "surface": "raises mcp.shared.exceptions.McpError",
            }
        assert isinstance(message, ToolMessage), message
        text = _text(message)
        if message.status == "error":
            return {
                "tool_error": json.loads(text)["error"],
                "surface": "ToolMessage(status='error')",
                "model_text": text,
            }
        artifact = message.artifact or {}
        return {
            "result": artifact.get("structured_content"),
            "surface": "ToolMessage(status='success')",
            "model_text": text,
        }


async def main() -> None:
    request = json.load(sys.stdin)
    driver = Driver(request["url"], request["bearers"])
    observations = {name: await driver.step(step) for name, step in request["steps"]}
    client = {
        "name": "langchain-mcp-adapters",
        "version": version("langchain-mcp-adapters"),
        "mcp": version("mcp"),
        "protocolVersion": LATEST_PROTOCOL_VERSION,
    }
    json.dump({"client": client, "observations": observations}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
