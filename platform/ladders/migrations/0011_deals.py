"""Names from the glossary (issue 15 point 4): a count of deals is `deals`, not `games`; a ladder entry's
rated results of its rated version are `version_matches`. Renames only: every stored value is kept."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ladders', '0010_glossary_help'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='ladder',
            name='ladder_games_range',
        ),
        migrations.RenameField(
            model_name='ladder',
            old_name='games',
            new_name='deals',
        ),
        migrations.RenameField(
            model_name='ladderentry',
            old_name='games',
            new_name='version_matches',
        ),
        migrations.AddConstraint(
            model_name='ladder',
            constraint=models.CheckConstraint(condition=models.Q(('deals__gte', 1), ('deals__lte', 100)), name='ladder_deals_range', violation_error_message='deals must be 1 to 100 deals per match.'),
        ),
    ]
