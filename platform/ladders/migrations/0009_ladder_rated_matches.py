"""Ladder.rated_matches, stored (the ladder lists counted every rated match per request), filled for
the existing ladders from their match links (ladders.services._rated_count)."""

from django.db import migrations, models
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def fill(apps, schema_editor):
    Ladder = apps.get_model("ladders", "Ladder")
    LadderMatch = apps.get_model("ladders", "LadderMatch")
    rated = LadderMatch.objects.filter(ladder=OuterRef("pk"), rated=True).order_by().values("ladder_id")
    Ladder.objects.update(
        rated_matches=Coalesce(Subquery(rated.annotate(n=Count("pk")).values("n"), output_field=IntegerField()), Value(0))
    )


class Migration(migrations.Migration):

    dependencies = [
        ("ladders", "0008_entry_wins_last_change"),
    ]

    operations = [
        migrations.AddField(
            model_name="ladder",
            name="rated_matches",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
