from django.apps import AppConfig


class TaskEngineConfig(AppConfig):
    """Test-only tools for the task engine's fault tests (tests/mcp_tools/test_task_engine.py):
    tasks that announce themselves on disk and can be held until their worker is killed."""

    name = "tests.testapps.task_engine"
    label = "task_engine_testapp"
    default_auto_field = "django.db.models.BigAutoField"
