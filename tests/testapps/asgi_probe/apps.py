from django.apps import AppConfig


class AsgiProbeConfig(AppConfig):
    name = "tests.testapps.asgi_probe"
    label = "asgi_probe_testapp"
