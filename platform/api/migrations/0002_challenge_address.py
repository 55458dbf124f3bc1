from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="challenge",
            name="address",
            field=models.CharField(blank=True, default="", max_length=45),
        ),
        migrations.AddIndex(
            model_name="challenge",
            index=models.Index(fields=["address", "created_at"], name="api_challenge_address"),
        ),
    ]
