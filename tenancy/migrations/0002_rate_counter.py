"""Rate-limit counters (``tenancy.rates.counters.CounterCache``), UNLOGGED on PostgreSQL.

Skipping the write-ahead log means a counter update is not flushed to disk at commit: every
rate-limited request does one, and counters lost in a crash only reopen a rate window. The
table is still one table on the primary that every process counts in.
"""

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _set(schema_editor: BaseDatabaseSchemaEditor, persistence: str) -> None:
    if schema_editor.connection.vendor == "postgresql":
        table = schema_editor.quote_name("tenancy_rate_counter")
        schema_editor.execute(f"ALTER TABLE {table} SET {persistence}")


def unlogged(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _set(schema_editor, "UNLOGGED")


def logged(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _set(schema_editor, "LOGGED")


class Migration(migrations.Migration):
    dependencies = [
        ("tenancy", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                ("key", models.CharField(max_length=250, primary_key=True, serialize=False)),
                ("value", models.BigIntegerField()),
                ("expires", models.DateTimeField(db_index=True)),
            ],
            options={"db_table": "tenancy_rate_counter"},
        ),
        migrations.RunPython(unlogged, logged),
    ]
