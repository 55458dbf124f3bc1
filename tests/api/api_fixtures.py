"""Fixtures of the API tests, loaded by each module with ``pytest_plugins``."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings):
    """Each test starts with empty rate-limit counters (they live in the local-memory cache)."""
    from django.core.cache import cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    # The users' passwords are not under test; a fast hasher keeps the suite quick.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield
    cache.clear()


