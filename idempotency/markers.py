"""View markers: a view opts out of the HTTP adapter by metadata, never by a path list.

A marker is an attribute on the view function or on the class behind it (``view_func.cls`` for
DRF, ``view_func.view_class`` for Django class-based views). A dispatcher carrying
``method_routes`` (one path, one view per HTTP method) is asked for the view of the method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from django.urls import URLPattern, URLResolver, get_resolver

F = TypeVar("F")

HANDLES_OWN_IDEMPOTENCY = "idempotency_handles_own"
NEVER_REPLAY = "idempotency_never_replay"

# Keys sent to such a view belong to the acting user, not to the tenant: two members sending
# the same key to their own "/me" writes both execute. Like the two above, an attribute on the
# view, so an app that does not import idempotency (tenancy) can set it.
USER_SCOPED_KEYS = "idempotency_user_scoped_keys"

HANDLES_OWN_REASON = "handles its own idempotency (keys are part of its protocol)"


def handles_own_idempotency(view: F) -> F:
    """The view runs ``IdempotentUnit`` itself (``/mcp``: the key is a tool argument, and
    ``initialize`` or ``tools/list`` need none); the HTTP adapter must not claim it too."""
    setattr(view, HANDLES_OWN_IDEMPOTENCY, HANDLES_OWN_REASON)
    return view


def never_replay(reason: str) -> Callable[[F], F]:
    """Mark a view whose responses must never be stored or replayed, with the reason.

    For login, logout, token creation: their bodies carry live secrets or are pure side effects,
    so a replay would hand out stale credentials or fake a logout.
    """
    if not isinstance(reason, str) or not reason.strip():
        raise TypeError("never_replay needs a reason, e.g. never_replay('returns a live token')")

    def mark(view: F) -> F:
        setattr(view, NEVER_REPLAY, reason)
        return view

    return mark


def user_scoped_keys(view: F) -> F:
    """Idempotency keys sent to ``view`` are scoped to the acting user (``/me`` writes)."""
    setattr(view, USER_SCOPED_KEYS, True)
    return view


def keys_are_user_scoped(view_func: Any) -> bool:
    if getattr(view_func, USER_SCOPED_KEYS, False):
        return True
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return bool(view_class is not None and getattr(view_class, USER_SCOPED_KEYS, False))


@dataclass(frozen=True)
class Exemption:
    marker: str  # HANDLES_OWN_IDEMPOTENCY or NEVER_REPLAY
    reason: str


def _marker_on(obj: Any) -> Exemption | None:
    for marker in (HANDLES_OWN_IDEMPOTENCY, NEVER_REPLAY):
        reason = getattr(obj, marker, None)
        if reason:
            return Exemption(marker=marker, reason=str(reason))
    return None


def _own_exemption(view_func: Any) -> Exemption | None:
    found = _marker_on(view_func)
    if found is not None:
        return found
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return None if view_class is None else _marker_on(view_class)


def exemption_of(view_func: Any, method: str | None = None) -> Exemption | None:
    """The marker a view carries for ``method`` (any method when ``None``), if any."""
    found = _own_exemption(view_func)
    if found is not None:
        return found
    routes = getattr(view_func, "method_routes", None)
    if routes is None:
        return None
    methods = [method] if method else [m for m in getattr(routes, "by_method", {})]
    for each in methods:
        routed = routes.view_for_method(each)
        if routed is not None:
            found = _own_exemption(routed)
            if found is not None:
                return found
    return None


def view_class_of(view_func: Any, method: str) -> tuple[type[Any], dict[str, Any]] | None:
    """The class behind ``view_func`` for ``method`` and its ``as_view`` keyword arguments:
    ``view_func.cls`` (DRF), ``view_func.view_class`` (Django), or the class a
    ``method_routes`` dispatcher routes ``method`` to. ``None`` for a plain function view."""
    routes = getattr(view_func, "method_routes", None)
    if routes is not None:
        routed = routes.view_for_method(method)
        if routed is None:
            return None
        if isinstance(routed, type):
            return routed, {}
        view_func = routed
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    if not isinstance(view_class, type):
        return None
    return view_class, dict(getattr(view_func, "initkwargs", None) or {})


@dataclass(frozen=True)
class ExemptView:
    route: str  # the URL pattern, e.g. "api/v1/auth/login/"
    name: str | None  # the route name
    method: str | None  # the HTTP method, for a per-method dispatcher; None = every method
    marker: str
    reason: str


def _walk(
    patterns: list[Any], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str | None, Any]]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            ns = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), ns)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}{entry.name}" if entry.name else None
            yield prefix + str(entry.pattern), name, entry.callback


def all_views(urlconf: str | None = None) -> list[tuple[str, str | None, Any]]:
    """Every ``(route, name, view_func)`` of the URL resolver, includes flattened."""
    return list(_walk(get_resolver(urlconf).url_patterns))


def _same_route(name: str | None, route_name: Any) -> bool:
    return name is None or name == route_name or name.endswith(f":{route_name}")


def exempt_views(urlconf: str | None = None) -> list[ExemptView]:
    """Every view carrying an idempotency marker, with its reason (for the walk guard)."""
    found: list[ExemptView] = []
    for route, name, view_func in all_views(urlconf):
        own = _own_exemption(view_func)
        if own is not None:
            found.append(ExemptView(route, name, None, own.marker, own.reason))
            continue
        routes = getattr(view_func, "method_routes", None)
        # One dispatcher is routed once per route name; ``by_method`` maps each method to its
        # (route name, view class), so report a method under its own route name only.
        for method, (route_name, view_class) in getattr(routes, "by_method", {}).items():
            routed = _own_exemption(view_class)
            if routed is not None and _same_route(name, route_name):
                found.append(ExemptView(route, name, method, routed.marker, routed.reason))
    return found
