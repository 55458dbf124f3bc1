"""The Challenge model moves from the api app to matches; its table ``api_challenge`` and its rows
stay as they are (state only: api/0003 drops the model from the api app's state). The content type
follows, so staff permissions on challenges and the admin's history of them are kept."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def content_type_to_matches(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label="matches", model="challenge").exists():
        ContentType.objects.filter(app_label="api", model="challenge").update(app_label="matches")


def content_type_to_api(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label="api", model="challenge").exists():
        ContentType.objects.filter(app_label="matches", model="challenge").update(app_label="api")


class Migration(migrations.Migration):
    dependencies = [
        ("matches", "0011_deals"),
        ("api", "0002_challenge_address"),
        ("ladders", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Challenge",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("address", models.CharField(blank=True, default="", max_length=45)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("challenger", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="challenges", to=settings.AUTH_USER_MODEL)),
                        ("ladder", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="challenges", to="ladders.ladder")),
                        ("match", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="challenge", to="matches.match")),
                    ],
                    options={
                        "db_table": "api_challenge",
                        "ordering": ["-created_at", "-pk"],
                        "indexes": [models.Index(fields=["address", "created_at"], name="api_challenge_address")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_type_to_matches, content_type_to_api),
    ]
