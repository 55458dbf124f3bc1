"""BotVersion.validation_match_id: the version's newest validation match, stored on the version so that
the API's versions (and validation's checks) read one column instead of every seat of the version (10 ms
at 776 seats, growing with its history). Backfilled from the seats already stored: for each version
seated in a validation match, the newest such match (the highest id, as the seats were read before).
Reversed by dropping the column (the seats still hold what it was computed from)."""

from django.db import migrations, models
from django.db.models import Max

#: versions written per UPDATE of the backfill
BATCH = 500


def store_validation_matches(apps, schema_editor):
    BotVersion = apps.get_model("bots", "BotVersion")
    MatchSeat = apps.get_model("matches", "MatchSeat")
    latest = (
        MatchSeat.objects.filter(match__kind="validation", bot_version__isnull=False)
        .order_by().values("bot_version_id").annotate(latest=Max("match_id")).values_list("bot_version_id", "latest")
    )
    versions = [BotVersion(pk=pk, validation_match_id=match_id) for pk, match_id in latest]
    BotVersion.objects.bulk_update(versions, ["validation_match_id"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0004_bot_plays_in_events"),
        # MatchSeat must be in the historical state for the backfill
        ("matches", "0012_challenge_from_api"),
    ]

    operations = [
        migrations.AddField(
            model_name="botversion",
            name="validation_match_id",
            field=models.PositiveBigIntegerField(
                blank=True, editable=False, null=True, help_text="id of the version's newest validation match, or null"
            ),
        ),
        migrations.RunPython(store_validation_matches, migrations.RunPython.noop),
    ]
