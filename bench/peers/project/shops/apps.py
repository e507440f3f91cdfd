from django.apps import AppConfig


class ShopsConfig(AppConfig):
    name = "bench.peers.project.shops"
    label = "peer_shops"
    default_auto_field = "django.db.models.BigAutoField"
