from django.apps import AppConfig


class CluckConfig(AppConfig):
    name = "cluck"
    verbose_name = "Cluck farm"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cluck import checks  # noqa: F401
