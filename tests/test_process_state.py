"""The process objects (``mcp_tools.operator.process``): one listing that names them all, a reset
that resets them all, and a forked child that starts with none of its parent's state."""

from __future__ import annotations

import ast
import importlib
import json
import os
import pkgutil
import select
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tools.operator import process
from mcp_tools.operator.process import PROCESS_STATE, Listed
from tenancy.process import LockedTable, ProcessObject, declared, reset_all
from tests.mutations import mutation

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("mcp_tools", "tenancy", "a2a_tools", "idempotency")
# The mechanism's own lock (of its list of objects) is renewed by its fork hook.
MECHANISM = ROOT / "tenancy" / "process.py"
# What a module must not make at module level outside a ProcessObject: a thread, a pool, a
# queue or a lock (a copy of one survives fork, held or half-full, in every worker).
CONCURRENCY = frozenset(
    {
        "Thread",
        "Timer",
        "ThreadPoolExecutor",
        "ProcessPoolExecutor",
        "Queue",
        "SimpleQueue",
        "LifoQueue",
        "PriorityQueue",
        "Lock",
        "RLock",
        "Condition",
        "Semaphore",
        "BoundedSemaphore",
        "Event",
        "Barrier",
    }
)


def _fill(listed: Listed, made: ProcessObject[Any]) -> None:
    """Put something in the object, as the process would by serving."""
    value = made.get()
    if listed.kind == "prepared":
        return
    if listed.name == "execution.slots":
        assert value.try_acquire(1_000)
    elif listed.name == "execution.tool_threads":
        value.submit(lambda: None).result(timeout=10)
    elif listed.name == "tasks.engine":
        assert value.reserve()
        value.start("t-process-state", lambda: None)
        deadline = time.monotonic() + 10
        while value.in_use and time.monotonic() < deadline:
            time.sleep(0.01)
        assert value._pool is not None
    elif listed.name == "oauth.fetch_slots":
        value._total += 1
        value._by_origin["https://a.example"] = 1
    elif isinstance(value, dict):
        value["k"] = None  # a cache or a table of in-flight work
    # observability.audit_writer, subscriptions.hub: made is enough (dropped when reset)


def _fresh(listed: Listed, made: ProcessObject[Any]) -> bool:
    """Whether the object is as a new process has it (never takes one of its locks)."""
    value = made.peek()
    if listed.kind == "prepared":
        return bool(value)  # kept: the catalogue is still served
    if value is None:
        return True
    if listed.name == "execution.slots":
        return (value.in_use, value.draining, value.waiting) == (0, 0, 0) and not (
            value._lock.locked()
        )
    if listed.name == "execution.tool_threads":
        return False  # a pool is dropped, never emptied in place
    if listed.name == "tasks.engine":
        return value._pool is None and value._reserved == 0 and not value._running
    if listed.name == "oauth.fetch_slots":
        return value._total == 0 and not value._by_origin
    if isinstance(value, LockedTable):
        return not value and not value.lock.locked()
    if isinstance(value, dict):
        return not value
    return False  # a thread's object (audit writer, hub) is dropped, never renewed


def _owner(listed: Listed) -> ProcessObject[Any]:
    module, _, attribute = listed.owner.rpartition(".")
    made = getattr(importlib.import_module(module), attribute)
    assert isinstance(made, ProcessObject)
    return made


@pytest.fixture
def filled() -> Iterator[list[tuple[Listed, ProcessObject[Any]]]]:
    for listed in PROCESS_STATE:
        _owner(listed)  # its module imported: declared
    found = process.objects()
    assert len(found) == len(PROCESS_STATE)
    for listed, made in found:
        _fill(listed, made)
    assert [listed.name for listed, made in found if _fresh(listed, made)] == ["catalogue.active"]
    yield found
    reset_all()


@mutation(
    "tenancy/process.py",
    find="os.register_at_fork(after_in_child=_after_fork_in_child)",
    replace="pass",
)
def test_a_forked_child_starts_with_none_of_its_parents_objects(
    filled: list[tuple[Listed, ProcessObject[Any]]],
) -> None:
    """A child forked after every object was made and used (a lock even held at the fork)
    finds each of them as a new process would: caches and tables empty, their locks free,
    slots free, the pools and threads' objects not made yet; the prepared catalogue kept.

    Mutation: drop the ``os.register_at_fork`` hook → the child inherits the filled caches,
    the held lock, the taken slot → red.
    """
    held = [made.get().lock for listed, made in filled if listed.kind == "table"]
    for lock in held:
        lock.acquire()
    read, write = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:  # the child: report and leave, running nothing of the parent's
            try:
                os.close(read)
                report = {listed.name: _fresh(listed, made) for listed, made in filled}
                os.write(write, json.dumps(report).encode())
            finally:
                os._exit(0)
    finally:
        for lock in held:
            lock.release()
    os.close(write)
    chunks = []
    while select.select([read], [], [], 30)[0]:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    report = json.loads(b"".join(chunks))
    assert report == dict.fromkeys(report, True)
    assert sorted(report) == sorted(listed.name for listed in PROCESS_STATE)


@mutation(
    "mcp_tools/operator/switches.py",
    find='"operator.switches_cache", dict, kind="cache", renew=dict.clear',
    replace='"operator.switches_cache", dict, kind="cache", renew=lambda cache: None',
)
@mutation(
    "tenancy/process.py",
    find="    for item in declared():\n        item.reset()",
    replace="    for item in list(declared())[1:]:\n        item.reset()",
)
def test_reset_all_makes_every_object_as_new(
    filled: list[tuple[Listed, ProcessObject[Any]]],
) -> None:
    """``reset_all()`` (between tests) leaves every listed object as a new process has it.

    Mutations: a switches cache whose renewal keeps its entries; a ``reset_all`` that skips
    the first declared object → red.
    """
    reset_all()
    assert [listed.name for listed, made in filled if not _fresh(listed, made)] == []


def _modules() -> Iterator[str]:
    for package in PACKAGES:
        yield package
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if ".migrations" not in info.name:
                yield info.name


@mutation(
    "mcp_tools/operator/process.py",
    find='    Listed(\n        "tasks.engine",',
    replace='    Listed(\n        "tasks.engines",',
)
def test_every_declared_object_is_listed_and_every_listed_one_declared() -> None:
    """The listing is the whole truth: with every module of the toolkit's apps imported, the
    declared objects are exactly the listed ones, each the attribute its owner names and of
    its listed kind.

    Mutation: list the task engine under another name → red (declared, not listed).
    """
    for name in _modules():
        importlib.import_module(name)
    listed = {item.name: item for item in PROCESS_STATE}
    assert len(listed) == len(PROCESS_STATE)
    assert sorted(made.name for made in declared()) == sorted(listed)
    for item in PROCESS_STATE:
        made = _owner(item)
        assert (made.name, made.kind) == (item.name, item.kind)


def _makes_state(node: ast.AST, stateful: frozenset[str]) -> bool:
    """Whether ``node`` calls a concurrency constructor or a stateful class of its module,
    other than as what a ``ProcessObject`` makes."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        base = func.value if isinstance(func, ast.Subscript) else func  # ProcessObject[...]
        if isinstance(base, ast.Subscript):
            base = base.value
        if getattr(base, "id", "") == "ProcessObject" or name == "ProcessObject":
            return False
        if name in CONCURRENCY or name in stateful:
            return True
    if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False  # runs later, when called: per call, not per process
    return any(_makes_state(child, stateful) for child in ast.iter_child_nodes(node))


def made_at_module_level(source: str) -> list[int]:
    """Lines of ``source`` that make a thread, pool, queue or lock (or an instance of a class of
    the module that makes one) at module level, outside a ``ProcessObject``."""
    tree = ast.parse(source)
    stateful = frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(_makes_state(child, frozenset()) for child in ast.walk(node) if child is not node)
    )
    return [
        statement.lineno
        for statement in tree.body
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and _makes_state(statement, stateful)
    ]


@mutation(
    "mcp_tools/subscriptions/bus.py",
    find='HUB: Final = ProcessObject("subscriptions.hub", Hub, kind="thread")',
    replace='HUB: Final = ProcessObject("subscriptions.hub", Hub, kind="thread")\nhub = Hub()',
)
@mutation(
    "mcp_tools/asking/mailbox.py",
    find="WAITING: Final = ProcessObject",
    replace="_waiting_lock = threading.Lock()\nWAITING: Final = ProcessObject",
)
def test_no_module_makes_a_thread_pool_queue_or_lock_outside_the_registry() -> None:
    """No module of the toolkit's apps makes a thread, pool, queue or lock at module level,
    nor an instance of its own class that makes one, except through a ``ProcessObject``
    (which the listing names: the test above).

    Mutations: the subscriptions hub made at import again (``hub = Hub()``); a module-level
    lock in ``asking.mailbox`` (as it had) → red, naming the module and line.
    """
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts and path != MECHANISM
        for line in made_at_module_level(path.read_text())
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("import threading\n_lock = threading.Lock()\n", [2]),
        (
            "class Pool:\n    def __init__(self):\n        self.q = queue.Queue()\n\np = Pool()\n",
            [5],
        ),
        ('P = ProcessObject("p", lambda: ThreadPoolExecutor(2), kind="pool")\n', []),
        ("def f():\n    return threading.Thread(target=print)\n", []),
    ],
)
def test_the_scan_tells_module_state_from_what_runs_later(source: str, lines: list[int]) -> None:
    assert made_at_module_level(source) == lines


def test_get_makes_the_object_once_on_first_use() -> None:
    made: list[object] = []

    def create() -> object:
        made.append(object())
        return made[-1]

    closed: list[object] = []
    item = ProcessObject("test.once", create, kind="cache", close=closed.append)
    try:
        assert item.peek() is None and made == []
        values = set()
        threads = [threading.Thread(target=lambda: values.add(id(item.get()))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(made) == 1 and values == {id(made[0])}
        item.reset()  # dropped (no renewal): closed, and the next get makes another
        assert item.peek() is None and closed == made
    finally:
        from tenancy import process as mechanism

        mechanism._declared.pop("test.once", None)
