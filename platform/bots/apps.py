from django.apps import AppConfig


class BotsConfig(AppConfig):
    """Bots, their immutable uploaded versions, and the validation of each version."""

    name = "bots"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # The validation result of a version arrives as a finished match of kind "validation":
        # settings.MATCH_RESULT_HOOKS names services.bot_version_validation_finish for it.
        from . import checks  # noqa: F401  (checks registers itself)
