from django.apps import AppConfig


class VersionTestsConfig(AppConfig):
    """Version tests (SPRT on duplicate deal pairs, like ``arena sprt``) played on the workers, unrated."""

    name = "versiontests"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "version tests"
    # A test's pairs are unrated head-to-head matches of kind "challenge"; settings.MATCH_RESULT_HOOKS
    # names services.version_test_match_finish for that kind, which folds each finished pair into its
    # test inside the transaction that stores the result, and ignores the API's challenges.
