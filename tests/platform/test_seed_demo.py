"""seed_demo: the reference bots become real, validated versions; running it twice adds nothing."""

from __future__ import annotations

import io

import pytest
from django.conf import settings
from django.core.management import call_command

from bots.models import Bot, BotVersion
from matches.models import Match
from sandbox.package import BotPackage
from web.demo import DEMO_BOTS, DEMO_MATCHES, reference_bot_upload

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("process_sandbox", "eager_tasks")]


@pytest.mark.parametrize("module", ["random_bot", "first", "greedy", "expert"])
def test_each_reference_bot_is_a_valid_upload_with_stable_bytes(module):
    filename, data = reference_bot_upload(module)
    package = BotPackage.from_bytes(filename, data)
    assert package.sha256 == BotPackage.from_bytes(*reference_bot_upload(module)).sha256


@pytest.mark.slow  # validates and plays the demo bots: tens of seconds, left out of make check
def test_seed_demo_uploads_validates_plays_and_is_idempotent():
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    bots = sum(len(b) for b in DEMO_BOTS.values())
    assert Bot.objects.count() == bots
    assert BotVersion.objects.filter(status=BotVersion.Status.ACTIVE).count() == bots
    challenges = Match.objects.filter(kind=Match.Kind.CHALLENGE)
    assert challenges.count() == len(DEMO_MATCHES)
    assert set(challenges.values_list("status", flat=True)) == {Match.Status.DONE}
    # one validation match per configuration of each bot's version: 2 and 4 seats, and the rules of
    # the demo ladder it entered afterwards (validation.services.validation_require), every one passed
    validations = Match.objects.filter(kind=Match.Kind.VALIDATION, status=Match.Status.DONE).count()
    runs = [run for version in BotVersion.objects.all() for run in version.validation_runs]
    assert {run["status"] for run in runs} == {"passed"}
    assert validations == len(runs) > bots * len(settings.VALIDATION_SEATS)

    before = (Bot.objects.count(), BotVersion.objects.count(), Match.objects.count())
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    assert (Bot.objects.count(), BotVersion.objects.count(), Match.objects.count()) == before
    assert "created 0 users, 0 bots, 0 versions, 0 matches" in out.getvalue()
