from django.apps import AppConfig


class VersionTestsConfig(AppConfig):
    """Version tests (SPRT on duplicate deal pairs, like ``arena sprt``) played on the workers, unrated."""

    name = "versiontests"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "version tests"

    def ready(self) -> None:
        # A test's pairs are unrated head-to-head matches of kind "challenge" (the ladder's hook
        # only sees kind "ladder"); this hook folds each finished pair into its test, inside the
        # transaction that stores the match's result. It ignores challenges of the API app.
        from matches import hooks

        from . import services

        hooks.register("challenge", services.version_test_match_finish)
