"""Routes: ``/a2a`` (JSON-RPC, exactly; no trailing slash) and the public Agent Card."""

from django.urls import path

from a2a_tools.views import a2a_view, agent_card_view

urlpatterns = [
    path("a2a", a2a_view, name="a2a"),
    path(".well-known/agent-card.json", agent_card_view, name="a2a-agent-card"),
]
