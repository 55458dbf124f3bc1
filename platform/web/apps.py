from django.apps import AppConfig


class WebConfig(AppConfig):
    """The pages people look at beyond the data apps: replay viewer, bot author guide, live status."""

    name = "web"
    default_auto_field = "django.db.models.BigAutoField"
