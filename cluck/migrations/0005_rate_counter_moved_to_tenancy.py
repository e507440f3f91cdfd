"""Rate counters moved to ``tenancy`` (``tenancy_rate_counter``); the farm's table goes.

Counters are ephemeral (a fixed window of at most minutes), so nothing is copied.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("cluck", "0004_rate_counter_unlogged"),
        ("tenancy", "0002_rate_counter"),
    ]

    operations = [migrations.DeleteModel(name="RateCounter")]
