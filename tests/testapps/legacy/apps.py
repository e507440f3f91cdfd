from django.apps import AppConfig


class LegacyTestAppConfig(AppConfig):
    name = "tests.testapps.legacy"
    label = "legacy_testapp"
    default_auto_field = "django.db.models.BigAutoField"
