"""Testing a project's tools: the test client and the pytest plugin."""
