from django.apps import AppConfig


class ValidationConfig(AppConfig):
    """A bot version's validation: the configurations it must pass, played as matches of kind
    "validation" against a reference bot, and what their results do to the version and its entries."""

    name = "validation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from matches import hooks

        from . import services

        # the validation result of a version arrives as a finished match of kind "validation"
        hooks.register("validation", services.bot_version_validation_finish)
