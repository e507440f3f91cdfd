"""Deliberately careless tools (issue 35), added to a copy of the shop by tests/shop/test_rls.py
only: each query forgets the store, and PostgreSQL's row-level security alone keeps the other
store's products out."""
