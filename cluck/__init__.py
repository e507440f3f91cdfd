"""The Cluck reference project and farm domain."""

import os

# As a team's project package imports its Celery app (cookiecutter-django's config/__init__.py
# does): it must exist before anything asks Celery for its current app (django-tasks-fennel does
# while mcp_tools.tasks is imported), or that gets a broker-less fallback app.
if os.environ.get("CLUCK_TASK_ENGINE") == "celery":
    from cluck.celery import app as celery_app

    __all__ = ["celery_app"]
