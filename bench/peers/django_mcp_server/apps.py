from django.apps import AppConfig


class PeerConfig(AppConfig):
    name = "bench.peers.django_mcp_server"
    label = "peer_django_mcp_server"
