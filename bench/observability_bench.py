"""Observability benchmark (not a test): what the call record, metrics and spans cost a call.

    .venv/bin/python bench/observability_bench.py [--calls 200] [--rounds 11] [--micro 20000]

Starts an embedded PostgreSQL in a temporary directory, migrates and seeds one farm with an
owner and a bearer token, then measures in this one process, with every configuration in the
same run and the rounds interleaved (the VM's speed drifts; only same-round comparisons are
fair):

1. end to end: ``tools/call`` of ``cluck_list_flocks`` (handshake era) through the whole
   stack (Django test client → middleware → ``/mcp`` → tool in a worker thread → PostgreSQL),
   median microseconds per call;
2. isolated: the observation alone, ``observability.tool_call`` around a result note, with no
   request and no database, median microseconds per call.

Configurations:

- ``off``: no observability at all: ``methods.tools._call`` undecorated (its ``__wrapped__``),
  ``observability.carry`` the identity, no signal receivers (the baseline);
- ``on``: what a deployment gets by default: the record built but not written (the
  ``mcp_tools.calls`` logger below INFO), the Prometheus samples, no tracer provider;
- ``+log``: the record written at INFO through ``JsonFormatter`` to a handler on /dev/null;
- ``+otel``: and a tracer provider (SDK, batch processor, an exporter that drops the spans):
  one span per call, its context carried into the worker thread;
- ``+django`` (end to end only): and Django's request spans (``instrument_django``).

Overheads are each configuration's per-round difference from ``off`` (median over rounds).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    migrate_and_seed,
    smoke_done,
)

TOOL = "cluck_list_flocks"
CONFIGS = ("off", "on", "+log", "+otel")
E2E_CONFIGS = (*CONFIGS, "+django")


class _Switches:
    """Turns the observability of this process on and off between measurements."""

    def __init__(self) -> None:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        from idempotency import lease_stolen, unit_finished
        from mcp_tools import observability
        from mcp_tools.methods import tools as toolcall
        from mcp_tools.observability import JsonFormatter, metrics, tracing
        from tenancy import bearer_refused, rate_limited

        class _Drop(SpanExporter):
            def export(self, spans: Sequence[Any]) -> SpanExportResult:
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(_Drop()))
        trace.set_tracer_provider(provider)
        self.provider = provider
        self.observability, self.toolcall, self.tracing, self.metrics = (
            observability,
            toolcall,
            tracing,
            metrics,
        )
        self.observed = toolcall._call
        # functools.wraps keeps the undecorated handler.
        self.unobserved = self.observed.__wrapped__  # type: ignore[attr-defined]
        # metrics.connect's receivers, by the dispatch_uid it gives them.
        self.receivers = [
            (unit_finished, "mcp_tools.metrics.unit_finished"),
            (lease_stolen, "mcp_tools.metrics.lease_stolen"),
            (bearer_refused, "mcp_tools.metrics.bearer_refused"),
            (rate_limited, "mcp_tools.metrics.rate_limited"),
        ]
        self.carry = observability.carry
        self.recording = tracing.recording
        self.call_logger = logging.getLogger("mcp_tools.calls")
        self.devnull = open(os.devnull, "w")  # noqa: SIM115 (closed by close())
        self.handler = logging.StreamHandler(self.devnull)
        self.handler.setFormatter(JsonFormatter())

    def set(self, config: str) -> None:
        off = config == "off"
        self.toolcall._call = self.unobserved if off else self.observed
        self.observability.carry = (lambda work: work) if off else self.carry
        if off:
            for signal, uid in self.receivers:
                signal.disconnect(dispatch_uid=uid)
        else:
            self.metrics.connect()
        tracing_on = config in ("+otel", "+django")
        self.tracing.recording = self.recording if tracing_on else (lambda: False)
        logging_on = config in ("+log", "+otel", "+django")
        self.call_logger.setLevel(logging.INFO if logging_on else logging.WARNING)
        self.call_logger.propagate = False
        if logging_on:
            self.call_logger.addHandler(self.handler)
        else:
            self.call_logger.removeHandler(self.handler)

    def close(self) -> None:
        self.provider.shutdown()
        self.devnull.close()


def _client(bearer: str) -> Any:
    from django.test import Client

    return Client(
        HTTP_HOST="localhost",
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )


def _call_once(client: Any, i: int) -> None:
    body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": TOOL}}
    response = client.post("/mcp", json.dumps(body), content_type="application/json")
    assert response.status_code == 200, response.content[:300]
    assert json.loads(response.content)["result"]["isError"] is False, response.content[:300]


def _per_call_us(work: Callable[[int], None], n: int) -> tuple[float, float]:
    """(CPU, wall) microseconds per call. CPU time is this process's, every thread included
    (the worker threads, the span processor's): what observing adds is CPU work, and CPU time
    is far less disturbed than wall time by other processes on a shared VM."""
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(n):
        work(i)
    return (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6


def _observed_alone(switches: _Switches) -> Callable[[int], None]:
    """One bare observation: what a call pays for being observed, nothing else (the baseline,
    ``off``, is the same loop noting the result on nothing)."""
    ctx = SimpleNamespace(
        protocol_version="2025-11-25",
        request_id="r" * 32,
        tenant_id=1,
        user_id=1,
        role=SimpleNamespace(label="Owner"),
        email="owner@bench.test",
    )
    result = {"content": [{"type": "text", "text": "{}"}], "isError": False}

    def work(i: int) -> None:
        with switches.observability.tool_call(ctx, tool=TOOL, known=True, rpc_id=i) as call:
            call.result(result)

    return work


def _unobserved(i: int) -> None:
    pass


def _report(title: str, samples: dict[str, list[tuple[float, float]]], ratios: bool) -> None:
    print(f"\n{title}")
    header = f"  {'config':<9} {'CPU µs/call':>12} {'CPU +µs':>9} {'(quartiles)':>19}"
    header += f" {'CPU +%':>8}" if ratios else ""
    print(header + f" {'wall µs/call':>13} {'wall +µs':>9}")
    base = samples["off"]
    for config, values in samples.items():
        line = f"  {config:<9}"
        for kind in (0, 1):
            mine = [v[kind] for v in values]
            diffs = [v[kind] - b[kind] for v, b in zip(values, base, strict=True)]
            line += f" {statistics.median(mine):12.1f} {statistics.median(diffs):9.1f}"
            if kind == 0:
                # The spread of the rounds' own differences: how far to trust the median.
                low, _, high = statistics.quantiles(diffs, n=4) if len(diffs) > 1 else (0, 0, 0)
                line += f" {f'[{low:.0f}, {high:.0f}]':>19}"
            if kind == 0 and ratios:
                share = [v[0] / b[0] - 1 for v, b in zip(values, base, strict=True)]
                line += f" {statistics.median(share) * 100:7.2f}%"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="end-to-end calls per round")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--micro", type=int, default=20000, help="isolated calls per round")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.rounds, args.micro = 3, 1, 10
    os.environ.setdefault("MCP_TOOLS_RATE", "100000000/m")
    os.environ.setdefault("LOG_LEVEL", "ERROR")

    with tempfile.TemporaryDirectory(prefix="observe-bench-") as tmp:
        with embedded_database(Path(tmp)) as database_url:
            bearer = migrate_and_seed(database_url)
            switches = _Switches()
            from mcp_tools.observability.tracing import instrument_django

            # One client per configuration; each loads its middleware on its first request,
            # so Django's instrumentation (middleware inserted) reaches only "+django".
            clients = {config: _client(bearer) for config in CONFIGS}
            for config, client in clients.items():
                switches.set(config)
                for i in range(20):
                    _call_once(client, i)
            instrument_django()
            clients["+django"] = _client(bearer)
            switches.set("+django")
            for i in range(20):
                _call_once(clients["+django"], i)

            e2e: dict[str, list[tuple[float, float]]] = {config: [] for config in E2E_CONFIGS}
            alone: dict[str, list[tuple[float, float]]] = {config: [] for config in CONFIGS}
            observe = _observed_alone(switches)
            for round_ in range(args.rounds):
                order = E2E_CONFIGS if round_ % 2 == 0 else E2E_CONFIGS[::-1]
                for config in order:
                    switches.set(config)
                    call = functools.partial(_call_once, clients[config])
                    e2e[config].append(_per_call_us(call, args.calls))
                    if config in alone:
                        work = _unobserved if config == "off" else observe
                        alone[config].append(_per_call_us(work, args.micro))
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr, flush=True)
            switches.close()

    print(f"rounds: {args.rounds}; end to end: {args.calls} calls/round; isolated: {args.micro}")
    _report(f"end to end: tools/call {TOOL} via /mcp", e2e, ratios=True)
    _report("isolated: the observation alone (off: an empty loop)", alone, ratios=False)
    if args.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
