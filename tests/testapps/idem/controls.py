"""In-process switches for the controllable handlers (tests run requests in threads)."""

from __future__ import annotations

import threading


class Hold:
    """``arm()`` makes the next handler run stop after its side effect, until ``release()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._armed = False
        self.entered = threading.Event()
        self._released = threading.Event()

    def arm(self) -> None:
        with self._lock:
            self._armed = True
            self.entered.clear()
            self._released.clear()

    def release(self) -> None:
        self._released.set()

    def reset(self) -> None:
        with self._lock:
            self._armed = False
        self._released.set()

    def pass_through(self) -> None:
        with self._lock:
            armed, self._armed = self._armed, False
        if armed:
            self.entered.set()
            # Bounded, so a broken test cannot hang the run.
            self._released.wait(timeout=15)


class Holds:
    """One ``Hold`` per attempt name (the ``X-Attempt`` header of a request)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holds: dict[str, Hold] = {}

    def __getitem__(self, attempt: str) -> Hold:
        with self._lock:
            return self._holds.setdefault(attempt, Hold())

    def reset(self) -> None:
        with self._lock:
            holds, self._holds = list(self._holds.values()), {}
        for hold in holds:
            hold.reset()


HOLDS = Holds()
