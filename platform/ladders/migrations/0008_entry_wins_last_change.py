"""LadderEntry.wins and LadderEntry.last_change, stored (the ladder table counted them per request),
filled for the existing entries from their rating changes (ladders.services._history_counts)."""

from django.db import migrations, models
from django.db.models import Count, F, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def fill(apps, schema_editor):
    # one UPDATE per ladder; the same definitions as ladders.services._history_counts
    Ladder = apps.get_model("ladders", "Ladder")
    LadderEntry = apps.get_model("ladders", "LadderEntry")
    RatingChange = apps.get_model("ladders", "RatingChange")
    wins = RatingChange.objects.filter(entry=OuterRef("pk"), rank=1).order_by().values("entry_id")
    fitted = RatingChange.objects.filter(entry=OuterRef("pk"), after__isnull=False).order_by("-pk")
    for ladder_id in Ladder.objects.values_list("pk", flat=True):
        LadderEntry.objects.filter(ladder_id=ladder_id).update(
            wins=Coalesce(Subquery(wins.annotate(n=Count("pk")).values("n"), output_field=IntegerField()), Value(0)),
            last_change=Subquery(
                fitted.annotate(delta=F("after") - F("before")).values("delta")[:1],
                output_field=models.DecimalField(max_digits=7, decimal_places=2),
            ),
        )


class Migration(migrations.Migration):

    dependencies = [
        ("ladders", "0007_rating_change_entry_newest"),
    ]

    operations = [
        migrations.AddField(
            model_name="ladderentry",
            name="last_change",
            field=models.DecimalField(blank=True, decimal_places=2, max_digits=7, null=True),
        ),
        migrations.AddField(
            model_name="ladderentry",
            name="wins",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
