from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        # Rounds advance when their matches end: the hook runs inside the result's transaction.
        from matches import hooks

        from . import services

        hooks.register("tournament", services.tournament_match_finished)
