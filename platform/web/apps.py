from django.apps import AppConfig


class WebConfig(AppConfig):
    """The site's pages beyond the data apps: the home page, the bot pages, replay viewer, bot author
    guide, live status. Every stored result clears the home page's counts and its versions' numbers:
    settings.MATCH_RESULT_HOOKS names web.home.home_cache_clear and web.bot_stats.version_stats_clear
    for every match kind."""

    name = "web"
    default_auto_field = "django.db.models.BigAutoField"
