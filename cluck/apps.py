from django.apps import AppConfig


class CluckConfig(AppConfig):
    name = "cluck"
    verbose_name = "Cluck farm"
    default_auto_field = "django.db.models.BigAutoField"
