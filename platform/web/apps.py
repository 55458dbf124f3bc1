from django.apps import AppConfig


class WebConfig(AppConfig):
    """The site's pages beyond the data apps: the home page, replay viewer, bot author guide, live status."""

    name = "web"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from matches import hooks
        from matches.models import Match

        from .home import home_cache_clear

        # every stored result changes the home page's counts
        for kind in Match.Kind.values:
            hooks.register(kind, home_cache_clear)
