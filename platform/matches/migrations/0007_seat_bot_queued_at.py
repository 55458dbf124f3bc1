"""MatchSeat.bot and MatchSeat.queued_at: copies of the version's bot and the match's queued_at, so
a bot's or a version's matches are read newest first from an index. Existing seats are filled here
(one UPDATE each, in the database); 0008 makes queued_at required and adds the indexes."""

import django.db.models.deletion
from django.db import migrations, models


def fill(apps, schema_editor):
    MatchSeat = apps.get_model("matches", "MatchSeat")
    Match = apps.get_model("matches", "Match")
    BotVersion = apps.get_model("bots", "BotVersion")
    MatchSeat.objects.filter(queued_at__isnull=True).update(
        queued_at=models.Subquery(Match.objects.filter(pk=models.OuterRef("match_id")).values("queued_at")[:1])
    )
    MatchSeat.objects.filter(bot_version__isnull=False, bot__isnull=True).update(
        bot_id=models.Subquery(BotVersion.objects.filter(pk=models.OuterRef("bot_version_id")).values("bot_id")[:1])
    )


class Migration(migrations.Migration):

    dependencies = [
        ("bots", "0002_source_access"),
        ("matches", "0006_match_lease_and_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="matchseat",
            name="bot",
            field=models.ForeignKey(
                blank=True, null=True, db_index=False, on_delete=django.db.models.deletion.PROTECT,
                related_name="+", to="bots.bot",
            ),
        ),
        migrations.AddField(
            model_name="matchseat",
            name="queued_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=False),
    ]
