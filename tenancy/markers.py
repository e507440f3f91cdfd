"""View markers read by the tenancy middleware (never path lists)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

IGNORES_AMBIENT_CREDENTIALS = "tenancy_ignores_ambient_credentials"
ACCEPTS_SUPERSEDED_CREDENTIALS = "tenancy_accepts_superseded_credentials"


def ignores_ambient_credentials(view: F) -> F:
    """The view authenticates from its body (login): a bearer sent along is not even read.

    A farm-A token sent to farm B's login must not resolve farm A.
    """
    setattr(view, IGNORES_AMBIENT_CREDENTIALS, True)
    return view


def accepts_superseded_credentials(view: F) -> F:
    """The view still runs for a token whose credential epoch moved on (logout)."""
    setattr(view, ACCEPTS_SUPERSEDED_CREDENTIALS, True)
    return view


def has_marker(view_func: Any, marker: str) -> bool:
    """True if the view function, or the class-based view behind it, carries ``marker``."""
    if getattr(view_func, marker, False):
        return True
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return bool(view_class is not None and getattr(view_class, marker, False))
