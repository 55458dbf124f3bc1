"""Names from the glossary (issue 15 point 4): a count of deals is `deals`, not `games`. A rename (every
stored value kept) and its check constraint under the new name."""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tournaments', '0005_podium'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='tournament',
            name='tournament_games_positive',
        ),
        migrations.RenameField(
            model_name='tournament',
            old_name='games',
            new_name='deals',
        ),
        migrations.AddConstraint(
            model_name='tournament',
            constraint=models.CheckConstraint(condition=models.Q(('deals__gte', 1)), name='tournament_deals_positive'),
        ),
    ]
