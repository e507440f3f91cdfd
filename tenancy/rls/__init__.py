"""PostgreSQL row-level security under tool calls: the database refuses another tenant's rows.

A project declares its tenant-owned models (``TENANCY_RLS_MODELS`` or ``declare``); migrating
installs, per declared table, ``ENABLE`` and ``FORCE ROW LEVEL SECURITY`` and a policy bound to
one database role (``TENANCY_RLS_ROLE``) that only tool calls take (``scoped``): the project's
own views, admin, commands and migrations never take it and see every row as before.
"""

from tenancy.rls.registry import Declared, declare, declared, enabled
from tenancy.rls.scope import scoped, take

__all__ = ["Declared", "declare", "declared", "enabled", "scoped", "take"]
