"""Routes: ``/a2a`` (JSON-RPC, exactly; no trailing slash) and the public Agent Card."""

from django.urls import URLPattern, path

from a2a_tools.checks import sdk_installed

urlpatterns: list[URLPattern] = []
# Without the a2a extra the views cannot import: nothing is routed, and a2a_tools.E001 says
# what to install (instead of a traceback from every command that loads the URLconf).
if sdk_installed():
    from a2a_tools.views import a2a_view, agent_card_view

    urlpatterns = [
        path("a2a", a2a_view, name="a2a"),
        path(".well-known/agent-card.json", agent_card_view, name="a2a-agent-card"),
    ]
