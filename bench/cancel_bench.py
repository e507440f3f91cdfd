"""Abandoned streams: how long the next calls wait after clients hang up (a benchmark).

    .venv/bin/python bench/cancel_bench.py [--abandon 16] [--next 8] [--rounds 3]

Starts a throwaway embedded PostgreSQL, seeds the demo farms, starts one uvicorn worker
(``MCP_TOOLS_MAX_CONCURRENT_CALLS`` 8, no slot wait) and, each round:

1. opens ``--abandon`` streamed ``cluck_production_report`` calls over 36 months (2026-07-28,
   a progress token, ``Accept: text/event-stream``) at once, reads each one's first event
   (a call refused as overloaded answers JSON at once) and hangs up;
2. at once sends ``--next`` ``cluck_list_flocks`` calls (quick: they measure the slots, not
   the CPU), each retried 20 ms after every -32010 refusal, and records when each is served.

Prints, per round, how long one uninterrupted report takes, the refusals and when the last
of the next calls was served.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    seed_demo,
    smoke_done,
    uvicorn_server,
)

NAME = "cluck_production_report"
ARGUMENTS = {"fromDate": "2023-07-01", "toDate": "2026-06-30"}  # 36 months, the most allowed


def _request(token: str, rid: int, name: str = NAME) -> tuple[bytes, dict[str, str]]:
    params = {
        "name": name,
        "arguments": ARGUMENTS if name == NAME else {},
        "_meta": {
            "progressToken": rid,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "cancel-bench", "version": "0"},
        },
    }
    body = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    return json.dumps(body).encode(), headers


async def _abandon(url: str, token: str, rid: int) -> bool:
    """Open a streamed call and hang up after its first event; ``True`` if it streamed."""
    body, headers = _request(token, rid)
    async with (
        httpx.AsyncClient(timeout=60) as client,
        client.stream("POST", url, content=body, headers=headers) as response,
    ):
        if response.headers["content-type"] != "text/event-stream":
            return False
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                return True
    return True


async def _served(url: str, token: str, rid: int, name: str = NAME) -> tuple[float, int]:
    """(seconds until served, refusals on the way)."""
    body, headers = _request(token, rid, name)
    headers = {**headers, "Accept": "application/json"}
    started, refused = time.monotonic(), 0
    async with httpx.AsyncClient(timeout=60) as client:
        while True:
            answer: dict[str, Any] = (await client.post(url, content=body, headers=headers)).json()
            if answer.get("error", {}).get("code") != -32010:
                assert answer["result"]["isError"] is False, answer
                return time.monotonic() - started, refused
            refused += 1
            await asyncio.sleep(0.02)


async def _round(url: str, token: str, abandon: int, following: int) -> dict[str, float]:
    alone, _ = await _served(url, token, 1)
    streamed = await asyncio.gather(*(_abandon(url, token, 10 + i) for i in range(abandon)))
    waits = await asyncio.gather(
        *(_served(url, token, 100 + i, "cluck_list_flocks") for i in range(following))
    )
    return {
        "report_s": alone,
        "abandoned": sum(streamed),
        "refused": sum(refused for _, refused in waits),
        "last_served_s": max(wait for wait, _ in waits),
        "median_served_s": statistics.median(wait for wait, _ in waits),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--abandon", type=int, default=16)
    parser.add_argument("--next", type=int, default=8, dest="following")
    parser.add_argument("--rounds", type=int, default=3)
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.abandon, args.following, args.rounds = 2, 2, 1
    with tempfile.TemporaryDirectory(prefix="cluck-bench-") as workdir:
        with embedded_database(Path(workdir)) as database:
            env, token = seed_demo(database, "bench")
            with uvicorn_server({**env, "MCP_TOOLS_RATE": "100000/m"}) as base:
                for number in range(args.rounds):
                    seen = asyncio.run(_round(f"{base}/mcp", token, args.abandon, args.following))
                    # Let any work still running finish before the next round.
                    time.sleep(max(seen["report_s"] * 2, 1))
                    print(
                        f"round {number + 1}: one report {seen['report_s']:.2f} s; "
                        f"{seen['abandoned']:.0f} streams abandoned; next {args.following} "
                        f"calls: {seen['refused']:.0f} refusals, median served after "
                        f"{seen['median_served_s']:.2f} s, last after "
                        f"{seen['last_served_s']:.2f} s"
                    )
    if args.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
