"""Names from the glossary (issue 15 point 4): a table of a round is a `Table`, as the pure code
(`tournaments.tables.Table`) and the pages call it, not a `Pairing`. Renames only, every stored row
kept: the models `Pairing` -> `Table` and `PairingSeat` -> `TableSeat` (their database tables follow),
the seat's `pairing` -> `table`, the reverse names `Round.pairings` -> `Round.tables` and
`Match.tournament_pairings` -> `Match.tournament_tables`, the five constraints under the new name, and
the models' permissions (`view_pairing` -> `view_table`, ...), so whoever held them keeps them."""

import django.db.models.deletion
from django.db import migrations, models

from ._renames import forwards

RENAMES = {"pairing": "table", "pairingseat": "tableseat"}


class Migration(migrations.Migration):

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('tournaments', '0006_deals'),
    ]

    operations = [
        migrations.RemoveConstraint(model_name='pairing', name='pairing_number_unique_per_round'),
        migrations.RemoveConstraint(model_name='pairing', name='pairing_match_unique'),
        migrations.RemoveConstraint(model_name='pairing', name='pairing_bye_has_no_match'),
        migrations.RemoveConstraint(model_name='pairingseat', name='pairing_seat_unique'),
        migrations.RemoveConstraint(model_name='pairingseat', name='pairing_entry_unique'),
        migrations.RenameModel(old_name='Pairing', new_name='Table'),
        migrations.RenameModel(old_name='PairingSeat', new_name='TableSeat'),
        migrations.RunPython(forwards(RENAMES), forwards({new: old for old, new in RENAMES.items()})),
        migrations.RenameField(model_name='tableseat', old_name='pairing', new_name='table'),
        migrations.AlterModelOptions(name='tableseat', options={'ordering': ['table', 'seat']}),
        migrations.AlterField(
            model_name='table',
            name='round',
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name='tables', to='tournaments.round'
            ),
        ),
        migrations.AlterField(
            model_name='table',
            name='match',
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                related_name='tournament_tables', to='matches.match',
            ),
        ),
        migrations.AddConstraint(
            model_name='table',
            constraint=models.UniqueConstraint(fields=('round', 'number'), name='table_number_unique_per_round'),
        ),
        migrations.AddConstraint(
            model_name='table',
            constraint=models.UniqueConstraint(fields=('match',), name='table_match_unique'),
        ),
        migrations.AddConstraint(
            model_name='table',
            constraint=models.CheckConstraint(
                condition=models.Q(('bye', False), ('match__isnull', True), _connector='OR'),
                name='table_bye_has_no_match',
            ),
        ),
        migrations.AddConstraint(
            model_name='tableseat',
            constraint=models.UniqueConstraint(fields=('table', 'seat'), name='table_seat_unique'),
        ),
        migrations.AddConstraint(
            model_name='tableseat',
            constraint=models.UniqueConstraint(fields=('table', 'entry'), name='table_entry_unique'),
        ),
    ]
