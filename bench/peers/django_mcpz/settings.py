"""django-mcpz's peer project (``bench/peers/__init__.py``)."""

from bench.peers.project.settings import *  # noqa: F403

ROOT_URLCONF = "bench.peers.django_mcpz.urls"
