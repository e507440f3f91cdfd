"""The shop's REST API (a DRF ModelViewSet) and two of its actions published as MCP tools.

Not part of docs/new-project.md: ``tests/shop/test_drf_tools.py`` runs the shop with
``DJANGO_SETTINGS_MODULE=storefront.settings`` (the shop's settings plus this app).
"""
