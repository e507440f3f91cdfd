"""Deliberately careless code (issue 35), added to a copy of the tracker by
tests/existing/test_rls.py only: MCP tools whose queries forget the organization, and the same
queries in a view, an admin page and a management command of the project's own."""
