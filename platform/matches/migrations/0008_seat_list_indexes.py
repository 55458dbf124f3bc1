"""MatchSeat.queued_at required (0007 filled it), the check that a seat with a version names its
bot, and the indexes a bot's and a version's match lists read newest first from."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("matches", "0007_seat_bot_queued_at"),
    ]

    operations = [
        migrations.AlterField(
            model_name="matchseat",
            name="queued_at",
            field=models.DateTimeField(),
        ),
        migrations.AddIndex(
            model_name="matchseat",
            index=models.Index(fields=["bot", "-queued_at", "-match"], name="seat_bot_matches_idx"),
        ),
        migrations.AddIndex(
            model_name="matchseat",
            index=models.Index(fields=["bot_version", "-queued_at", "-match"], name="seat_version_matches_idx"),
        ),
        migrations.AddConstraint(
            model_name="matchseat",
            constraint=models.CheckConstraint(
                condition=models.Q(bot_version__isnull=True, bot__isnull=True)
                | models.Q(bot_version__isnull=False, bot__isnull=False),
                name="match_seat_bot_with_version",
            ),
        ),
    ]
