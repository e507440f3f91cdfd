from django.apps import AppConfig


class IdemTestAppConfig(AppConfig):
    name = "tests.testapps.idem"
    label = "idem_testapp"
    default_auto_field = "django.db.models.BigAutoField"
