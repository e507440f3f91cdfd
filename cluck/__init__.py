"""The Cluck reference project and farm domain."""

import os

# As a team's project package imports its Celery app (cookiecutter-django's config/__init__.py
# does): created before anything asks Celery for its current app (django-tasks-fennel does
# while mcp_tools.tasks is imported), it is the app the web processes send with. (Created
# later,
# in a ready(), it would not be: the broker-less fallback app would. Not created at all,
# django-tasks-fennel's bundled app would, configured from the same CELERY_ settings.)
if os.environ.get("CLUCK_TASK_ENGINE") == "celery":
    from cluck.celery import app as celery_app

    __all__ = ["celery_app"]
