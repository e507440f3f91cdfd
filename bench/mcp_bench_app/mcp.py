"""Bench tools: the trivial ``bench_add`` plus ``MCP_BENCH_EXTRA_TOOLS`` filler tools."""

from __future__ import annotations

import os
import time

from pydantic import BaseModel

from mcp_tools import CallContext, tool


class Sum(BaseModel):
    sum: int
    tenant: int


@tool(name="bench_add", read_only=True, mirrors_no_route="benchmark tool", description="a + b")
async def bench_add(ctx: CallContext, *, a: int, b: int) -> Sum:
    # Declared non-blocking (async def), as the peers' tools run: on the event loop.
    return Sum(sum=a + b, tenant=ctx.tenant_id)


@tool(
    name="bench_add_in_thread",
    read_only=True,
    mirrors_no_route="benchmark tool",
    description="a + b, in a worker thread",
)
def bench_add_in_thread(ctx: CallContext, *, a: int, b: int) -> Sum:
    return Sum(sum=a + b, tenant=ctx.tenant_id)


def _filler(index: int) -> None:
    def filler(ctx: CallContext, *, value: int = 0) -> Sum:
        return Sum(sum=value + index, tenant=ctx.tenant_id)

    filler.__annotations__ = {"ctx": CallContext, "value": int, "return": Sum}
    tool(
        name=f"bench_filler_{index:04d}",
        read_only=True,
        mirrors_no_route="benchmark filler",
        description=f"Filler tool number {index} for the tools/list benchmark.",
    )(filler)


for _index in range(int(os.environ.get("MCP_BENCH_EXTRA_TOOLS", "10"))):
    _filler(_index)


class Slept(BaseModel):
    slept_ms: int


@tool(
    name="bench_sleep",
    read_only=True,
    mirrors_no_route="benchmark tool",
    description="Wait ms milliseconds (a tool bound by I/O, not CPU: bench/mcp_load.py).",
)
def bench_sleep(ctx: CallContext, *, ms: int) -> Slept:
    time.sleep(ms / 1000)
    return Slept(slept_ms=ms)
