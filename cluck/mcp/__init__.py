"""The farm's MCP surface, discovered as the app's ``mcp`` module (like ``admin.py``).

Split the way ``cluck/api/`` is: ``production`` (flocks, grades, stock, daily entries) and
``commerce`` (customers, orders, receivables) hold the tools; ``resources`` the readable records
(a flock's record card, the grade list); ``prompts`` the prompts (summarise a day); ``tasks``
the long-running report. Every module is thin: it calls the same selectors and services as the
REST API and re-projects the result.
"""

from cluck.mcp import commerce, production, prompts, query, resources, tasks  # noqa: F401 (registers)
