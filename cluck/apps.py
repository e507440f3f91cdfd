from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps


class CluckAdminConfig(admin_apps.AdminConfig):
    """``django.contrib.admin`` with the farm's site (sign-in attempts budgeted)."""

    default = False  # "cluck" itself is CluckConfig
    default_site = "cluck.admin_site.CluckAdminSite"


class CluckConfig(AppConfig):
    name = "cluck"
    verbose_name = "Cluck farm"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from cluck import checks  # noqa: F401
        from cluck.models.base import TenantOwned
        from tenancy import rls

        # Every farm-owned table is enforced by PostgreSQL under tool calls (tenancy.rls).
        for model in self.get_models():
            if issubclass(model, TenantOwned):
                rls.declare(model, field="farm")

        if settings.CLUCK_OTEL:
            from cluck.telemetry import configure

            configure()
