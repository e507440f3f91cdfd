"""The route of one ``tools/call`` through ``mcp_tools``, module by module (not a benchmark).

    .venv/bin/python bench/call_path.py

runs ``tests/mcp_tools/test_call_path.py`` (which pins the route) and prints, for one
2026-07-28 read ``tools/call``, one handshake-era read and one 2026-07-28 write, the modules
entered in order, the number of stops and the modules entered more than once.

How it counts (``sys.setprofile``; the worker thread counts too: the pool's threads predate
the block, so on Python 3.11, which has no ``threading.setprofile_all_threads``, the job handed
to the pool is wrapped to install the same profile in its thread): a *stop* is a call that
crosses into a module of ``mcp_tools`` from another one. The caller is the nearest
``mcp_tools`` frame below on the same thread; a frame with none (the first frame of a worker
job, an event-loop callback) is entered from the last stop. Not
counted, as in issue 24: ``conf``, ``_jsonrpc`` and ``observability`` (settings reads, JSON
bytes, the record around the call), property reads, code Python generates for value objects
(a dataclass's ``__init__``) and a coroutine resuming after an ``await``. Everything before
the view (the ASGI handler, the body-cap decorator) is left out: the route starts at
``views``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mcp_tools"
LEFT_OUT = ("mcp_tools.conf", "mcp_tools.rpc.jsonrpc", "mcp_tools.observability")
START = "mcp_tools.serving.views"
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


@dataclass
class Route:
    """The modules a request entered, in order (``mcp_tools.`` dropped)."""

    stops: list[str] = field(default_factory=list)

    @property
    def reentered(self) -> list[str]:
        seen: set[str] = set()
        again = []
        for stop in self.stops:
            if stop in seen and stop not in again:
                again.append(stop)
            seen.add(stop)
        return again

    def __str__(self) -> str:
        return " › ".join(self.stops)


def _property_codes() -> set[types.CodeType]:
    codes: set[types.CodeType] = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith(PACKAGE) or module is None:
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                for attribute in vars(value).values():
                    getter = getattr(attribute, "fget", None) or getattr(attribute, "func", None)
                    if isinstance(attribute, property | _cached) and getter is not None:
                        codes.add(getter.__code__)
    return codes


try:
    from functools import cached_property as _cached
except ImportError:  # pragma: no cover
    _cached = property  # type: ignore[assignment,misc]


def _counted(frame: types.FrameType) -> str | None:
    name = frame.f_globals.get("__name__", "")
    if not isinstance(name, str) or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
        return None
    if name.startswith(LEFT_OUT) or frame.f_code.co_filename.startswith("<"):
        return None
    return name


@contextmanager
def tracing() -> Iterator[Route]:
    """Record the route of what runs inside the block (every thread started meanwhile too)."""
    route = Route()
    properties = _property_codes()
    lock = threading.Lock()
    resumable: set[int] = set()
    started = False

    def profile(frame: types.FrameType, event: str, arg: Any) -> None:
        nonlocal started
        if event != "call":
            return
        module = _counted(frame)
        if module is None or frame.f_code in properties:
            return
        if frame.f_code.co_flags & _GENERATOR_FLAGS:
            if id(frame) in resumable:
                return  # a coroutine resuming after an await: not a new entry
            resumable.add(id(frame))
        with lock:
            if not started:
                if module != START:
                    return
                started = True
            caller = frame.f_back
            while caller is not None and (_counted(caller) is None):
                caller = caller.f_back
            came_from = _counted(caller) if caller is not None else None
            if came_from is None:
                came_from = PACKAGE + "." + route.stops[-1] if route.stops else None
            if came_from != module:
                route.stops.append(module.removeprefix(PACKAGE + "."))

    # Python 3.11 has no threading.setprofile_all_threads: the pool's worker threads predate
    # the block, so the job each one runs is wrapped to install the profile for its duration.
    # Imported here: ``main`` only starts pytest and runs without Django set up.
    from mcp_tools.execution import bounds as bounds_module

    real_submit = bounds_module._pool().submit

    def submit(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        def profiled() -> Any:
            sys.setprofile(profile)
            try:
                return fn(*args, **kwargs)
            finally:
                sys.setprofile(None)

        return real_submit(profiled)

    pool = bounds_module._pool()
    pool.submit = submit  # type: ignore[method-assign]
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        yield route
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        del pool.submit


def main() -> int:
    import argparse

    sys.path.insert(0, str(ROOT))
    from bench.harness import add_smoke_option, smoke_done

    parser = argparse.ArgumentParser(description="print the route of one tools/call")
    add_smoke_option(parser)  # the same run: it is short already
    args = parser.parse_args()
    env = {**os.environ, "CALL_PATH_PRINT": "1"}
    # Run from a test (tests/test_bench_smoke.py), possibly an xdist worker: the child pytest
    # must not take the parent's test database (same name, same server) from under it.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST"):
        env.pop(name, None)
    test = "tests/mcp_tools/test_call_path.py"
    command = [sys.executable, "-m", "pytest", test, "-q", "-s", "-p", "no:randomly"]
    with ExitStack() as stack:
        if env.get("DATABASE_URL", "").startswith("postgres"):
            from cluck.devdb import temporary_database

            # A database of this run's own: two runs of this script at once (a smoke run
            # beside a measurement) would share one name on one server and fail one of them.
            own = temporary_database(env["DATABASE_URL"], f"cluck_call_path_{os.getpid()}")
            env["DATABASE_URL"] = stack.enter_context(own)
        returncode = subprocess.call(command, cwd=ROOT, env=env)
    if args.smoke and returncode == 0:
        smoke_done()
    return returncode


if __name__ == "__main__":
    raise SystemExit(main())
