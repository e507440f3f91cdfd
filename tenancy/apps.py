from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    verbose_name = "Tenancy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tenancy import checks, signals  # noqa: F401
        from tenancy.conf import install_counter_cache_default, install_membership_model_default

        install_membership_model_default()
        install_counter_cache_default()
