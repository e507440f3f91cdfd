"""Each guard's mutation, recorded next to the guard and applied by ``./scripts/mutations``.

A guard test names the change to the code that must turn it red::

    @mutation("idempotency/unit.py", find="if not same_fingerprint:", replace="if False:")
    def test_same_key_other_fingerprint_is_a_conflict_and_work_never_runs(): ...

``path`` is relative to the repository root; ``find`` is literal text that occurs exactly once
in that file and ``replace`` what it becomes. A change of several places is one mutation with
several edits, each applied in turn::

    @mutation(Edit("a.py", find="...", replace="..."), Edit("b.py", find="...", replace="..."))

``Move(path, to=...)`` renames a file (a migration, say) as one of those steps. Stacked
decorators are independent mutations, each expected to turn the test red on its own. The
decorator returns the test unchanged; the docstring keeps saying *why* it goes red.

The runner reads these records with :func:`recorded`, by parsing the test files (``ast``), so
nothing here imports Django or the test modules: arguments must be string literals.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, overload

__all__ = [
    "Edit",
    "Move",
    "Mutation",
    "NoLongerApplies",
    "mutation",
    "plan",
    "recorded",
    "unrecorded",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Edit:
    """Replace the one occurrence of ``find`` in ``path`` with ``replace``."""

    path: str
    find: str
    replace: str


@dataclass(frozen=True)
class Move:
    """Rename ``path`` to ``to`` (both relative to the repository root)."""

    path: str
    to: str


Step = Edit | Move


@dataclass(frozen=True)
class Mutation:
    """One recorded mutation: the guard's pytest node id and the edits that must turn it red."""

    node_id: str
    index: int  # 1-based among the guard's own mutations, top decorator first
    count: int  # how many mutations the guard records
    edits: tuple[Step, ...]
    line: int  # of the decorator, for messages

    @property
    def ident(self) -> str:
        """Stable name of this mutation: the node id, plus ``[i/n]`` when the guard has several."""
        return self.node_id if self.count == 1 else f"{self.node_id}[{self.index}/{self.count}]"


@overload
def mutation(path: str, *, find: str, replace: str) -> Callable[[F], F]: ...
@overload
def mutation(*edits: Step) -> Callable[[F], F]: ...
def mutation(*args: Any, **kwargs: Any) -> Callable[[F], F]:
    """Record the mutation that turns the decorated guard red; the test itself is unchanged."""
    if args and isinstance(args[0], str):
        edits: tuple[Step, ...] = (Edit(args[0], **kwargs),)
    else:
        edits = tuple(args)
    if not edits or not all(isinstance(e, Edit | Move) for e in edits) or (kwargs and not args):
        raise TypeError("use @mutation(path, find=..., replace=...) or @mutation(Edit(...), ...)")

    def mark(test: F) -> F:
        return test

    return mark


class RecordError(ValueError):
    """A ``@mutation`` the runner cannot read (its arguments are not string literals)."""


def _literal(node: ast.expr, where: str) -> str:
    try:
        value = ast.literal_eval(node)
    except ValueError as exc:
        raise RecordError(f"{where}: @mutation arguments must be string literals") from exc
    if not isinstance(value, str):
        raise RecordError(f"{where}: @mutation arguments must be strings")
    return value


def _edit(path: ast.expr, keywords: list[ast.keyword], where: str) -> Edit:
    fields = {kw.arg: _literal(kw.value, where) for kw in keywords}
    if set(fields) != {"find", "replace"}:
        raise RecordError(f"{where}: an edit takes exactly find= and replace=")
    return Edit(_literal(path, where), fields["find"], fields["replace"])


def _called(node: ast.expr, name: str) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == name) or (
        isinstance(func, ast.Attribute) and func.attr == name
    )


def _move(call: ast.Call, where: str) -> Move:
    if len(call.args) != 1 or [kw.arg for kw in call.keywords] != ["to"]:
        raise RecordError(f"{where}: Move(path, to=...)")
    return Move(_literal(call.args[0], where), _literal(call.keywords[0].value, where))


def _edits(call: ast.Call, where: str) -> tuple[Step, ...]:
    if call.args and not isinstance(call.args[0], ast.Call):
        if len(call.args) != 1:
            raise RecordError(f"{where}: @mutation(path, find=..., replace=...)")
        return (_edit(call.args[0], call.keywords, where),)
    edits: list[Step] = []
    for arg in call.args:
        if isinstance(arg, ast.Call) and _called(arg, "Move"):
            edits.append(_move(arg, where))
            continue
        if not (isinstance(arg, ast.Call) and _called(arg, "Edit") and len(arg.args) == 1):
            raise RecordError(f"{where}: each argument is Edit(path, find=..., replace=...)")
        edits.append(_edit(arg.args[0], arg.keywords, where))
    if not edits or call.keywords:
        raise RecordError(f"{where}: @mutation needs at least one edit")
    return tuple(edits)


def _tests(
    body: list[ast.stmt], prefix: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}::{node.name}", node
        elif isinstance(node, ast.ClassDef):
            yield from _tests(node.body, f"{prefix}::{node.name}")


def recorded_in(path: Path, root: Path) -> list[Mutation]:
    """The mutations recorded in one test file, in source order."""
    relative = path.relative_to(root).as_posix()
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
    found = []
    for node_id, func in _tests(tree.body, relative):
        calls = [d for d in func.decorator_list if _called(d, "mutation")]
        for index, call in enumerate(calls, start=1):
            assert isinstance(call, ast.Call)
            where = f"{relative}:{call.lineno}"
            found.append(Mutation(node_id, index, len(calls), _edits(call, where), call.lineno))
    return found


def recorded(root: Path) -> list[Mutation]:
    """Every mutation recorded under ``root/tests``, ordered by file and line."""
    mutations = []
    for path in sorted((root / "tests").rglob("*.py")):
        if "mutation" in path.read_text(encoding="utf-8"):
            mutations.extend(recorded_in(path, root))
    return mutations


# A docstring that names a mutation in prose ("Mutation: ...", "Mutations, each seen red: ...").
_PROSE = re.compile(r"\bMutations?\b")


def unrecorded(root: Path) -> list[str]:
    """Node ids of tests under ``root/tests`` whose docstring names a mutation but that carry
    no ``@mutation`` record."""
    missing = []
    for path in sorted((root / "tests").rglob("test_*.py")):
        relative = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=relative)
        for node_id, func in _tests(tree.body, relative):
            doc = ast.get_docstring(func) or ""
            if _PROSE.search(doc) and not any(_called(d, "mutation") for d in func.decorator_list):
                missing.append(node_id)
    return missing


class NoLongerApplies(Exception):
    """The recorded mutation does not fit the code any more (text gone, or found twice)."""


def plan(mutation: Mutation, root: Path) -> dict[str, str | None]:
    """What applying ``mutation`` under ``root`` writes: path -> new text (``None``: removed).

    Raises:
        NoLongerApplies: a ``find`` does not occur exactly once, a file is missing, or a mutated
            Python file no longer parses.
    """
    files: dict[str, str | None] = {}

    def read(path: str) -> str:
        if path in files:
            text = files[path]
        else:
            try:
                text = (root / path).read_text(encoding="utf-8")
            except FileNotFoundError:
                text = None
        if text is None:
            raise NoLongerApplies(f"{path}: no such file")
        return text

    for step in mutation.edits:
        if isinstance(step, Move):
            if step.to in files or (root / step.to).exists():
                raise NoLongerApplies(f"{step.to}: already exists")
            files[step.to] = read(step.path)
            files[step.path] = None
            continue
        text = read(step.path)
        found = text.count(step.find)
        if found != 1:
            raise NoLongerApplies(f"{step.path}: find= occurs {found} times: {step.find!r}")
        files[step.path] = text.replace(step.find, step.replace)
    for path, written in files.items():
        if written is not None and path.endswith(".py"):
            try:
                ast.parse(written, filename=path)
            except SyntaxError as exc:
                raise NoLongerApplies(f"{path}: the mutated file does not parse: {exc}") from exc
    return files
