from django.apps import AppConfig


class ValidationConfig(AppConfig):
    """A bot version's validation: the configurations it must pass, played as matches of kind
    "validation" against a reference bot, and what their results do to the version and its entries
    (settings.MATCH_RESULT_HOOKS names validation.services.bot_version_validation_finish for them)."""

    name = "validation"
    default_auto_field = "django.db.models.BigAutoField"
