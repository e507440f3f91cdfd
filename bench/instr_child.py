"""The process ``bench/instr_bench.py`` runs under callgrind: an ASGI application driven in
process (no sockets, no HTTP server), the counted region around the measured calls only.

    python -c "from bench.instr_child import run; run()" SPEC.json OUT.json

``SPEC.json``: a list of segments ``{"warmup": [request, ...], "measured": [request, ...]}``,
each request ``[method, path, [[header, value], ...], body]``; one process serves them all, so
Django's set-up (uncounted, but slow under valgrind) is paid once. ``INSTR_APP`` names the
application (``module:attribute``), ``INSTR_PROBE`` the shared library whose ``instr_start``
(zero the counts, ``CALLGRIND_START_INSTRUMENTATION``) and ``instr_stop``
(``CALLGRIND_STOP_INSTRUMENTATION``, dump the counts: one numbered file per segment) are
callgrind's client requests; without ``INSTR_PROBE``, or outside valgrind, nothing is counted
and the calls just run. ``OUT.json``: per segment, every answer's status and the start of its
body, for the parent to check (outside the counted region). With ``INSTR_THREADS`` set,
``OUT.json.threads`` lists when each of the process's threads started and ended, from which the
parent names callgrind's numbered threads (``--separate-threads=yes``, ``instr_bench --threads``).

Standard library only at import: it runs in the peers' venvs too (``bench/peers/venvs.py``).
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import importlib
import json
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

Request = tuple[str, str, list[list[str]], str]
Asgi = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


async def _call(app: Asgi, request: Request) -> tuple[int, bytes]:
    method, target, header_pairs, body_text = request
    path, _, query = target.partition("?")
    body = body_text.encode()
    headers = [(name.lower().encode(), value.encode()) for name, value in header_pairs]
    headers += [(b"host", b"127.0.0.1"), (b"content-length", str(len(body)).encode())]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    delivered = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        # Django listens for a disconnect while the view runs; the client never leaves.
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


async def _drive(
    app: Asgi, segments: list[dict[str, list[Request]]], probe: Any
) -> list[list[list[Any]]]:
    done = []
    settle = float(os.environ.get("INSTR_SETTLE_SECONDS", "1.0"))
    for segment in segments:
        for request in segment["warmup"]:
            await _call(app, request)
        # Work a call defers to a thread (the call audit's writer, which lingers 0.2 s) is
        # counted with the calls that caused it: the warm-up's is done before the count starts,
        # the counted calls' before it stops. A collection now, so the region starts with the
        # same young generation every run.
        await asyncio.sleep(settle)
        gc.collect()
        answers: list[tuple[int, bytes]] = []
        probe.instr_start()
        for request in segment["measured"]:
            answers.append(await _call(app, request))
        await asyncio.sleep(settle)
        probe.instr_stop()
        done.append([[status, body[:2000].decode(errors="replace")] for status, body in answers])
    return done


class _NoProbe:
    def instr_start(self) -> None:
        pass

    def instr_stop(self) -> None:
        pass


def _record_threads() -> list[list[str]]:
    """``["start" | "end", name]`` of every thread from now on, in order (under a lock, so two
    threads starting threads at once cannot swap theirs): callgrind numbers a new thread with
    the lowest number no running thread holds, and the parent replays these to name them."""
    events = [["start", threading.current_thread().name]]
    lock = threading.Lock()
    start, body = threading.Thread.start, threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def started(thread: threading.Thread) -> None:
        with lock:
            start(thread)
            events.append(["start", thread.name])

    def ran(thread: threading.Thread) -> None:
        try:
            body(thread)
        finally:
            with lock:
                events.append(["end", thread.name])

    threading.Thread.start = started  # type: ignore[method-assign,assignment]
    threading.Thread._bootstrap_inner = ran  # type: ignore[attr-defined]
    return events


def run() -> None:
    spec_path, out_path = sys.argv[1], sys.argv[2]
    spec = json.loads(Path(spec_path).read_text())
    threads = _record_threads() if os.environ.get("INSTR_THREADS") else None
    module, _, attribute = os.environ["INSTR_APP"].partition(":")
    app = getattr(importlib.import_module(module), attribute)
    library = os.environ.get("INSTR_PROBE")
    probe = ctypes.CDLL(library) if library else _NoProbe()
    answers = asyncio.run(_drive(app, spec, probe))
    Path(out_path).write_text(json.dumps(answers))
    if threads is not None:
        Path(f"{out_path}.threads").write_text(json.dumps(threads))
