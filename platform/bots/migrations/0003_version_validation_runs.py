from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0002_source_access"),
    ]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="validation_runs",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
