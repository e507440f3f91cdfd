"""The peers ``bench/mcp_bench.py`` measures beside ``/mcp``: other Django MCP servers serving
the same tool behind the same authentication and rate count, each in its own venv
(``venvs.py``) and its own uvicorn process.

``project/`` is what every peer project shares (settings, the tenant model, the rate budget,
seeding); ``django_mcp_server/`` and ``django_mcpz/`` are one peer each. These modules run in
the peers' venvs, not the project venv (mypy and the smoke test leave them to those venvs).
"""
