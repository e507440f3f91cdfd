from django.apps import AppConfig
from tenancy import rls


class ProjectsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "projects"

    def ready(self) -> None:
        # Row-level security: under a tool call PostgreSQL refuses another organization's
        # projects, whatever the query. The project's own code is not affected.
        rls.declare("projects.Project", field="organization")
