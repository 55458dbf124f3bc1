"""The Challenge model now belongs to matches (matches/0012): dropped from this app's state only,
its table ``api_challenge`` and rows stay."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_challenge_address"),
        ("matches", "0012_challenge_from_api"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Challenge")], database_operations=[]),
    ]
