"""Rate counters skip the write-ahead log on PostgreSQL.

A counter update is then not flushed to disk at commit: every MCP request does one, and
counters lost in a crash only reopen a rate window. The table is still one table on the
primary that every replica counts in.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _set(schema_editor: BaseDatabaseSchemaEditor, persistence: str) -> None:
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name("cluck_rate_counter")
        schema_editor.execute(f"ALTER TABLE {table} SET {persistence}")


def unlogged(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _set(schema_editor, "UNLOGGED")


def logged(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _set(schema_editor, "LOGGED")


class Migration(migrations.Migration):
    dependencies = [
        ("cluck", "0003_rate_counter"),
    ]

    operations = [migrations.RunPython(unlogged, logged)]
