from django.apps import AppConfig


class CoreConfig(AppConfig):
    """Site-wide pieces: the base layout, the home page, worker heartbeats."""

    name = "core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from matches import hooks
        from matches.models import Match

        from .selectors import home_cache_clear

        # every stored result changes the home page's counts
        for kind in Match.Kind.values:
            hooks.register(kind, home_cache_clear)
