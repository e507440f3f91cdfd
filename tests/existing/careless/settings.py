"""The tracker's settings, plus the careless app (tests/existing/test_rls.py), A2A and the
database task worker, added as a team adds them (docs/a2a.md, docs/existing-project.md
section 14)."""

import django

from tracker.settings import *  # noqa: F403
from tracker.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "a2a_tools", "django_tasks_db", "careless"]
if django.VERSION < (6, 0):
    INSTALLED_APPS += ["django_tasks"]  # the tasks framework's backport
TASKS = {
    "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "mcp_tools"]}
}
MCP_TOOLS_TASK_QUEUE = "mcp_tools"
ROOT_URLCONF = "careless.urls"
