"""Fixtures of the platform tests (beside tests/conftest.py's, which pytest loads as well)."""

from __future__ import annotations

import pytest
from django.test import override_settings
from platform_helpers import good_bot

from bots import services as bot_services


@pytest.fixture
def bot(alice):
    return bot_services.bot_create(owner=alice, name="alpha", description="first bot")


def _validate(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="alpha.py", data=good_bot("v1"))
    version.refresh_from_db()
    assert version.status == "active", version.rejection_reason
    return version


@pytest.fixture
def validated_version(bot, run_on_commit):
    """An active version of `bot`, validated through the real task path, at 2 seats only.

    Validation at every seat count of ``VALIDATION_SEATS`` (2 and 4) plays four fresh 4-seat
    games more, about 0.4 s for each of the ~60 tests that just need a version that may play;
    tests of which configurations a version passed take ``fully_validated_version``.
    """
    with override_settings(VALIDATION_SEATS=[2]):
        return _validate(bot, run_on_commit)


@pytest.fixture
def fully_validated_version(bot, run_on_commit):
    """An active version of `bot`, validated at every seat count of ``VALIDATION_SEATS``."""
    return _validate(bot, run_on_commit)


@pytest.fixture
def process_sandbox(settings):
    """Play on the process sandbox (the embedded default), not Docker: keeps these tests fast.

    Modules use it with ``pytestmark = pytest.mark.usefixtures("process_sandbox")``;
    the Docker path has its own tests (test_worker.py).
    """
    settings.SANDBOX_BACKEND = "process"
    settings.SANDBOX_ALLOW_PROCESS = True
