"""The tracker's settings, plus the careless app (tests/existing/test_rls.py), and A2A and the
database task worker added as docs/existing-project.md says (section 6's row-level security
part, and section 14's block, verbatim)."""

import django

from tracker.settings import *  # noqa: F403
from tracker.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "a2a_tools", "careless"]
if django.VERSION < (6, 0):
    INSTALLED_APPS += ["django_tasks"]  # the tasks framework's backport
ROOT_URLCONF = "careless.urls"

# settings: MCP tasks on the database worker
INSTALLED_APPS += ["django_tasks_db"]
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default", "mcp_tools"],
    }
}
MCP_TOOLS_TASK_QUEUE = "mcp_tools"
