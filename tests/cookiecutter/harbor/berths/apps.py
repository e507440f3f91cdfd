from django.apps import AppConfig


class BerthsConfig(AppConfig):
    name = "harbor.berths"
