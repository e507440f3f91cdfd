"""The long-lived objects of one process (threads, pools, caches, in-flight tables), created and
reset through one mechanism.

Every such object is a :class:`ProcessObject`, declared in the module that owns it. It is made
on first use (:meth:`ProcessObject.get`), reset for tests (:func:`reset_all`), and reset in a
child process right after ``fork`` (``os.register_at_fork``): a worker forked from a preloaded
parent (gunicorn ``--preload``, Celery prefork, ``django-tasks``' ``db_worker``) starts with
empty caches and pools of its own, never a copy of its parent's threads, locks or queued work.
A thread does not survive ``fork``; a copy of its lock, its queue or its pool would, held or
half-full, and nothing would ever release or drain it.

The listing of every object, what it holds and who starts it, is
``mcp_tools.operator.process`` (this mechanism knows nothing of MCP; tenancy's own objects
are declared here too).

An object is either *renewed in place* (``renew``: the same object, emptied, for an object a
module binds to a name its hot path reads as a plain global) or *dropped* (the next ``get``
makes a new one; ``close`` releases the old one on a test reset, never after ``fork``, where
the threads it would stop do not exist). A ``prepared`` object (built once at start-up from the
code and settings, read-only after) is kept across ``fork`` — sharing it is what preloading is
for — and across :func:`reset_all`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final, Generic, Literal, TypeVar

__all__ = ["Kind", "LockedTable", "ProcessObject", "declared", "reset_all"]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
Kind = Literal["thread", "pool", "cache", "table", "prepared"]
KINDS: Final = ("thread", "pool", "cache", "table", "prepared")


class LockedTable(dict[K, V]):
    """A dict with the lock that guards its compound updates (a table of in-flight work):
    renewed, it is emptied and gets a new lock, so a copy held at ``fork`` is never waited on."""

    __slots__ = ("lock",)

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def renew(self) -> None:
        self.lock = threading.Lock()
        self.clear()


class ProcessObject(Generic[T]):
    """One long-lived object of this process, made by ``create`` on first use.

    ``get`` is the hot path: one attribute read and a comparison once the object exists.
    """

    __slots__ = ("_close", "_create", "_lock", "_renew", "_value", "kind", "name")

    def __init__(
        self,
        name: str,
        create: Callable[[], T],
        *,
        kind: Kind,
        renew: Callable[[T], None] | None = None,
        close: Callable[[T], None] | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"{name}: kind {kind!r} is not one of {KINDS}")
        self.name = name
        self.kind: Kind = kind
        self._create = create
        self._renew = renew
        self._close = close
        self._value: T | None = None
        self._lock = threading.Lock()
        with _declared_lock:
            # A module imported again (a test reloading it) declares its objects again.
            _declared[name] = self

    def __repr__(self) -> str:
        made = "made" if self._value is not None else "not made"
        return f"<ProcessObject {self.name} ({self.kind}, {made})>"

    def get(self) -> T:
        """The object, made now if this process has none yet."""
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._create()
        return value

    def peek(self) -> T | None:
        """The object if this process has made it, else ``None`` (never makes one)."""
        return self._value

    def reset(self) -> None:
        """Make it as new: renewed in place, or dropped (and closed) so the next ``get`` makes
        another. A ``prepared`` object is kept."""
        if self.kind == "prepared":
            return
        with self._lock:
            value = self._value
            if value is None:
                return
            if self._renew is not None:
                self._renew(value)
                return
            self._value = None
        if self._close is not None:
            self._close(value)

    def _after_fork(self) -> None:
        # The child's only thread runs this: no lock to take, and the parent's may be held.
        self._lock = threading.Lock()
        value = self._value
        if value is None or self.kind == "prepared":
            return
        if self._renew is not None:
            self._renew(value)
        else:
            self._value = None


_declared: dict[str, ProcessObject[Any]] = {}
_declared_lock = threading.Lock()


def declared() -> Iterator[ProcessObject[Any]]:
    """Every object declared so far in this process (their modules were imported)."""
    yield from list(_declared.values())


def reset_all() -> None:
    """Reset every declared object (tests: a clean process between tests)."""
    for item in declared():
        item.reset()


def _after_fork_in_child() -> None:
    global _declared_lock
    _declared_lock = threading.Lock()
    for item in _declared.values():
        item._after_fork()


os.register_at_fork(after_in_child=_after_fork_in_child)
