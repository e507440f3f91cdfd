"""Tasks a fault test can watch and hold from outside the worker process.

``TASK_ENGINE_TEST_DIR`` names a directory both the test and the worker see. A tool writes
``started-<label>`` when its run starts (with the worker's pid), ``stopped-<label>`` when a
cancellation reached it; a file ``hold-<label>`` created by the test holds the run (after the
write committed, for the write tool) until the worker is killed, and the run removes it, so
the run after a restart goes through.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated

from django.db import transaction
from pydantic import BaseModel, Field

from mcp_tools import CallContext, tool
from tests.testapps.idem.models import SideEffect

FIXTURE = "task engine fault-test fixture (test app only)"
Label = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[a-z0-9-]+$")]


def _dir() -> Path | None:
    path = os.environ.get("TASK_ENGINE_TEST_DIR")
    return Path(path) if path else None


def _mark(name: str) -> None:
    where = _dir()
    if where is not None:
        (where / name).write_text(str(os.getpid()))


def _hold(ctx: CallContext, label: str) -> None:
    """Wait while ``hold-<label>`` exists (the test kills this worker meanwhile)."""
    where = _dir()
    hold = None if where is None else where / f"hold-{label}"
    if hold is None or not hold.exists():
        return
    hold.unlink()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        time.sleep(0.05)


def _work(ctx: CallContext, label: str, seconds: float) -> str:
    ctx.continue_as_task()
    _mark(f"started-{label}")
    _hold(ctx, label)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ctx.check_cancelled()
            time.sleep(0.05)
    except BaseException:
        _mark(f"stopped-{label}")
        raise
    return f"{label} done by {os.getpid()}"


@tool(
    name="engine_sleep",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    description="Works `seconds` as a task; a lost worker fails it (no task_retry).",
)
def engine_sleep(
    ctx: CallContext, *, label: Label, seconds: Annotated[float, Field(ge=0, le=120)] = 0
) -> str:
    return _work(ctx, label, seconds)


@tool(
    name="engine_sleep_retried",
    read_only=True,
    mirrors_no_route=FIXTURE,
    task_support="optional",
    task_retry=1,
    description="Works `seconds` as a task; a lost worker's run is run again once.",
)
def engine_sleep_retried(
    ctx: CallContext, *, label: Label, seconds: Annotated[float, Field(ge=0, le=120)] = 0
) -> str:
    return _work(ctx, label, seconds)


class Written(BaseModel):
    label: str


@tool(
    name="engine_write",
    mirrors_no_route=FIXTURE,
    task_support="optional",
    task_retry=1,
    description="Writes one side-effect row as a task (run again once after a lost worker).",
)
def engine_write(ctx: CallContext, *, label: Label) -> Written:
    ctx.continue_as_task()
    _mark(f"started-{label}")
    SideEffect.objects.create(tenant_id=str(ctx.tenant_id), label=label, attempt=str(os.getpid()))

    def committed() -> None:
        # After the write's own commit, before the task records its outcome.
        _mark(f"committed-{label}")
        _hold(ctx, label)

    transaction.on_commit(committed)
    return Written(label=label)
