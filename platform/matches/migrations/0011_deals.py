"""Names from the glossary (issue 15 point 4): a count of deals is `deals`, not `games`. A rename (every
stored value kept) and its check constraint under the new name."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('matches', '0010_human_games'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='match',
            name='match_games_positive',
        ),
        migrations.RenameField(
            model_name='match',
            old_name='games',
            new_name='deals',
        ),
        migrations.AddConstraint(
            model_name='match',
            constraint=models.CheckConstraint(condition=models.Q(('deals__gte', 1)), name='match_deals_positive'),
        ),
    ]
