"""Checks shared by the ``@resource``, ``@resource_template`` and ``@prompt`` registries.

The same rules as ``@tool`` (``mcp_tools.authoring.registry``): the first parameter is ``ctx:
CallContext`` exactly, the others are keyword-only and typed, no banned type (ambient identity,
requests, DB handles, locators), a description, a tenancy ``Policy``. A broken definition is
``ImproperlyConfigured`` at import.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from django.core.exceptions import ImproperlyConfigured

from mcp_tools.authoring.spec import TOOL_NAME_RE, banned_parameter_type
from mcp_tools.call.context import CallContext
from tenancy import Policy

Completer = Callable[..., Any]
NAME_RE = TOOL_NAME_RE


def fail(kind: str, where: str, problem: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"MCP {kind} {where}: {problem}")


class _Registered(Protocol):
    @property
    def qualname(self) -> str: ...


_Spec = TypeVar("_Spec", bound=_Registered)


def register_once(
    registry: dict[str, _Spec], key: str, spec: _Spec, *, kind: str, where: str, taken: str
) -> None:
    """``registry[key] = spec`` unless another function holds ``key`` (``taken`` names it);
    the same function again (an autoreload re-imports its module) replaces its own entry."""
    existing = registry.get(key)
    if existing is not None and existing.qualname != spec.qualname:
        raise fail(kind, where, f"{taken} is already registered by {existing.qualname}")
    registry[key] = spec


def where_of(label: str, fn: Any) -> str:
    return f"{label!r} ({getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')})"


def check_common(kind: str, where: str, fn: Any, *, description: str | None, policy: Any) -> str:
    """The description (or docstring); raises on a coroutine, a missing text or a bad policy."""
    if not callable(fn) or inspect.iscoroutinefunction(fn):
        raise fail(kind, where, "a plain (synchronous) function is required; it runs in a worker")
    if not isinstance(policy, Policy):
        raise fail(kind, where, "policy must be a tenancy Policy (e.g. tenancy.AUTHENTICATED)")
    text = description or inspect.getdoc(fn)
    if not text:
        raise fail(kind, where, "a description is required (it is the model's only manual)")
    return text


def keyword_parameters(
    kind: str, where: str, fn: Any
) -> tuple[dict[str, Any], list[inspect.Parameter]]:
    """The type hints and the keyword-only parameters after ``ctx: CallContext``."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # a broken annotation is a start-up error, whatever it is
        raise fail(kind, where, f"annotations cannot be resolved ({exc})") from exc
    params = list(inspect.signature(fn).parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise fail(kind, where, "the first parameter must be `ctx: CallContext`")
    if hints.get(params[0].name) is not CallContext:
        raise fail(kind, where, "the first parameter must be annotated exactly `CallContext`")
    rest = params[1:]
    for param in rest:
        if param.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise fail(kind, where, f"parameter {param.name!r} must be keyword-only (`*,`)")
        if param.name not in hints:
            raise fail(kind, where, f"parameter {param.name!r} needs a type annotation")
        banned = banned_parameter_type(hints[param.name])
        if banned is not None:
            raise fail(
                kind,
                where,
                f"parameter {param.name!r} takes {banned}; identity comes only through "
                "CallContext and data only through services and selectors",
            )
    return hints, rest


def check_completers(
    kind: str, where: str, completers: Mapping[str, Completer] | None, names: set[str]
) -> dict[str, Completer]:
    """``{argument: completer}``; each names a declared argument and is callable."""
    found = dict(completers or {})
    for name, completer in found.items():
        if name not in names:
            raise fail(kind, where, f"complete= names {name!r}, which is not an argument")
        if not callable(completer) or inspect.iscoroutinefunction(completer):
            raise fail(kind, where, f"the completer for {name!r} must be a plain function")
    return found
