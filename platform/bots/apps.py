from django.apps import AppConfig


class BotsConfig(AppConfig):
    """Bots, their immutable uploaded versions, and the validation of each version."""

    name = "bots"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # The validation result of a version arrives as a finished match of kind
        # "validation": register the handler with the matches app's hook registry.
        from matches import hooks

        from . import checks, services  # noqa: F401  (checks registers itself)

        hooks.register("validation", services.bot_version_validation_finish)
