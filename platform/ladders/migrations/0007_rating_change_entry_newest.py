from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("ladders", "0006_batch_fit"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="ratingchange",
            index=models.Index(fields=["entry", "-id"], name="rating_change_entry_newest"),
        ),
    ]
