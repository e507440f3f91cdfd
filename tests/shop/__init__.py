"""A Django project made the way docs/new-project.md says, and the tests that hold it to that.

``manage.py``, ``shop/`` and ``catalog/`` are the project (tests copy them to a temporary
directory and run them there, so nothing of the farm is importable); ``test_*.py`` are tests.
"""
