"""The farm's Celery app (``CLUCK_TASK_ENGINE=celery``), shaped as a team's own app is (the
layout cookiecutter-django generates): settings read under the ``CELERY_`` namespace, tasks
found in every installed app's ``tasks`` module, ``mcp_tools.tasks`` among them.

Worker: ``celery -A cluck.celery worker -Q mcp_tools`` (docs/deploying.md).
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")

app = Celery("cluck")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
