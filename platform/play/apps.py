from django.apps import AppConfig


class PlayConfig(AppConfig):
    """Play a bot: a person's game against public bots in the browser (a human game)."""

    name = "play"
    default_auto_field = "django.db.models.BigAutoField"
