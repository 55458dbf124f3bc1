"""Names from the glossary (issue 15 point 4): a round of a tournament is a `TournamentRound` (the
glossary's "tournament round"), so `Round` names nothing but the glossary's round of UNO. A rename,
every stored row kept: the database table becomes tournaments_tournamentround (the tables' foreign
keys follow), and the model's permissions are renamed with it (`view_round` -> `view_tournamentround`,
...), so whoever held them keeps them. Its constraints keep their names (round_number_unique_per_tournament,
round_number_positive, round_status_valid): they name the round's number and status, not the class."""

from django.db import migrations

from ._renames import forwards

RENAMES = {"round": "tournamentround"}


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('tournaments', '0007_table'),
    ]

    operations = [
        migrations.RenameModel(old_name='Round', new_name='TournamentRound'),
        migrations.RunPython(forwards(RENAMES), forwards({new: old for old, new in RENAMES.items()})),
    ]
