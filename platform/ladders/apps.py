from django.apps import AppConfig


class LaddersConfig(AppConfig):
    """Ladders: entries, matchmaking and Elo ratings stored per match."""

    name = "ladders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Ratings are written inside the transaction that stores a ladder match's result.
        from matches import hooks

        from . import services

        hooks.register("ladder", services.ladder_match_finish)
