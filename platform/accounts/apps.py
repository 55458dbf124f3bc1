from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Sign up, log in and out, password change, and each user's profile page."""

    name = "accounts"
