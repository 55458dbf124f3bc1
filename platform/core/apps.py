from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Site-wide pieces: the base layout, the home page, worker heartbeats."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"
