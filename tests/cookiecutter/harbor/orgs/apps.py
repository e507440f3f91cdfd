from django.apps import AppConfig


class OrgsConfig(AppConfig):
    name = "harbor.orgs"
