from django.apps import AppConfig


class BotsConfig(AppConfig):
    """Bots and their immutable uploaded versions (their validation is the validation app's)."""

    name = "bots"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from . import checks  # noqa: F401  (checks registers itself)
