"""Reads. Always tenant- and flock-scope-filtered, always bounded in the database."""
