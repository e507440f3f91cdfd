"""OpenAPI annotations when drf-spectacular is installed; no-ops when it is not.

The toolkit does not require drf-spectacular: a project without it still gets working views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

try:
    from drf_spectacular.utils import OpenApiResponse, extend_schema
except ImportError:  # pragma: no cover - exercised by the lean-install test

    class OpenApiResponse:  # type: ignore[no-redef]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            del args, kwargs

    def extend_schema(*args: Any, **kwargs: Any) -> Callable[[F], F]:  # type: ignore[misc]
        def keep(view: F) -> F:
            return view

        return keep


__all__ = ["OpenApiResponse", "extend_schema"]
