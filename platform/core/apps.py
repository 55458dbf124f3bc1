from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The bottom app: the base layout, roles, rate limits, converters, worker heartbeats."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"
