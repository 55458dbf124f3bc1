from django.apps import AppConfig


def entered_tournaments_rules(bot):
    """(label, rules) of each tournament ``bot`` is an active entry of that has not started, at each
    of its table sizes: a new version is validated under them (validation.configurations). A started one
    (running or paused) plays the versions frozen at its start: a new version never plays there."""
    from tournaments.tables import table_size_bounds

    from .models import Entry, Tournament

    entries = Entry.objects.filter(bot=bot, status=Entry.Status.ACTIVE).exclude(
        tournament__status__in=[Tournament.Status.RUNNING, Tournament.Status.PAUSED, Tournament.Status.FINISHED,
                                Tournament.Status.CANCELLED]
    )
    for name, rules in entries.values_list("tournament__name", "tournament__rules"):
        low, high = table_size_bounds(rules["players"])
        for players in range(low, high + 1):
            yield f"tournament {name}", {**rules, "players": players}


class TournamentsConfig(AppConfig):
    """The tournament app: the pure competition code it runs is the ``tournaments`` package at the
    top level; the app keeps the label ``tournaments`` (its tables, migrations, permissions and
    admin URLs are unchanged by the move under platform/)."""

    name = "tournaments_app"
    label = "tournaments"
    verbose_name = "Tournaments"

    def ready(self) -> None:
        # Rounds advance when their matches end: settings.MATCH_RESULT_HOOKS names
        # services.tournament_match_finished for kind "tournament".
        from validation import configurations as validation

        from . import services

        validation.register_event_rules(entered_tournaments_rules)
        validation.register_event_refusal(services.tournament_validation_refusal)
