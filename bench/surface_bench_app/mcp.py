"""Bench tools for ``bench/surface_bench.py``.

``bench_echo`` is the same definition either way: a prepared ``@tool`` (built once at start-up)
or, with ``SURFACE_BENCH_FACTORY=1``, an identity factory (built for every request that lists
or calls it). ``bench_progress`` reports three progress notifications, then returns.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from mcp_tools import CallContext, FactoryTool, tool, tool_factory

GRADES = ("Small", "Medium", "Large", "Jumbo", "Seconds")
DESCRIPTION = "Echoes one of the farm's grades (bench)."


class Echo(BaseModel):
    grade: str
    tenant: int


class EchoArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")
    grade: Literal["Small", "Medium", "Large", "Jumbo", "Seconds"]


if os.environ.get("SURFACE_BENCH_FACTORY") == "1":

    @tool_factory(
        name="bench_echo",
        read_only=True,
        result=Echo,
        mirrors_no_route="benchmark tool",
        description=DESCRIPTION,
    )
    def bench_echo_factory(ctx: CallContext) -> FactoryTool:
        # What a real factory does: build the argument model from the caller's data.
        fields: dict[str, Any] = {"grade": (Literal.__getitem__(GRADES), ...)}
        arguments = create_model("EchoArguments", __config__=ConfigDict(extra="forbid"), **fields)

        def run(ctx: CallContext, args: Any) -> Echo:
            return Echo(grade=args.grade, tenant=ctx.tenant_id)

        return FactoryTool(arguments=arguments, run=run)

else:

    @tool(
        name="bench_echo",
        read_only=True,
        mirrors_no_route="benchmark tool",
        description=DESCRIPTION,
    )
    def bench_echo(ctx: CallContext, arguments: EchoArguments) -> Echo:
        return Echo(grade=arguments.grade, tenant=ctx.tenant_id)


@tool(
    name="bench_progress",
    read_only=True,
    mirrors_no_route="benchmark tool",
    description="Reports three progress notifications, then returns (bench).",
)
def bench_progress(ctx: CallContext, *, steps: int = 3) -> Echo:
    for step in range(steps):
        ctx.report_progress(step + 1, steps)
    return Echo(grade="Large", tenant=ctx.tenant_id)
