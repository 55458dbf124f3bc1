from django.apps import AppConfig


def entered_ladders_rules(bot):
    """(label, rules) of each ladder ``bot`` is an active entry of: a new version is validated
    under them (validation.configurations)."""
    from .models import LadderEntry

    entries = LadderEntry.objects.filter(bot=bot, status=LadderEntry.Status.ACTIVE, ladder__active=True)
    for name, rules in entries.values_list("ladder__name", "ladder__rules"):
        yield f"ladder {name}", rules


class LaddersConfig(AppConfig):
    """Ladders: entries, matchmaking and Elo ratings stored per match."""

    name = "ladders"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Ratings are written inside the transaction that stores a ladder match's result:
        # settings.MATCH_RESULT_HOOKS names services.ladder_match_finish for kind "ladder".
        from validation import configurations as validation

        from . import services

        validation.register_event_rules(entered_ladders_rules)
        validation.register_event_refusal(services.ladder_validation_refusal)
