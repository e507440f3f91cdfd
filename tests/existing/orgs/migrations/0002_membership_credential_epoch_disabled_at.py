from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("orgs", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="membership",
            name="credential_epoch",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="membership",
            name="disabled_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
