"""System checks of ``a2a_tools``."""

from __future__ import annotations

import importlib.util
from typing import Any

from django.core import checks


def sdk_installed() -> bool:
    """The ``a2a`` extra (a2a-sdk) is installed: the skills' types and validation are its."""
    return importlib.util.find_spec("a2a") is not None


@checks.register()
def check_sdk(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``a2a_tools.E001``: ``a2a_tools`` is installed without the a2a-sdk package."""
    if sdk_installed():
        return []
    return [
        checks.Error(
            "a2a_tools is in INSTALLED_APPS but the a2a-sdk package is not installed; /a2a "
            "and the Agent Card are not served.",
            hint="pip install 'cluck[a2a]' (or remove a2a_tools from INSTALLED_APPS).",
            id="a2a_tools.E001",
        )
    ]
