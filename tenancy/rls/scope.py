"""Taking the tools' role for one transaction: one statement at its start, nothing left after.

``set_config(..., true)`` is ``SET LOCAL``: it ends with the transaction (or with the savepoint
it was made in, if that is rolled back), so behind PgBouncer in transaction mode the next client
of the connection never inherits it. It is made on the connection of the thread that runs the
tool's code (a sync tool has a worker thread and a connection of its own).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections, transaction

from tenancy import conf
from tenancy.rls.registry import enabled

_TAKE = "SELECT set_config('role', %s, true), set_config(%s, %s, true)"
_TAKE_READ_ONLY = _TAKE + ", set_config('transaction_read_only', 'on', true)"
# Read in the same statement as the switch, to restore inside a caller's transaction.
_TAKE_KEEPING = (
    "SELECT current_setting('role'), current_setting(%s, true), "
    "set_config('role', %s, true), set_config(%s, %s, true)"
)
_RESTORE = "SELECT set_config('role', %s, true), set_config(%s, %s, true)"


def take(tenant_id: Any, *, read_only: bool = False, using: str = DEFAULT_DB_ALIAS) -> None:
    """Take the tools' role and set the tenant for the rest of the current transaction.

    The caller is at the start of a transaction it owns (inside ``atomic``), and it ends with
    it; ``scoped`` is the general form.
    """
    connection = connections[using]
    assert connection.in_atomic_block, "take() outside a transaction would last one statement"
    with connection.cursor() as cursor:
        cursor.execute(
            _TAKE_READ_ONLY if read_only else _TAKE,
            [conf.get("RLS_ROLE"), conf.get("RLS_SETTING"), str(tenant_id)],
        )


@contextmanager
def scoped(
    tenant_id: Any, *, read_only: bool = False, using: str = DEFAULT_DB_ALIAS
) -> Iterator[None]:
    """Run the block in a transaction that has the tools' role and ``tenant_id`` (and is read
    only when ``read_only``); outside a transaction, the block's own.

    Inside a caller's transaction (a test's, ``ATOMIC_REQUESTS``) the block gets a savepoint,
    and the caller's role and tenant are back after it: a read's savepoint is rolled back (it
    wrote nothing), a write's restored by a second statement. Off (``enabled``): just the block.
    """
    if not enabled(using):
        yield
        return
    connection = connections[using]
    if not connection.in_atomic_block:
        with transaction.atomic(using=using):
            take(tenant_id, read_only=read_only, using=using)
            yield
        return
    role, setting = conf.get("RLS_ROLE"), conf.get("RLS_SETTING")
    with transaction.atomic(using=using):
        if read_only:
            take(tenant_id, read_only=True, using=using)
            try:
                yield
            finally:
                transaction.set_rollback(True, using=using)
            return
        with connection.cursor() as cursor:
            cursor.execute(_TAKE_KEEPING, [setting, role, setting, str(tenant_id)])
            before_role, before_tenant = cursor.fetchone()[:2]
        yield
        with connection.cursor() as cursor:
            cursor.execute(_RESTORE, [before_role, setting, before_tenant or ""])
