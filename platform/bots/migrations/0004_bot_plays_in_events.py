"""Bot.plays_in_events: whether a version of the bot has had a seat in a ladder or tournament match,
stored on the bot so that bots.selectors need not query matches (an app above bots). Backfilled
from the seats already stored."""

from django.db import migrations, models

#: bots.selectors.EVENT_MATCH_KINDS when this migration was written (a migration keeps its own copy)
EVENT_MATCH_KINDS = ("ladder", "tournament")


def mark_event_entrants(apps, schema_editor):
    Bot = apps.get_model("bots", "Bot")
    MatchSeat = apps.get_model("matches", "MatchSeat")
    entrants = MatchSeat.objects.filter(match__kind__in=EVENT_MATCH_KINDS, bot_version__isnull=False).values(
        "bot_version__bot"
    )
    Bot.objects.filter(pk__in=entrants).update(plays_in_events=True)


class Migration(migrations.Migration):
    dependencies = [
        ("bots", "0003_version_validation_runs"),
        # MatchSeat must be in the historical state for the backfill
        ("matches", "0012_challenge_from_api"),
    ]

    operations = [
        migrations.AddField(
            model_name="bot",
            name="plays_in_events",
            field=models.BooleanField(
                default=False,
                editable=False,
                help_text="A version of this bot has had a seat in a ladder or tournament match: organizers may judge it.",
            ),
        ),
        migrations.RunPython(mark_event_entrants, migrations.RunPython.noop),
    ]
