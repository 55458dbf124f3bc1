from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The REST API under /api/: tokens, challenges, and thin views over the other apps' services."""

    name = "api"
    default_auto_field = "django.db.models.BigAutoField"
