"""Knobs the tests turn from outside the tool (same process only)."""

from __future__ import annotations

import threading
from collections import Counter

# mcptest_block waits on this; tests set it to let blocked tools return.
release = threading.Event()
# How many times each write tool's body really ran (a replay must not add one).
executions: Counter[str] = Counter()
lock = threading.Lock()


def ran(name: str) -> None:
    with lock:
        executions[name] += 1
