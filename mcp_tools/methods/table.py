"""The part of a method table every era shares: tools, the feature methods, and tasks.

Each era's table (``Era.methods``) is this plus its own lifecycle methods; which ``tasks/*``
it serves differs by era, so it names them. The flag is ``Era.methods``' own: validate the
params against the SDK's models (``tasks/*`` checks its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcp_tools.methods import features, tasks, tools

if TYPE_CHECKING:  # the era is above this layer: only its interface is named here
    from mcp_tools.eras import Handler


def shared_methods(task_methods: Iterable[str]) -> dict[str, tuple[Handler, bool]]:
    return {
        "tools/list": (tools.list_tools, True),
        "tools/call": (tools.call_tool, True),
        **{method: (features.handle, True) for method in features.FEATURE_METHODS},
        **{method: (tasks.handle, False) for method in task_methods},
    }
