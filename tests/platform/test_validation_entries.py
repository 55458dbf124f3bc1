"""Issue 20 point 5, for events entered after a version was validated: the event's configuration
is validated on entry, the entry waits for it (ladder matchmaking, a tournament's start), and a
failure refuses the entry, shown in the version's report; and no configuration is dropped by the
cap on validation matches at once (VALIDATION_MAX_CONFIGURATIONS)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from platform_helpers import good_bot
from testsupport import make_user

from bots import services as bot_services
from bots.models import BotVersion
from engine.rules import Rules
from ladders import services as ladder_services
from ladders.models import Ladder, LadderEntry
from matches.models import Match
from matches.tasks import match_play
from tournaments_app import services as tournament_services
from tournaments_app.models import Entry
from validation import configurations as validation

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]

NO_STACKING = b"""def agent(observation, configuration):
    print("stacking is", configuration["rules"]["stacking"])
    if configuration["rules"]["stacking"] != "off":
        raise RuntimeError("stacking confuses me")
    return observation["legal_actions"][0]
"""

STACK_RULES = Rules.parse(["players=3", "rounds=1", "stacking=stack", "wd4=free"]).to_dict()
STACK_LABEL = "3 seats, wd4=free, stacking=stack (ladder Stack house)"


def unplanned_bot(name: str):
    """Another owner's bot made active without the platform's validation (as seeding does): never held."""
    bot = bot_services.bot_create(owner=make_user(f"{name}-owner"), name=name)
    version = bot_services.bot_version_create(bot=bot, filename=f"{name}.py", data=good_bot(name), validate=False)
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
    return bot


def validated(bot, run_on_commit, data=None, name="v.py") -> BotVersion:
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename=name, data=data or good_bot(name))
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    return version


def stack_house(**fields) -> Ladder:
    return Ladder.objects.create(name="Stack house", slug="stack-house", seats=3, rules=STACK_RULES, **fields)


def seated_bots(matches) -> set[int]:
    return {seat.bot_version.bot_id for match in matches for seat in match.seats.select_related("bot_version")}


def test_entering_a_ladder_queues_its_configuration_and_matchmaking_waits_for_it_to_pass(bot, validated_version):
    house = stack_house()
    others = [unplanned_bot(name) for name in ("b1", "b2", "b3")]
    for other in others:
        ladder_services.ladder_enter(house, other)
    entry = ladder_services.ladder_enter(house, bot)

    version = BotVersion.objects.get(pk=validated_version.pk)
    assert version.status == BotVersion.Status.ACTIVE  # what it passed still stands: it plays elsewhere
    added = version.validation_runs[-1]
    assert (added["label"], added["status"], added["added"]) == (STACK_LABEL, "pending", True)
    queued = Match.objects.get(pk=added["match"])
    assert queued.kind == "validation" and queued.duplicate and Rules.from_dict(queued.rules).stacking == "stack"
    assert "being validated at " + STACK_LABEL in ladder_services.ladder_entry_validation(entry)

    # Meanwhile matchmaking seats the others, never the entry that waits.
    first = ladder_services.ladder_matchmake(house)
    assert len(first) == 1 and bot.pk not in seated_bots(first)

    match_play.apply(args=[queued.pk])
    version.refresh_from_db()
    assert version.validation_runs[-1]["status"] == "passed" and version.status == BotVersion.Status.ACTIVE
    assert f"[validation at {STACK_LABEL}]" in version.validation_log
    assert ladder_services.ladder_entry_validation(entry) == ""
    Match.objects.filter(pk__in=[m.pk for m in first]).update(status=Match.Status.CANCELLED)
    assert bot.pk in seated_bots(ladder_services.ladder_matchmake(house))

    # Entering another ladder of the same configuration queues nothing: it passed there.
    twin = Ladder.objects.create(name="Twin", slug="twin", seats=3, rules=STACK_RULES)
    ladder_services.ladder_enter(twin, bot)
    assert len(BotVersion.objects.get(pk=version.pk).validation_runs) == len(version.validation_runs)


@pytest.mark.slow
def test_a_version_that_fails_a_ladder_entered_later_keeps_playing_elsewhere_and_that_entry_is_suspended(
    bot, run_on_commit, client
):
    version = validated(bot, run_on_commit, NO_STACKING, "calm.py")  # 2 and 4 seats, no stacking: passes
    house = stack_house()
    with run_on_commit():  # the validation match plays at once (eager), the refusal after its commit
        ladder_services.ladder_enter(house, bot)

    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    run = version.validation_runs[-1]
    assert (run["label"], run["status"]) == (STACK_LABEL, "failed")
    assert run["reason"].startswith("exception in agent: ") and "stacking confuses me" in run["reason"]
    assert run["refused"] == ["ladder Stack house: entry suspended"]
    # the log of that game, under its configuration, beside those that passed
    failed_log = version.validation_log.split(f"[validation at {STACK_LABEL} (failed)]\n", 1)[1]
    assert "stacking is stack" in failed_log
    entry = LadderEntry.objects.get(ladder=house, bot=bot)
    assert entry.status == LadderEntry.Status.SUSPENDED and entry.suspended_version_id == version.pk
    assert STACK_LABEL in entry.suspended_reason and "stacking confuses me" in entry.suspended_reason

    # The author's report names the configuration, the reason and what was refused.
    client.force_login(bot.owner)
    page = client.get(version.get_absolute_url()).content.decode()
    assert "Validation report" in page and STACK_LABEL in page and "entry suspended" in page
    assert "stacking is stack" in page  # the log, shown to its owner

    # The same version cannot come back, nor enter another ladder of that configuration.
    with pytest.raises(ladder_services.LadderError, match="suspended"):
        ladder_services.ladder_enter(house, bot)
    twin = Ladder.objects.create(name="Twin", slug="twin", seats=3, rules=STACK_RULES)
    with pytest.raises(ladder_services.LadderError, match=re.escape("failed its validation at " + STACK_LABEL)):
        ladder_services.ladder_enter(twin, bot)
    assert not LadderEntry.objects.filter(ladder=twin).exists()


def test_a_tournament_start_is_refused_naming_the_validation_it_waits_for_then_succeeds(bot, validated_version):
    other = unplanned_bot("rival")
    cup = tournament_services.tournament_create(
        name="Stack cup", rules=["players=2", "rounds=1", "stacking=stack", "wd4=free"], format="round_robin", seed=3
    )
    tournament_services.entry_add(cup, other)
    tournament_services.entry_add(cup, bot)
    label = "2 seats, wd4=free, stacking=stack (tournament Stack cup)"
    run = BotVersion.objects.get(pk=validated_version.pk).validation_runs[-1]
    assert (run["label"], run["status"]) == (label, "pending")
    assert "is being validated at " + label in cup.events.filter(action="entry").first().message

    with pytest.raises(tournament_services.TournamentError) as refused:
        tournament_services.tournament_start(cup)
    assert f"{validated_version.label} at {label}: still being validated" in str(refused.value)
    cup.refresh_from_db()
    assert cup.status == cup.Status.DRAFT and not cup.round_set.exists()

    match_play.apply(args=[run["match"]])
    tournament_services.tournament_start(cup)
    cup.refresh_from_db()
    assert cup.status == cup.Status.RUNNING


def test_a_tournament_whose_rules_change_after_the_entry_queues_the_new_configuration_at_the_start(
    bot, fully_validated_version
):
    cup = tournament_services.tournament_create(name="Cup", rules=["players=2", "rounds=1"], format="round_robin")
    tournament_services.entry_add(cup, unplanned_bot("rival"))
    tournament_services.entry_add(cup, bot)  # 2 seats, the base rules: passed already, nothing queued
    assert len(BotVersion.objects.get(pk=fully_validated_version.pk).validation_runs) == 2
    tournament_services.tournament_update(cup, name="Cup", rules=["players=2", "rounds=1", "stacking=stack", "wd4=free"],
                                          format="round_robin")
    with pytest.raises(tournament_services.TournamentError, match=re.escape(
        f"{fully_validated_version.label} at 2 seats, wd4=free, stacking=stack (tournament Cup): still being validated"
    )):
        tournament_services.tournament_start(cup)
    # the start queued it first, and its refusal did not roll that back
    run = BotVersion.objects.get(pk=fully_validated_version.pk).validation_runs[-1]
    assert run["label"] == "2 seats, wd4=free, stacking=stack (tournament Cup)" and run["status"] == "pending"


def test_a_failed_tournament_configuration_withdraws_the_entry_before_the_start_with_the_reason(
    bot, run_on_commit
):
    version = validated(bot, run_on_commit, NO_STACKING, "calm.py")
    cup = tournament_services.tournament_create(
        name="Stack cup", rules=["players=2", "rounds=1", "stacking=stack", "wd4=free"], format="round_robin"
    )
    with run_on_commit():
        tournament_services.entry_add(cup, bot)
    assert not Entry.objects.filter(tournament=cup, bot=bot).exists()
    withdrawn = cup.events.filter(message__contains="withdrawn").get().message
    assert "version 1 failed its validation at 2 seats, wd4=free, stacking=stack (tournament Stack cup)" in withdrawn
    assert "stacking confuses me" in withdrawn
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    assert version.validation_runs[-1]["refused"] == ["tournament Stack cup: entry withdrawn before the start"]
    # entering again with the same version is refused at once, naming the configuration
    with pytest.raises(tournament_services.TournamentError, match="failed its validation at 2 seats, wd4=free, stacking=stack"):
        tournament_services.entry_add(cup, bot)


@pytest.mark.slow
def test_the_organizers_bulk_add_queues_each_bots_validation_and_lists_every_refusal(bot, run_on_commit, fully_validated_version):
    cup = tournament_services.tournament_create(
        name="Bulk cup", rules=["players=3", "rounds=1"], format="round_robin"
    )
    rival = unplanned_bot("rival")
    added, skipped = tournament_services.entries_add_bulk(cup, names=f"{bot}\n{rival}")
    assert [e.bot_id for e in added] == [bot.pk, rival.pk] and skipped == []
    labels = [(r["label"], r["status"]) for r in BotVersion.objects.get(pk=fully_validated_version.pk).validation_runs[2:]]
    # tables of 2 to 4: 2 and 4 seats under these rules are the base configurations, passed already
    assert labels == [("3 seats (tournament Bulk cup)", "pending")]

    calm = bot_services.bot_create(owner=make_user("calm-owner"), name="calm")
    validated(calm, run_on_commit, NO_STACKING, "calm.py")
    stack = tournament_services.tournament_create(
        name="Stack cup", rules=["players=2", "rounds=1", "stacking=stack", "wd4=free"], format="round_robin"
    )
    with run_on_commit():
        tournament_services.entry_add(stack, calm)  # fails there: withdrawn
    with pytest.raises(tournament_services.TournamentError, match="calm-owner/calm cannot enter Stack cup: .*nothing was added"):
        tournament_services.entries_add_bulk(stack, names=f"{rival}\n{calm}")
    assert not stack.entries.exists()


@pytest.mark.slow
def test_no_configuration_is_dropped_the_cap_only_limits_how_many_play_at_once(bot, validated_version, settings):
    settings.VALIDATION_MAX_CONFIGURATIONS = 1
    for seats, slug in ((3, "three"), (5, "five")):
        rules = Rules.parse([f"players={seats}", "rounds=1"]).to_dict()
        ladder_services.ladder_enter(Ladder.objects.create(name=slug, slug=slug, seats=seats, rules=rules), bot)
    assert len(validation.validation_configurations(bot)) == 4  # 2, 4 seats and both ladders: none left out

    version = bot_services.bot_version_create(bot=bot, filename="next.py", data=good_bot("next"))
    runs = BotVersion.objects.get(pk=version.pk).validation_runs
    assert [r["status"] for r in runs] == ["pending", "waiting", "waiting", "waiting"]
    assert [r["match"] is None for r in runs] == [False, True, True, True]
    assert Match.objects.filter(kind="validation", seats__bot_version=version).count() == 1
    for _ in range(4):
        version.refresh_from_db()
        pending = [r for r in version.validation_runs if r["status"] == "pending"]
        assert len(pending) == 1, version.validation_runs  # one at a time, the next queued as one passes
        match_play.apply(args=[pending[0]["match"]])
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    assert [r["status"] for r in version.validation_runs] == ["passed"] * 4
    assert sorted(r["label"] for r in version.validation_runs) == [
        "2 seats", "3 seats (ladder three)", "4 seats", "5 seats (ladder five)"]


CRASH_AT_ONCE = b"""def agent(observation, configuration):
    raise RuntimeError("nothing works")
"""


def test_a_rejection_marks_the_runs_still_waiting_as_not_played(bot, settings, run_on_commit):
    settings.VALIDATION_MAX_CONFIGURATIONS = 1
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASH_AT_ONCE)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert [(r["status"], r["match"] is None) for r in version.validation_runs] == [("failed", False), ("skipped", True)]
    assert version.validation_runs[1]["reason"] == "not played: the version failed at 2 seats"


def test_a_ladder_whose_rules_changed_has_matchmaking_queue_the_new_configuration_and_wait(bot, fully_validated_version):
    rules = Rules.parse(["players=2", "rounds=1"]).to_dict()
    ladder = Ladder.objects.create(name="Plain", slug="plain", seats=2, rules=rules)
    ladder_services.ladder_enter(ladder, unplanned_bot("rival"))
    ladder_services.ladder_enter(ladder, bot)  # the base configuration: passed, nothing queued
    assert len(BotVersion.objects.get(pk=fully_validated_version.pk).validation_runs) == 2
    Ladder.objects.filter(pk=ladder.pk).update(rules={**rules, "stacking": "stack", "wd4": "free"})
    ladder.refresh_from_db()
    assert ladder_services.ladder_matchmake(ladder) == []  # the rival has no one else to play
    run = BotVersion.objects.get(pk=fully_validated_version.pk).validation_runs[-1]
    assert (run["label"], run["status"]) == ("2 seats, wd4=free, stacking=stack (ladder Plain)", "pending")
    match_play.apply(args=[run["match"]])
    assert seated_bots(ladder_services.ladder_matchmake(ladder)) == {bot.pk, LadderEntry.objects.exclude(bot=bot).get().bot_id}


@pytest.mark.slow
def test_a_ladder_whose_rules_become_a_configuration_the_version_failed_suspends_the_entry_with_the_reason(
    bot, run_on_commit, client
):
    version = validated(bot, run_on_commit, NO_STACKING, "calm.py")
    with run_on_commit():  # fails the stacking configuration: that ladder's entry is suspended
        ladder_services.ladder_enter(stack_house(), bot)
    plain = Ladder.objects.create(name="Plain", slug="plain", seats=3, rules=Rules.parse(["players=3", "rounds=1"]).to_dict())
    for name in ("b1", "b2", "b3"):
        ladder_services.ladder_enter(plain, unplanned_bot(name))
    with run_on_commit():  # 3 seats, no stacking: passes
        entry = ladder_services.ladder_enter(plain, bot)
    assert ladder_services.ladder_entry_validation(entry) == ""
    Ladder.objects.filter(pk=plain.pk).update(rules=STACK_RULES)  # the organizer changes the rules
    plain.refresh_from_db()
    entry.refresh_from_db()

    waiting = ladder_services.ladder_entry_validation(entry)
    assert "failed its validation" in waiting and "stacking confuses me" in waiting and "being validated" not in waiting
    runs_before = len(BotVersion.objects.get(pk=version.pk).validation_runs)
    assert bot.pk not in seated_bots(ladder_services.ladder_matchmake(plain))
    entry.refresh_from_db()
    assert entry.status == LadderEntry.Status.SUSPENDED and entry.suspended_version_id == version.pk
    assert STACK_LABEL in entry.suspended_reason and "stacking confuses me" in entry.suspended_reason
    version.refresh_from_db()
    assert len(version.validation_runs) == runs_before  # nothing queued: the same bytes would fail again
    assert not [r for r in version.validation_runs if r["status"] == "pending"]
    failed = next(r for r in version.validation_runs if r["status"] == "failed")
    assert failed["refused"] == ["ladder Stack house: entry suspended", "ladder Plain: entry suspended"]

    # The version page's summary says so, not "Passed: every configuration".
    client.force_login(bot.owner)
    page = client.get(version.get_absolute_url()).content.decode()
    panel = page.split("<h2>Validation</h2>", 1)[1].split("</div>", 1)[0]
    assert "Passed: every configuration" not in panel
    assert "a configuration added for an event entered since failed" in panel
    assert STACK_LABEL in panel and "ladder Plain: entry suspended" in panel


def test_a_platform_failure_of_an_added_run_keeps_the_tournament_entry_held_and_blames_no_one(
    bot, validated_version, run_on_commit
):
    from matches.services import match_fail

    cup = tournament_services.tournament_create(
        name="Stack cup", rules=["players=2", "rounds=1", "stacking=stack", "wd4=free"], format="round_robin"
    )
    tournament_services.entry_add(cup, unplanned_bot("rival"))
    tournament_services.entry_add(cup, bot)
    run = BotVersion.objects.get(pk=validated_version.pk).validation_runs[-1]
    with run_on_commit():
        assert match_fail(run["match"], None, "the sandbox could not start")

    failed = BotVersion.objects.get(pk=validated_version.pk).validation_runs[-1]
    assert (failed["status"], failed.get("platform")) == ("failed", True)
    assert failed["refused"] == ["tournament Stack cup: entry kept, validated again at the start"]
    assert Entry.objects.filter(tournament=cup, bot=bot, status=Entry.Status.ACTIVE).exists()
    assert not cup.events.filter(message__contains="withdrawn").exists()
    assert not cup.events.filter(message__contains="failed its validation").exists()

    # The start plays that configuration again and waits for it, then starts.
    with pytest.raises(tournament_services.TournamentError, match="still being validated"):
        tournament_services.tournament_start(cup)
    again = BotVersion.objects.get(pk=validated_version.pk).validation_runs[-1]
    assert again["status"] == "pending" and again["match"] != run["match"]
    match_play.apply(args=[again["match"]])
    tournament_services.tournament_start(cup)
    cup.refresh_from_db()
    assert cup.status == cup.Status.RUNNING


def test_the_owner_sees_on_the_bot_s_ladder_page_that_its_entry_waits_for_validation(client, bot, validated_version, bob):
    house = stack_house()
    ladder_services.ladder_enter(house, bot)
    url = reverse("ladders:entry", args=[house.slug, bot.pk])
    client.force_login(bot.owner)
    page = client.get(url).content.decode()
    assert "Not matched yet:" in page and "being validated at " + STACK_LABEL in page
    client.force_login(bob)  # another user learns nothing of the owner's validation
    assert "Not matched yet" not in client.get(url).content.decode()
    version = BotVersion.objects.get(pk=validated_version.pk)
    match_play.apply(args=[version.validation_runs[-1]["match"]])
    client.force_login(bot.owner)
    assert "Not matched yet" not in client.get(url).content.decode()  # passed: matchmaking seats it
