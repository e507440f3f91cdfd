"""Old import paths of modules that moved into a package: each keeps working for one release.

An old module holds only ``__getattr__ = moved_to("tenancy.<package>.<module>")``: a name read
through it (``from tenancy.throttling import rate_budget``, a settings string such as
``"tenancy.drf_authentication.TenancyAuthentication"`` resolved by ``import_string``) comes from the
new module with a ``DeprecationWarning`` pointing at the caller.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib import import_module
from typing import Any


def moved_to(new: str, *, old: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` that forwards every name of ``old`` to ``new``."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        warnings.warn(
            f"{old} moved to {new}; import {new}.{name} (the old path goes in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module(new), name)

    return __getattr__
