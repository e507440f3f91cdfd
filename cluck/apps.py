from django.apps import AppConfig
from django.conf import settings


class CluckConfig(AppConfig):
    name = "cluck"
    verbose_name = "Cluck farm"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cluck import checks  # noqa: F401

        if settings.CLUCK_OTEL:
            from cluck.telemetry import configure

            configure()
