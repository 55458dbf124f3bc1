from django.apps import AppConfig


class MatchesConfig(AppConfig):
    """Matches: their seats, results, replays and logs, and the worker path that plays them."""

    name = "matches"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
