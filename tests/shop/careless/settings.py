"""The shop's settings, plus the careless tools' app (tests/shop/test_rls.py), and A2A skills
and tasks on the database worker as docs/new-project.md step 12 adds them (its block,
verbatim)."""

import django

from shop.settings import *  # noqa: F403
from shop.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "careless"]
ROOT_URLCONF = "careless.urls"

# toolkit: A2A skills (/a2a), and tool tasks run by `manage.py db_worker`
INSTALLED_APPS += ["a2a_tools", "django_tasks_db"]
if django.VERSION < (6, 0):
    INSTALLED_APPS += ["django_tasks"]  # Django 5.2: the tasks framework's backport
TASKS = {
    "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "mcp_tools"]}
}
MCP_TOOLS_TASK_QUEUE = "mcp_tools"
