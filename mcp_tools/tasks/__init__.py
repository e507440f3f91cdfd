"""Long-running calls as MCP tasks: the store of task rows (``store``), the run of one task
(``run``) and the engine that runs it (``engine``: an in-process pool or a queue).

``run_task`` is the engine's job and stays here, light, so that its name is still
``mcp_tools.tasks.run_task``: jobs queued before an upgrade keep resolving, and Celery's
autodiscovery (an installed app's ``tasks`` module) still registers it.
"""

from __future__ import annotations

try:  # Django 6.0 and later: the tasks framework is Django's own.
    from django.tasks import task as _engine_task
except ImportError:  # Django 5.2: the django-tasks backport, the same @task / enqueue API.
    from django_tasks import task as _engine_task  # type: ignore[no-redef]

__all__ = ["run_task"]


@_engine_task()
def run_task(task_id: str) -> None:
    """The engine's job for one MCP/A2A task: everything else is read from the task store."""
    from mcp_tools.tasks.run import execute  # the run imports models: only once it runs

    execute(task_id)


# ``mcp_tools.tasks`` was the tasks method family's module; what another protocol used from it
# (docs/mcp_tools.md) is in ``mcp_tools.tasks.run`` now. Kept for one release.
_MOVED_TO_RUN = frozenset({"Handover", "run_as_task", "get_task", "cancel_task"})


def __getattr__(name: str) -> object:
    if name not in _MOVED_TO_RUN:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings

    from mcp_tools.tasks import run

    warnings.warn(
        f"mcp_tools.tasks.{name} moved to mcp_tools.tasks.run.{name}; the old path goes in the "
        "next release.",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(run, name)
