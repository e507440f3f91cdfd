"""Benchmarks (not tests): run each script with ``.venv/bin/python bench/<name>.py``."""
