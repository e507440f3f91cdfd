"""The Node MCP clients people connect with, against a real server on the demo farms.

Issue 11: a tool error carried ``structuredContent: {"error": …}``; the TypeScript SDK checks
structured content against the tool's ``outputSchema`` even on ``isError``, threw a schema
error, and the model never saw our code. Each client here — the official TypeScript SDK (what
Claude Code is built on), the MCP Inspector CLI and ``mcp-remote`` over stdio (Claude
Desktop's bridge) — lists, reads, writes and replays, and must hand OUR error code to its
caller as an ``isError`` result: ``Flock.Ambiguous`` with the candidate ids,
``Idempotency.KeyReused``, ``Tool.InvalidArguments``; a tool the role may not use is the
JSON-RPC -32602 error. The clients are pinned in ``clients/node`` (``scripts/ensure-node``).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.clients import node
from tests.clients.conftest import DemoServer
from tests.mutations import mutation
from tests.tool_errors import tool_error

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db]

HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
HIDDEN = -32602
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # in every 2026-07-28 result


def record_args(key: str, flock: int | str, day: str) -> dict[str, Any]:
    return {
        "idempotencyKey": key,
        "flock": flock,
        "date": day,
        "totalEggs": 950,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 2,
        "grades": [{"grade": "Large", "quantity": 900}, {"grade": "Medium", "quantity": 35}],
    }


def assert_ambiguous(error: dict[str, Any], server: DemoServer) -> None:
    assert error["code"] == "Flock.Ambiguous", error
    candidates = {c["flockId"] for c in error["data"]["candidates"]}
    assert candidates == set(server.house_2_brown.values()), error


def assert_write_and_replay(first: dict[str, Any], replay: dict[str, Any], day: str) -> None:
    assert first["isError"] is False and replay["isError"] is False, (first, replay)
    recorded, replayed = first["structuredContent"], replay["structuredContent"]
    assert recorded["replayed"] is False and recorded["date"] == day
    assert recorded["flockName"] == "House 2 Brown" and recorded["status"] == "Draft"
    assert replayed["replayed"] is True and replayed["dailyEntryId"] == recorded["dailyEntryId"]


# --- the official TypeScript SDK ---------------------------------------------------------


def _list() -> dict[str, Any]:
    return {"op": "list"}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"op": "call", "name": name, "arguments": arguments}


def returned(outcome: dict[str, Any]) -> dict[str, Any]:
    """What ``Client.callTool`` returned; a throw means the client swallowed our answer."""
    assert "thrown" not in outcome, f"the SDK threw instead of returning: {outcome['thrown']}"
    result: dict[str, Any] = outcome["result"]
    return result


@mutation(
    "mcp_tools/execution/results.py",
    find='        "isError": True,\n    }\n\n\ndef failure_result',
    replace=(
        '        "isError": True,\n'
        '        "structuredContent": {"error": error},\n'
        "    }\n"
        "\n"
        "\n"
        "def failure_result"
    ),
)
def test_typescript_sdk_hands_our_tool_errors_to_its_caller(
    demo_server: DemoServer, tmp_path: Path
) -> None:
    """Mutation: put ``"structuredContent": {"error": error}`` back into
    ``mcp_tools.execution.results.error_result`` → SDK 1.x's ``callTool`` throws McpError -32602
    ("Structured content does not match the tool's output schema") for every tool error and
    our code never reaches the caller → red.

    One Node process, three sessions: the owner's whole story in the handshake era (SDK 1.x,
    validators primed by ``listTools`` as hosts do), readonly calling a write tool, and the
    owner in the 2026-07-28 era (``@modelcontextprotocol/client`` 2.x; SDK 1.x cannot speak it).
    """
    node.require(node.SDK_DRIVER, node.SDK, node.SDK_2026)
    server, day = demo_server, demo_server.days_ago(20)
    write = record_args("ts-sdk-1", server.house_2_brown["Active"], day)
    ambiguous = {**write, "idempotencyKey": "ts-sdk-ambiguous", "flock": "House 2 Brown"}
    plan = {
        "url": server.url,
        "sessions": [
            {
                "name": "owner",
                "bearer": server.bearers["owner"],
                "era": HANDSHAKE,
                "steps": [
                    _list(),
                    _call("cluck_list_flocks", {}),
                    _call("cluck_record_daily_entry", ambiguous),
                    _call("cluck_record_daily_entry", write),
                    _call("cluck_record_daily_entry", write),
                    _call("cluck_record_daily_entry", {**write, "totalEggs": 951}),
                    _call("cluck_list_flocks", {"limit": 0}),
                ],
            },
            {
                "name": "readonly",
                "bearer": server.bearers["readonly"],
                "era": HANDSHAKE,
                "steps": [_list(), _call("cluck_record_daily_entry", write)],
            },
            {
                "name": "owner, 2026-07-28",
                "bearer": server.bearers["owner"],
                "era": MODERN,
                "steps": [
                    _list(),
                    _call("cluck_record_daily_entry", {**ambiguous, "idempotencyKey": "ts-2026"}),
                    _call("cluck_list_flocks", {"limit": 0}),
                ],
            },
        ],
    }
    run = subprocess.run(
        [str(node.NODE), str(node.SDK_DRIVER)],
        input=json.dumps(plan),
        cwd=node.CLIENTS,
        env=node.client_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    owner, readonly, modern = json.loads(run.stdout)["sessions"]

    assert owner["protocolVersion"] == HANDSHAKE
    tools, flocks, amb, first, replay, reused, invalid = owner["steps"]
    assert "cluck_record_daily_entry" in {tool["name"] for tool in returned(tools)["tools"]}
    assert returned(flocks)["isError"] is False
    names = [flock["name"] for flock in returned(flocks)["structuredContent"]["flocks"]]
    assert names.count("House 2 Brown") == 2
    assert_ambiguous(tool_error(returned(amb)), server)
    assert_write_and_replay(returned(first), returned(replay), day)
    assert tool_error(returned(reused))["code"] == "Idempotency.KeyReused"
    assert tool_error(returned(invalid))["code"] == "Tool.InvalidArguments"

    tools, hidden = readonly["steps"]
    assert "cluck_record_daily_entry" not in {tool["name"] for tool in returned(tools)["tools"]}
    assert "thrown" in hidden and hidden["thrown"]["code"] == HIDDEN, hidden

    assert modern["protocolVersion"] == MODERN
    tools, amb, invalid = modern["steps"]
    assert "cluck_record_daily_entry" in {tool["name"] for tool in returned(tools)["tools"]}
    assert SERVER_INFO in returned(amb)["_meta"]
    assert_ambiguous(tool_error(returned(amb)), server)
    assert tool_error(returned(invalid))["code"] == "Tool.InvalidArguments"


# --- MCP Inspector CLI ---------------------------------------------------------------------

TOOL_ERROR_EXIT = 5  # the Inspector's EXIT_CODES.TOOL_ERROR: the tool answered isError
AUTH_REQUIRED_EXIT = 3


def tool_arg_pairs(arguments: dict[str, Any]) -> list[str]:
    # The Inspector JSON-parses each value and falls back to the raw string.
    pairs = [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in arguments.items()]
    return ["--tool-arg", *pairs] if pairs else []


class Inspector:
    """``mcp-inspector --cli`` against the demo server: one process per method call."""

    def __init__(self, server: DemoServer, home: Path) -> None:
        self.server = server
        self.env = node.client_env(home)

    def __call__(self, bearer: str, *args: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
        """Exit status, the JSON on stdout, and the error envelope on stderr (or {})."""
        run = subprocess.run(
            [str(node.NODE), str(node.INSPECTOR), "--cli", self.server.url]
            + ["--transport", "http", "--header", f"Authorization: Bearer {bearer}"]
            + ["--stored-auth-only", "--format", "json", *args],
            cwd=node.CLIENTS,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        envelopes = [
            json.loads(line) for line in run.stderr.splitlines() if line.startswith('{"error"')
        ]
        return (
            run.returncode,
            json.loads(run.stdout) if run.stdout.strip() else {},
            envelopes[-1]["error"] if envelopes else {},
        )

    def call(
        self, role: str, tool: str, arguments: dict[str, Any], *extra: str
    ) -> tuple[int, dict[str, Any], dict[str, Any]]:
        return self(
            self.server.bearers[role],
            *extra,
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            *tool_arg_pairs(arguments),
        )


@mutation(
    "mcp_tools/execution/results.py",
    find='        "isError": True,\n    }\n\n\ndef failure_result',
    replace='        "isError": False,\n    }\n\n\ndef failure_result',
)
def test_inspector_cli_shows_our_codes_and_exit_statuses(
    demo_server: DemoServer, tmp_path: Path
) -> None:
    """Mutation: answer a tool error without ``isError: true`` (``"isError": False`` in
    ``mcp_tools.execution.results.error_result``) → the Inspector rejects it for lacking the
    structured content the outputSchema promises (exit 1, our code lost) → red. The Inspector
    refuses a tool its ``tools/list`` lacks before sending anything (``tool_not_found``), so
    the hidden tool is asserted through that list."""
    node.require(node.INSPECTOR)
    server, day = demo_server, demo_server.days_ago(21)
    inspector = Inspector(server, tmp_path)
    write = record_args("inspector-1", server.house_2_brown["Active"], day)

    status, out, _ = inspector(server.bearers["owner"], "--method", "tools/list")
    assert status == 0
    assert "cluck_record_daily_entry" in {tool["name"] for tool in out["result"]["tools"]}

    status, out, _ = inspector.call("owner", "cluck_list_flocks", {"status": "Active"})
    assert status == 0 and out["result"]["isError"] is False
    assert "House 2 Brown" in {f["name"] for f in out["result"]["structuredContent"]["flocks"]}

    status, first, _ = inspector.call("owner", "cluck_record_daily_entry", write)
    assert status == 0
    status, replay, _ = inspector.call("owner", "cluck_record_daily_entry", write)
    assert status == 0
    assert_write_and_replay(first["result"], replay["result"], day)

    def tool_error_of(role: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        status, out, envelope = inspector.call(role, tool, arguments)
        assert (status, envelope.get("code")) == (TOOL_ERROR_EXIT, "tool_is_error"), envelope
        return tool_error(out["result"])

    ambiguous = {**write, "idempotencyKey": "inspector-2", "flock": "House 2 Brown"}
    assert_ambiguous(tool_error_of("owner", "cluck_record_daily_entry", ambiguous), server)
    reused = tool_error_of("owner", "cluck_record_daily_entry", {**write, "totalEggs": 951})
    assert reused["code"] == "Idempotency.KeyReused"

    for extra in [(), ("--protocol-era", "modern")]:
        status, out, _ = inspector.call("owner", "cluck_list_flocks", {"limit": 0}, *extra)
        assert status == TOOL_ERROR_EXIT, out
        assert tool_error(out["result"])["code"] == "Tool.InvalidArguments"
    assert SERVER_INFO in out["result"]["_meta"]  # the last one was 2026-07-28

    status, _, envelope = inspector.call("readonly", "cluck_record_daily_entry", write)
    assert (status, envelope["code"]) == (TOOL_ERROR_EXIT, "tool_not_found"), envelope

    status, _, envelope = inspector("ck_pat_not-a-token", "--method", "tools/list")
    assert (status, envelope["code"]) == (AUTH_REQUIRED_EXIT, "auth_required"), envelope


# --- mcp-remote over stdio -----------------------------------------------------------------


class StdioProxy:
    """``mcp-remote`` as Claude Desktop runs it: newline-delimited JSON-RPC on stdin/stdout."""

    def __init__(self, server: DemoServer, bearer: str, home: Path, *options: str) -> None:
        # mcp-remote logs every message on stderr: a file, so a full pipe never blocks it.
        self.log_path = home / f"mcp-remote-{time.monotonic_ns()}.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [str(node.NODE), str(node.MCP_REMOTE), server.url]
            + ["--header", f"Authorization:Bearer {bearer}", "--transport", "http-only", *options],
            cwd=node.CLIENTS,
            env=node.client_env(home),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
        )
        self._buffer = b""
        self._id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC response to one request (notifications in between are skipped)."""
        self._id += 1
        self.send({"id": self._id, "method": method, **({"params": params} if params else {})})
        while True:
            message: dict[str, Any] = json.loads(self._line(deadline=time.monotonic() + 30))
            if message.get("id") == self._id:
                return message

    def initialize(self) -> dict[str, Any]:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "cluck-tests", "version": "0.1.0"},
            },
        )
        self.send({"method": "notifications/initialized"})
        return reply

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def _line(self, *, deadline: float) -> bytes:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(fd, 65536) if ready else None
            if not chunk:
                raise AssertionError(
                    f"mcp-remote {'timed out' if chunk is None else 'exited'}; its log:\n"
                    + self.log_path.read_text(errors="replace")[-4000:]
                )
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def wait_for_log(self, text: str, *, seconds: float) -> str:
        """The proxy's log once ``text`` is in it (and the line after it has arrived)."""
        deadline = time.monotonic() + seconds
        while True:
            log = self.log_path.read_text(errors="replace")
            _, found, after = log.partition(text)
            if found and "\n" in after.lstrip("\n"):
                return log
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"mcp-remote never logged {text!r}; its log:\n{log[-4000:]}")
            time.sleep(0.1)

    def unread(self) -> bytes:
        """Whatever the proxy wrote to stdout that no request has consumed (after it exited)."""
        assert self.process.stdout is not None
        return self._buffer + self.process.stdout.read()

    def close(self) -> int:
        """Close stdin (how a host disconnects) and return the exit status."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        finally:
            self.log.close()


def result(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    value: dict[str, Any] = reply["result"]
    return value


@mutation(
    "mcp_tools/methods/tools.py",
    find='        return error(req.era, req.rid, INVALID_PARAMS, f"Unknown tool: {name}")',
    replace=(
        '        return render(req, runner.Done(error_result("Tool.NotFou'
        'nd", f"Unknown tool: {name}")))'
    ),
)
@mutation("cluck/urls.py", find='    path("", include("tenancy.oauth.urls")),\n', replace="")
def test_mcp_remote_relays_our_codes_over_stdio(demo_server: DemoServer, tmp_path: Path) -> None:
    """Mutation: answer a hidden tool as an ``isError`` result instead of -32602 (make
    ``mcp_tools.methods.tools.call_tool`` treat it as a tool error) → the readonly session gets a
    result → red.

    Three proxies: the owner's story in the handshake era, readonly with ``--protocol auto``
    (mcp-remote finds 2026-07-28 through ``server/discover`` and bridges every request), and
    a bearer the server refuses (the 401 names the OAuth metadata, so mcp-remote discovers
    tenancy.oauth, registers and sends its user to our authorization endpoint for exactly this
    resource; nothing reaches its stdout meanwhile). Mutation: unmount ``tenancy.oauth.urls``
    in ``cluck/urls.py`` → no sign-in URL → red."""
    node.require(node.MCP_REMOTE)
    server, day = demo_server, demo_server.days_ago(22)
    write = record_args("mcp-remote-1", server.house_2_brown["Active"], day)

    proxy = StdioProxy(server, server.bearers["owner"], tmp_path)
    try:
        assert result(proxy.initialize())["protocolVersion"] == HANDSHAKE
        tools = result(proxy.request("tools/list"))["tools"]
        assert "cluck_record_daily_entry" in {tool["name"] for tool in tools}
        flocks = result(proxy.call("cluck_list_flocks", {}))["structuredContent"]["flocks"]
        assert [f["name"] for f in flocks].count("House 2 Brown") == 2
        ambiguous = {**write, "idempotencyKey": "mcp-remote-2", "flock": "House 2 Brown"}
        assert_ambiguous(
            tool_error(result(proxy.call("cluck_record_daily_entry", ambiguous))), server
        )
        first = result(proxy.call("cluck_record_daily_entry", write))
        replay = result(proxy.call("cluck_record_daily_entry", write))
        assert_write_and_replay(first, replay, day)
        reused = result(proxy.call("cluck_record_daily_entry", {**write, "totalEggs": 951}))
        assert tool_error(reused)["code"] == "Idempotency.KeyReused"
        invalid = result(proxy.call("cluck_list_flocks", {"limit": 0}))
        assert tool_error(invalid)["code"] == "Tool.InvalidArguments"
    finally:
        assert proxy.close() == 0

    proxy = StdioProxy(server, server.bearers["readonly"], tmp_path, "--protocol", "auto")
    try:
        proxy.initialize()
        tools = result(proxy.request("tools/list"))
        assert SERVER_INFO in tools["_meta"]  # answered in 2026-07-28
        assert "cluck_record_daily_entry" not in {tool["name"] for tool in tools["tools"]}
        hidden = proxy.call("cluck_record_daily_entry", write)
        assert "error" in hidden and hidden["error"]["code"] == HIDDEN, hidden
        invalid = result(proxy.call("cluck_list_flocks", {"limit": 0}))
        assert tool_error(invalid)["code"] == "Tool.InvalidArguments"
    finally:
        assert proxy.close() == 0

    # mcp-remote connects before it reads stdin. A refused bearer: the challenge leads it to
    # OAuth sign-in, which waits for a person (tests/tenancy/oauth drives that flow to the end).
    refused = StdioProxy(server, "ck_pat_not-a-token", tmp_path)
    origin = server.url.removesuffix("/mcp")
    try:
        sign_in = refused.wait_for_log("Please authorize this client by visiting:", seconds=30)
        assert refused.process.poll() is None, sign_in
    finally:
        refused.process.kill()
        refused.close()
    assert f"{origin}/oauth/authorize/?" in sign_in, sign_in
    assert f"resource={quote(server.url, safe='')}" in sign_in, sign_in
    assert refused.unread() == b""
