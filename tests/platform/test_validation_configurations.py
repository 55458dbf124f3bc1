"""Issue 20 point 5: validation plays a new version at 2 and 4 seats and under the rules of the
events its bot is entered in, with duplicate deals; a failure names its configuration."""

from __future__ import annotations

import pytest
from platform_helpers import good_bot

from bots import services as bot_services
from bots.models import BotVersion
from engine.rules import Rules
from ladders import services as ladder_services
from ladders.models import Ladder
from matches.models import Match
from validation import configurations as validation
from validation import services as validation_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]

TWO_SEATS_ONLY = b"""def agent(observation, configuration):
    players = configuration["rules"]["players"]
    print("playing at", players, "seats")
    if players > 2:
        raise RuntimeError("this bot only knows two players")
    return observation["legal_actions"][0]
"""

NO_STACKING = b"""def agent(observation, configuration):
    if configuration["rules"]["stacking"] != "off":
        raise RuntimeError("stacking confuses me")
    return observation["legal_actions"][0]
"""


def test_a_bot_that_breaks_at_four_seats_is_rejected_naming_the_configuration_with_that_log(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="duo.py", data=TWO_SEATS_ONLY)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason.startswith("exception in agent: ")
    assert version.rejection_reason.endswith("(in the validation at 4 seats)")
    assert "only knows two players" in version.rejection_reason
    # The log shown is the failing configuration's game, not the 2-seat one that passed.
    assert version.validation_log.startswith("[validation at 4 seats]")
    assert "playing at 4 seats" in version.validation_log and "playing at 2 seats" not in version.validation_log
    assert [run["status"] for run in version.validation_runs] == ["passed", "failed"]


@pytest.mark.slow
def test_a_new_version_is_validated_under_the_house_rules_of_the_ladder_its_bot_is_entered_in(
    bot, validated_version, run_on_commit
):
    rules = Rules.parse(["players=3", "rounds=1", "stacking=stack", "wd4=free"]).to_dict()
    house = Ladder.objects.create(name="Stack house", slug="stack-house", seats=3, rules=rules)
    ladder_services.ladder_enter(house, bot)
    labels = [configuration.label for configuration in validation.validation_configurations(bot)]
    assert labels == ["2 seats", "4 seats", "3 seats, wd4=free, stacking=stack (ladder Stack house)"]

    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="calm.py", data=NO_STACKING)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason.endswith("(in the validation at 3 seats, wd4=free, stacking=stack (ladder Stack house))")
    failed = Match.objects.get(pk=version.validation_runs[-1]["match"])
    assert Rules.from_dict(failed.rules).stacking == "stack" and failed.duplicate and failed.seats.count() == 3

    # A version that plays every configuration becomes active, its runs all passed.
    with run_on_commit():
        fixed = bot_services.bot_version_create(bot=bot, filename="ok.py", data=good_bot("v3"))
    fixed.refresh_from_db()
    assert fixed.status == BotVersion.Status.ACTIVE, fixed.rejection_reason
    assert [run["status"] for run in fixed.validation_runs] == ["passed"] * 3


def test_repeated_configurations_are_played_once(bot, settings):
    settings.VALIDATION_SEATS = [2, 4, 2]
    assert [c.label for c in validation.validation_configurations(bot)] == ["2 seats", "4 seats"]


def test_a_platform_failure_in_one_configuration_rejects_revalidation_replans_and_old_results_are_ignored(bot):
    from matches import services as match_services
    from matches.tasks import match_play
    from validation.selectors import can_revalidate

    version = bot_services.bot_version_create(bot=bot, filename="good.py", data=good_bot())  # matches queued
    two, four = [run["match"] for run in BotVersion.objects.get(pk=version.pk).validation_runs]
    token = match_services.match_start(two, worker="test-worker")  # being played when four fails
    assert token
    assert match_services.match_fail(four, None, "worker lost")  # the platform, no bot blamed
    # the rejection cancels only what has not started: the running 2-seat match goes on
    assert Match.objects.get(pk=two).status == Match.Status.RUNNING
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason == (
        "the validation match could not be played: worker lost (in the validation at 4 seats)"
    )
    assert can_revalidate(version)
    validation_services.bot_version_revalidate(version)
    version.refresh_from_db()
    runs = version.validation_runs
    assert version.status == BotVersion.Status.VALIDATING and {run["match"] for run in runs}.isdisjoint({two, four})
    # The old plan's 2-seat match ends late (played again from the queue here): it decides nothing now.
    assert match_services.match_release(two, token)
    match_play.apply(args=[two])
    assert Match.objects.get(pk=two).status == Match.Status.DONE
    version.refresh_from_db()
    assert version.status == BotVersion.Status.VALIDATING and version.validation_runs == runs
    for run in runs:
        match_play.apply(args=[run["match"]])
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    assert [run["status"] for run in version.validation_runs] == ["passed", "passed"]


CRASH_AT_ONCE = b"""def agent(observation, configuration):
    raise RuntimeError("nothing works")
"""


def test_a_rejection_cancels_the_configurations_not_yet_played(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASH_AT_ONCE)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason.endswith("(in the validation at 2 seats)")
    statuses = [Match.objects.get(pk=run["match"]).status for run in version.validation_runs]
    assert statuses == [Match.Status.DONE, Match.Status.CANCELLED]


def test_a_tournament_entry_adds_each_of_its_table_sizes(bot, validated_version):
    from tournaments_app import services as tournament_services

    cup = tournament_services.tournament_create(name="Four cup", rules=["players=4", "rounds=1"], format="round_robin")
    tournament_services.entry_add(cup, bot)
    # 4 seats under the same rules is the base configuration already: played once
    assert [c.label for c in validation.validation_configurations(bot)] == [
        "2 seats", "4 seats", "3 seats (tournament Four cup)", "5 seats (tournament Four cup)"
    ]


def test_a_started_tournament_adds_nothing_a_new_version_never_plays_there(bot, validated_version):
    """A running or paused tournament plays the versions frozen at its start: a new version is not
    validated (nor rejected) under its rules."""
    from tournaments_app import services as tournament_services
    from tournaments_app.models import Tournament

    cup = tournament_services.tournament_create(name="Stack cup", rules=["players=3", "wd4=free", "stacking=stack"], format="swiss")
    tournament_services.entry_add(cup, bot)
    assert any("Stack cup" in c.label for c in validation.validation_configurations(bot))
    for status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED):
        Tournament.objects.filter(pk=cup.pk).update(status=status)
        assert [c.label for c in validation.validation_configurations(bot)] == ["2 seats", "4 seats"], status


def test_a_stored_rule_sets_key_is_memoised_by_value_and_type_and_still_refuses_what_it_refused():
    from engine.rules import Rules, RulesError
    from validation.configurations import rules_key

    written = {"players": 2, "seven_zero": True}
    assert rules_key(written) == rules_key(Rules(players=2, seven_zero=True)) == rules_key(dict(written))
    assert rules_key({"players": 2}) != rules_key(written)
    # 1 == True and hash alike: the memo must not let the int through once the bool is known
    with pytest.raises(RulesError):
        rules_key({"players": 2, "seven_zero": 1})
    with pytest.raises(RulesError):  # a value that cannot be hashed is parsed, and refused, as before
        rules_key({"players": [2]})
