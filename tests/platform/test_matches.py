"""The worker path on the embedded default: validation, playing and storing, idempotency, retries."""

from __future__ import annotations

import gzip
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from platform_helpers import CRASHING_BOT, good_bot
from testsupport import SLEEPY_COUNTER_BOT

from bots import services as bot_services
from bots.models import Bot, BotVersion
from engine import glossary
from engine.faults import InfrastructureError
from engine.replay import REPLAY_VERSION
from engine.rules import Rules
from matches import hooks, sandboxing, selectors, services, tasks
from matches.models import Match
from validation import services as validation_services

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]


def challenge(version, *, deals: int = 1, enqueue: bool = False) -> Match:
    return services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=[version, "first"],
        seed=11, deals=deals, enqueue=enqueue,
    )


#: the matches ``count_hook`` was called with
HOOK_CALLS: list[int] = []


def count_hook(match):
    HOOK_CALLS.append(match.pk)


def broken_hook(match):
    if match.status == Match.Status.DONE:
        raise RuntimeError("ladder is closed")


def with_hook(settings, kind: str, hook) -> None:
    """Add ``hook`` (a function of this module) to the end of ``kind``'s row of the result table."""
    table = dict(settings.MATCH_RESULT_HOOKS)
    table[kind] = [*table.get(kind, []), f"{hook.__module__}.{hook.__name__}"]
    settings.MATCH_RESULT_HOOKS = table


@pytest.fixture
def counted_hook(settings):
    """A hook on challenge matches that counts the calls, as a ladder's rating update would."""
    HOOK_CALLS.clear()
    with_hook(settings, "challenge", count_hook)
    yield HOOK_CALLS
    HOOK_CALLS.clear()


def test_the_result_table_drops_the_pages_caches_then_calls_the_owning_apps_function_for_every_kind():
    owners = {
        "validation": "validation.services.bot_version_validation_finish",
        "ladder": "ladders.services.ladder_match_finish",
        "tournament": "tournaments_app.services.tournament_match_finished",
        "challenge": "versiontests.services.version_test_match_finish",
    }
    for kind in Match.Kind.values:
        called = [f"{hook.__module__}.{hook.__name__}" for hook in hooks.hooks_for(kind)]
        assert called == [
            "web.home.home_cache_clear", "web.bot_stats.version_stats_clear", *([owners[kind]] if kind in owners else [])
        ], kind


def test_the_keys_a_transaction_drops_from_the_cache_go_in_one_delete_at_its_commit_and_none_on_rollback(
    django_capture_on_commit_callbacks, monkeypatch
):
    from types import SimpleNamespace

    from core import services as core_services
    from core.services import cache_delete_on_commit
    from django.db import transaction

    deleted: list[list[str]] = []
    monkeypatch.setattr(core_services, "cache", SimpleNamespace(delete_many=deleted.append))
    with django_capture_on_commit_callbacks(execute=True) as committed:
        cache_delete_on_commit(["home:counts", "a"])
        cache_delete_on_commit(["a", "b"])
        assert deleted == []  # not before the commit
    assert len(committed) == 1 and deleted == [["home:counts", "a", "b"]]  # once each, in the order asked
    deleted.clear()
    with django_capture_on_commit_callbacks(execute=True) as committed:
        with pytest.raises(RuntimeError), transaction.atomic():
            cache_delete_on_commit(["c"])
            raise RuntimeError("a hook refused the result")
    assert committed == [] and deleted == []  # rolled back: nothing to drop


def test_a_match_runs_the_hooks_of_its_own_kind_in_the_tables_order(settings, validated_version):
    match = challenge(validated_version)
    settings.MATCH_RESULT_HOOKS = {"challenge": [f"{__name__}.count_hook", f"{__name__}.count_hook"], "ladder": [
        f"{__name__}.broken_hook"]}
    HOOK_CALLS.clear()
    hooks.run(match)
    assert HOOK_CALLS == [match.pk, match.pk]
    HOOK_CALLS.clear()


def test_validation_activates_a_good_bot_and_keeps_its_log(fully_validated_version):
    assert fully_validated_version.status == BotVersion.Status.ACTIVE
    assert fully_validated_version.rejection_reason == ""
    assert "seat 0 plays" in fully_validated_version.validation_log
    assert fully_validated_version.validated_at is not None
    # Issue 20 point 5: one match per configuration (VALIDATION_SEATS: 2 and 4), duplicate deals.
    matches = Match.objects.filter(kind="validation", seats__bot_version=fully_validated_version).order_by("pk")
    assert [m.status for m in matches] == [Match.Status.DONE] * 2
    assert [[s.reference_bot for s in m.seats.order_by("seat")] for m in matches] == [
        ["", "random"], ["", "random", "random", "random"]
    ]
    assert all(m.duplicate and Rules.from_dict(m.rules).rounds == 1 for m in matches)
    assert [(run["label"], run["match"], run["status"]) for run in fully_validated_version.validation_runs] == [
        ("2 seats", matches[0].pk, "passed"), ("4 seats", matches[1].pk, "passed")
    ]
    assert "[validation at 4 seats]" in fully_validated_version.validation_log


def test_validation_rejects_a_crashing_bot_with_the_reason_and_its_log(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASHING_BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason.startswith("exception in agent: ")
    assert "ZeroDivisionError" in version.rejection_reason
    assert "decision 2" in version.validation_log
    # Printed in the instant of the crash, unflushed: the log still has it.
    assert "about to divide by zero" in version.validation_log


def test_a_rejected_version_never_plays_and_cannot_be_seated(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASHING_BOT)
    version.refresh_from_db()
    with pytest.raises(services.MatchError, match="rejected"):
        challenge(version)
    with pytest.raises(bot_services.BotError, match="only an active version can play"):
        bot_services.bot_pin_version(bot, version)


def test_the_newest_active_version_plays_unless_the_owner_pins_one(bot, validated_version, run_on_commit):
    from bots.selectors import bot_playing_version

    with run_on_commit():
        newer = bot_services.bot_version_create(bot=bot, filename="alpha.py", data=good_bot("v2"))
    assert bot_playing_version(bot) == newer
    bot_services.bot_pin_version(bot, validated_version)
    assert bot_playing_version(bot) == validated_version
    bot_services.bot_pin_version(bot, None)
    assert bot_playing_version(bot) == newer


def test_a_played_match_stores_results_replay_logs_and_timings(validated_version, counted_hook):
    match = challenge(validated_version, deals=2)
    assert tasks.match_play.apply(args=[match.pk]).get() is True
    match.refresh_from_db()
    assert match.status == Match.Status.DONE
    assert match.attempts == 1 and match.attempt_token == ""
    assert match.started_at <= match.finished_at
    assert match.games_played == 2 and match.rounds_played >= 2
    seats = list(match.seats.order_by("seat"))
    assert sorted(s.rank for s in seats) in ([1, 2], [1, 1])
    assert all(s.score is not None and s.wins is not None for s in seats)
    assert "seat" in seats[0].log
    replay = json.loads(gzip.decompress(bytes(match.replay_gz)))
    assert replay["version"] == REPLAY_VERSION
    timings = match.timings["seats"]
    assert len(timings) == 2 and timings[0]["decisions"] > 0
    assert counted_hook == [match.pk]


def test_the_same_task_run_twice_plays_and_counts_the_match_once(validated_version, counted_hook):
    match = challenge(validated_version)
    assert tasks.match_play.apply(args=[match.pk]).get() is True
    finished = Match.objects.get(pk=match.pk).finished_at
    assert tasks.match_play.apply(args=[match.pk]).get() is False
    match.refresh_from_db()
    assert match.attempts == 1
    assert match.finished_at == finished
    assert counted_hook == [match.pk]


def test_a_result_from_a_superseded_attempt_is_discarded(validated_version, counted_hook):
    match = challenge(validated_version)
    first_token = services.match_start(match.pk)
    outcome = sandboxing.play_match_row(Match.objects.get(pk=match.pk))
    # The first worker looks dead: past its deadline another attempt starts.
    later = timezone.now() + timedelta(seconds=10**6)
    second_token = services.match_start(match.pk, now=later)
    assert second_token and second_token != first_token
    assert services.match_record_result(match.pk, first_token, outcome) is False
    assert services.match_record_result(match.pk, second_token, outcome) is True
    assert services.match_record_result(match.pk, second_token, outcome) is False
    assert counted_hook == [match.pk]
    assert Match.objects.get(pk=match.pk).attempts == 2


def test_a_running_match_within_its_deadline_is_not_started_again(validated_version):
    match = challenge(validated_version)
    assert services.match_start(match.pk) is not None
    assert services.match_start(match.pk) is None
    assert Match.objects.get(pk=match.pk).attempts == 1


def test_the_sweeper_requeues_a_match_whose_worker_died(validated_version, run_on_commit, counted_hook):
    match = challenge(validated_version)
    services.match_start(match.pk)  # a worker took it, then died
    assert services.match_sweep_stuck() == []
    later = timezone.now() + timedelta(seconds=10**6)
    with run_on_commit():
        assert services.match_sweep_stuck(now=later) == [match.pk]
    match.refresh_from_db()
    assert match.status == Match.Status.DONE and match.attempts == 2
    assert counted_hook == [match.pk]


def test_the_sweeper_fails_a_match_that_used_up_its_attempts(validated_version, settings):
    settings.MATCH_MAX_ATTEMPTS = 2
    match = challenge(validated_version)
    now = timezone.now()
    for _ in range(2):
        now += timedelta(seconds=10**6)
        assert services.match_start(match.pk, now=now) is not None
    assert services.match_sweep_stuck(now=now + timedelta(seconds=10**6)) == []
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert "2 attempts" in match.error


def test_infrastructure_errors_are_retried_and_the_match_is_played_once(
    validated_version, monkeypatch, run_on_commit, counted_hook
):
    real_play = sandboxing.play_match_row
    calls = []

    def flaky_play(match):
        calls.append(match.pk)
        if len(calls) == 1:
            raise InfrastructureError("Docker engine went away")
        return real_play(match)

    monkeypatch.setattr(sandboxing, "play_match_row", flaky_play)
    match = challenge(validated_version)
    with run_on_commit():
        assert tasks.match_play.apply(args=[match.pk]).get() is False
    match.refresh_from_db()
    assert len(calls) == 2
    assert match.status == Match.Status.DONE and match.attempts == 2
    assert match.error == ""
    assert counted_hook == [match.pk]


def test_retries_back_off_and_are_capped():
    delays = [services.retry_backoff(n) for n in range(1, 10)]
    assert 4 <= delays[0] <= 6 and 8 <= delays[1] <= 12
    assert max(delays) <= 300 * 1.2


def test_infrastructure_errors_that_never_stop_fail_the_match_after_its_attempts(
    validated_version, monkeypatch, run_on_commit, settings, counted_hook
):
    settings.MATCH_MAX_ATTEMPTS = 3

    def broken_play(match):
        raise InfrastructureError("Docker engine is not running")

    monkeypatch.setattr(sandboxing, "play_match_row", broken_play)
    match = challenge(validated_version)
    with run_on_commit():
        tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert "gave up after 3 attempts" in match.error
    assert "Docker engine is not running" in match.error
    assert match.attempts == 3
    assert counted_hook == [match.pk]


def test_a_bot_fault_is_a_result_not_a_retry(bot, validated_version, run_on_commit):
    version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASHING_BOT, validate=False)
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=[validated_version, version],
        seed=5, enqueue=False,
    )
    tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    crashed = match.seats.get(seat=1)
    assert match.status == Match.Status.DONE and match.attempts == 1
    assert crashed.forfeited and crashed.fault_kind == "exception"
    assert "ZeroDivisionError" in crashed.fault_reason
    assert crashed.rank == 2


def test_the_process_sandbox_is_refused_for_uploads_unless_allowed(validated_version, settings):
    settings.SANDBOX_BACKEND = "process"
    settings.SANDBOX_ALLOW_PROCESS = False
    match = challenge(validated_version)
    assert tasks.match_play.apply(args=[match.pk]).get() is False
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert "SANDBOX_ALLOW_PROCESS" in match.error


def test_a_match_needs_one_seat_per_player_and_known_reference_bots(validated_version):
    with pytest.raises(services.MatchError, match="3 players but 2 seats"):
        services.match_create(kind="ladder", rules=Rules(players=3), seats=[validated_version, "random"])
    with pytest.raises(services.MatchError, match="unknown reference bot 'nosuchbot'"):
        services.match_create(kind="ladder", rules=Rules(players=2), seats=[validated_version, "nosuchbot"])
    with pytest.raises(services.MatchError, match="unknown match kind 'friendly'"):
        services.match_create(kind="friendly", rules=Rules(players=2), seats=[validated_version, "random"])


@pytest.mark.parametrize(("docker_answers", "expected"), [(True, "docker"), (False, "process")])
def test_auto_backend_is_docker_when_an_engine_with_the_image_answers(
    settings, monkeypatch, docker_answers, expected
):
    from sandbox import runner

    settings.SANDBOX_BACKEND = "auto"
    monkeypatch.setattr(runner, "docker_available", lambda image=None: docker_answers)
    assert sandboxing.backend_name() == expected


def test_auto_backend_never_falls_back_to_the_process_sandbox_when_it_is_not_allowed(settings, monkeypatch):
    from sandbox import runner

    settings.SANDBOX_BACKEND = "auto"
    settings.SANDBOX_ALLOW_PROCESS = False
    monkeypatch.setattr(runner, "docker_available", lambda image=None: False)
    with pytest.raises(sandboxing.SandboxConfigurationError, match="SANDBOX_ALLOW_PROCESS is off"):
        sandboxing.backend_name()


def test_a_hook_that_raises_stores_nothing_and_fails_the_match(validated_version, settings):
    with_hook(settings, "challenge", broken_hook)
    match = challenge(validated_version)
    assert tasks.match_play.apply(args=[match.pk]).get() is False
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED
    assert "storing the result failed: RuntimeError: ladder is closed" in match.error
    assert match.replay_gz is None
    assert all(seat.rank is None for seat in match.seats.all())


def test_the_sweeper_sends_again_a_queued_match_whose_message_was_lost(
    validated_version, run_on_commit, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as lost:
        match = services.match_create(
            kind="ladder", rules=Rules.parse(["players=2", "rounds=1"]), seats=[validated_version, "first"]
        )
    assert len(lost) == 1  # the message that never reached the broker
    assert services.match_sweep_stuck() == []  # not stale yet
    with run_on_commit():
        assert services.match_sweep_stuck(now=timezone.now() + timedelta(seconds=10**6)) == [match.pk]
    match.refresh_from_db()
    assert match.status == Match.Status.DONE and match.attempts == 1


def test_a_match_created_without_enqueueing_is_left_to_its_creator(validated_version):
    match = challenge(validated_version)
    assert services.match_sweep_stuck(now=timezone.now() + timedelta(seconds=10**6)) == []
    assert Match.objects.get(pk=match.pk).status == Match.Status.QUEUED


def test_a_bot_becomes_an_event_entrant_when_seated_in_a_ladder_match_not_in_a_challenge(validated_version, alice):
    bot, other = validated_version.bot, bot_services.bot_create(owner=alice, name="bystander")
    with CaptureQueriesContext(connection) as queries:
        challenge(validated_version)
    assert not [q for q in queries.captured_queries if q["sql"].startswith('UPDATE "bots_bot"')]
    bot.refresh_from_db()
    assert not bot.plays_in_events  # its validation match and a challenge are not events
    ladder = dict(kind="ladder", rules=Rules(players=2), seats=[validated_version, "random"], enqueue=False)
    services.match_create(**ladder)
    bot.refresh_from_db()
    other.refresh_from_db()
    assert bot.plays_in_events and not other.plays_in_events
    with CaptureQueriesContext(connection) as queries:
        services.match_create(**ladder)
    updates = [q["sql"] for q in queries.captured_queries if q["sql"].startswith('UPDATE "bots_bot"')]
    assert len(updates) == 1  # the filter on plays_in_events=False leaves a marked bot alone
    assert Bot.objects.filter(plays_in_events=True).count() == 1


ONE_ILLEGAL_MOVE_BOT = b"""calls = 0


def agent(observation, configuration):
    global calls
    calls += 1
    if calls == 1:
        return {"type": "play", "card": "no such card"}
    return observation["legal_actions"][0]
"""


def test_validation_rejects_a_bot_with_a_single_strike(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="sloppy.py", data=ONE_ILLEGAL_MOVE_BOT)
    version.refresh_from_db()
    seat = Match.objects.filter(kind="validation").order_by("pk").first().seats.get(seat=0)
    # One illegal move in each game of the duplicate deal (a fresh process per game): 2 strikes, no forfeit.
    assert (seat.strikes, seat.forfeited, seat.fault_kind) == (2, False, "illegal")
    assert version.status == BotVersion.Status.REJECTED
    assert version.rejection_reason.startswith("illegal")


def test_a_match_over_its_time_limit_is_an_infrastructure_retry_without_blaming_a_bot(
    validated_version, monkeypatch, settings, counted_hook
):
    from celery.exceptions import SoftTimeLimitExceeded

    def endless_play(match):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(sandboxing, "play_match_row", endless_play)
    settings.MATCH_MAX_ATTEMPTS = 2
    match = challenge(validated_version)
    soft, _ = selectors.match_time_limits(match)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(services, "match_enqueue", lambda *a, **k: None)
        assert tasks.match_play.apply(args=[match.pk]).get() is False
        match.refresh_from_db()
        assert match.status == Match.Status.QUEUED  # tried again, like any infrastructure error
        assert f"longer than its time limit of {soft:.0f} s" in match.error and "infrastructure" in match.error
        assert counted_hook == []
        assert tasks.match_play.apply(args=[match.pk]).get() is False
    match.refresh_from_db()
    assert match.status == Match.Status.FAILED and "gave up after 2 attempts" in match.error
    assert not any(seat.fault_kind or seat.strikes or seat.forfeited for seat in match.seats.all())


def test_a_matchs_time_limit_comes_from_its_format_and_clocks():
    from sandbox.limits import Limits

    def limit(**kwargs):
        return selectors.match_time_limit(**{"players": 2, "deals": 1, "duplicate": False, "limits": Limits(), **kwargs})

    base = limit()
    # each seat's match clock (and one decision's overshoot) counts in full
    assert limit(limits=Limits(time_per_match=400)) - base == pytest.approx(2 * 100)
    assert limit(players=3) - base == pytest.approx(300 + 1 + 10 + (3 - 2) * 10)
    # every seat of every game may take the whole start time (a fresh bot per game)
    assert limit(deals=5) - base == pytest.approx(4 * (2 * 10 + selectors.ENGINE_SECONDS_PER_GAME))
    assert limit(duplicate=True) - base == pytest.approx(2 * 10 + selectors.ENGINE_SECONDS_PER_GAME)
    assert base >= 2 * 300 + selectors.MATCH_BOOKKEEPING_SECONDS


def test_games_per_match_counts_what_the_engine_plays(bot, run_on_commit):
    version = bot_services.bot_version_create(bot=bot, filename="g.py", data=good_bot("g"), validate=False)
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=3", "rounds=1", "hand_size=3"]),
        seats=[version, "first", "random"], seed=5, deals=2, duplicate=True, enqueue=False,
    )
    tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.games_played == glossary.games_of(2, 3, True)


def test_the_task_is_sent_with_the_matchs_own_time_limits_and_its_deadline_follows_them(
    validated_version, monkeypatch, settings, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    sent = []
    monkeypatch.setattr(tasks.match_play, "apply_async", lambda **kwargs: sent.append(kwargs))
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=[validated_version, "first"],
        seed=2, time_per_match=50.0, enqueue=False,
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.match_enqueue(match)
    soft, hard = selectors.match_time_limits(match)
    assert soft == selectors.match_time_limit(
        players=2, deals=1, duplicate=False, limits=sandboxing.match_limits(None, None, 50.0)
    )
    assert [(k["soft_time_limit"], k["time_limit"]) for k in sent] == [(soft, hard)]
    assert hard == soft + selectors.HARD_LIMIT_GRACE
    settings.MATCH_STALE_AFTER = 0
    before = timezone.now()
    assert services.match_start(match.pk, now=before)
    match.refresh_from_db()
    assert (match.deadline - before).total_seconds() == pytest.approx(hard + selectors.STALE_GRACE)


def test_a_format_that_could_outlast_match_time_limit_is_refused(validated_version, settings):
    settings.MATCH_TIME_LIMIT = 1000
    with pytest.raises(services.MatchError, match=r"could need \d+ s .*MATCH_TIME_LIMIT=1000"):
        services.match_create(
            kind="challenge", rules=Rules.parse(["players=2"]), seats=[validated_version, "first"],
            deals=20, enqueue=False,
        )


NUL_BOT = b"""calls = 0


def agent(observation, configuration):
    global calls
    calls += 1
    print("nul\\x00byte and a lone surrogate \\udc80", flush=True)
    if calls == 3:
        raise ValueError("bad\\x00reason")
    return observation["legal_actions"][0]
"""


def test_nul_characters_a_bot_prints_or_raises_are_stored_safely(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="bell\x07.py", data=NUL_BOT)
    version.refresh_from_db()
    assert version.filename == "bell_.py"
    match = Match.objects.filter(kind="validation").order_by("pk").first()
    assert match.status == Match.Status.DONE, match.error
    seat = match.seats.get(seat=0)
    assert "nul\ufffdbyte" in seat.log and "\x00" not in seat.log
    assert "bad\ufffdreason" in seat.fault_reason
    assert version.status == BotVersion.Status.REJECTED and "\x00" not in version.rejection_reason


@pytest.mark.slow
def test_a_version_the_platform_failed_to_validate_can_be_validated_again(
    bot, client, monkeypatch, run_on_commit, settings
):
    from django.urls import reverse

    settings.MATCH_MAX_ATTEMPTS = 1
    real_play = sandboxing.play_match_row

    def docker_down(match):
        raise InfrastructureError("Docker engine is not running")

    monkeypatch.setattr(sandboxing, "play_match_row", docker_down)
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="alpha.py", data=good_bot("again"))
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert "could not be played" in version.rejection_reason

    monkeypatch.setattr(sandboxing, "play_match_row", real_play)
    client.force_login(bot.owner)
    assert b"Validate again" in client.get(reverse("bots:version", args=[bot.pk, 1])).content
    with run_on_commit():
        client.post(reverse("bots:revalidate", args=[bot.pk, 1]))
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    assert Match.objects.filter(kind="validation").count() == 4  # two configurations, twice
    assert [run["status"] for run in version.validation_runs] == ["passed", "passed"]


def test_a_version_rejected_for_its_own_fault_cannot_be_validated_again(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASHING_BOT)
    with pytest.raises(bot_services.BotError, match="only a version whose validation match the platform failed"):
        validation_services.bot_version_revalidate(version)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED


CLOCK_BOT = b"""def agent(observation, configuration):
    print("clock", configuration["time_per_decision"], configuration["time_bank"],
          configuration["time_per_match"], flush=True)
    return observation["legal_actions"][0]
"""


def test_a_match_plays_with_its_own_time_limits_and_the_bots_see_them(bot, run_on_commit):
    version = bot_services.bot_version_create(bot=bot, filename="clock.py", data=CLOCK_BOT, validate=False)
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=[version, "first"],
        seed=3, time_per_decision=0.75, time_bank=2.5, time_per_match=42.0, enqueue=False,
    )
    tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    assert match.status == Match.Status.DONE
    assert match.time_per_match == 42.0
    assert "clock 0.75 2.5 42.0" in match.seats.get(seat=0).log


def test_a_match_with_a_bad_time_limit_is_refused_with_the_value(validated_version):
    with pytest.raises(services.MatchError, match="time_bank must be a positive number, got -1.0"):
        services.match_create(
            kind="challenge", rules=Rules.parse(["players=2"]), seats=[validated_version, "first"],
            time_bank=-1, enqueue=False,
        )




@pytest.mark.slow
def test_stored_decision_times_and_log_marks_line_up_with_the_replays_actions(bot, run_on_commit):
    from matches import selectors

    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="sleepy.py", data=SLEEPY_COUNTER_BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    match = challenge(version, deals=2)
    assert tasks.match_play.apply(args=[match.pk]).get() is True
    match.refresh_from_db()
    replay = json.loads(selectors.match_replay_json(match))
    decision_ms = selectors.match_decision_ms(match)
    assert [len(t) for t in decision_ms] == [len(g["actions"]) for g in replay["games"]]
    records = selectors.bot_decision_records(replay, 0)
    played = [(g, i) for g, i in records if replay["games"][g]["actions"][i]["decision"] == "play"]
    assert played and all(decision_ms[g][i] >= 20.0 for g, i in played)
    # the reference bot plays in-process and is timed as well
    assert all(isinstance(ms, float) for game in decision_ms for ms in game)
    seat = match.seats.get(seat=0)
    # a fresh bot process per game (BOT_CONTRACT.md): the bot counts its decisions from 1 in each game
    expected = [f"decision {[r for r in records if r[0] == g].index((g, i)) + 1}\n" for g, i in records]
    assert len({g for g, _ in records}) == 2 and expected.count("decision 1\n") == 2
    assert seat.log_marks["decisions"] == len(records)
    assert seat.log_marks["printed"] == [len(text) for text in expected]
    lines = selectors.seat_decision_logs(seat, replay)
    assert [(g, i) for g, i, _ in lines] == records
    assert [text for _, _, text in lines] == expected
    assert match.seats.get(seat=1).log_marks == {}  # nothing printed, nothing stored


def test_decision_logs_of_a_bot_that_forfeits_stop_at_its_last_decision():
    from matches import selectors
    from matches.models import MatchSeat
    from sandbox import runner
    from sandbox.package import BotPackage

    crasher = BotPackage.from_bytes("crash.py", CRASHING_BOT)
    outcome = runner.play_sandboxed_match(Rules.parse(["players=2", "rounds=2"]), [crasher, "first"], seed=11, deals=2)
    result = outcome.result
    records = selectors.bot_decision_records(result.replay, 0)
    assert len(records) == 3  # the third decision crashed; the fallback played the rest of the match
    games = result.replay["games"]
    seat0 = [(g, i) for g, game in enumerate(games) for i, r in enumerate(game["actions"]) if game["seats"][r["seat"]] == 0]
    assert seat0[:3] == records and len(seat0) > 3
    assert all(result.decision_ms[g][i] is not None for g, i in records)
    assert all(result.decision_ms[g][i] is None for g, i in seat0[3:])  # fallback moves are not timed
    columns = sandboxing.seat_columns(outcome)[0]
    seat = MatchSeat(seat=0, log=columns["log"], log_marks=columns["log_marks"])
    lines = selectors.seat_decision_logs(seat, result.replay)
    assert [text for _, _, text in lines] == ["decision 1\n", "decision 2\n", "decision 3\nabout to divide by zero\n"]
    assert [(g, i) for g, i, _ in lines] == records
    assert "fault" in result.replay["games"][records[2][0]]["actions"][records[2][1]]
    # marks that do not fit the replay show nothing rather than lines beside the wrong decision
    for marks in ({**seat.log_marks, "decisions": 2}, {}, [0, 11]):
        assert selectors.seat_decision_logs(MatchSeat(seat=0, log=seat.log, log_marks=marks), result.replay) == []


def test_log_marks_are_stored_as_chars_per_decision_without_trailing_zeros():
    assert sandboxing.compact_log_marks([]) == {}
    assert sandboxing.compact_log_marks([5, 5, 5]) == {"start": 5, "decisions": 2, "printed": []}
    assert sandboxing.compact_log_marks([0, 3, 3, 10, 10]) == {"start": 0, "decisions": 4, "printed": [3, 0, 7]}


@pytest.mark.parametrize("backend", ["inprocess", "process"])
def test_decision_logs_keep_their_place_after_emoji_nul_and_broken_text(backend, request):
    if backend == "process":
        request.getfixturevalue("bwrap_path")
    from matches import selectors
    from matches.models import MatchSeat
    from sandbox import runner
    from sandbox.package import BotPackage

    odd = BotPackage.from_bytes("odd.py", (
        "n = 0\n"
        "def agent(observation, configuration):\n"
        "    global n\n"
        "    n += 1\n"
        "    print(f'\\U0001F600{n}\\x00\\udcff', 'é' * n)\n"
        "    return observation['legal_actions'][0]\n"
    ).encode())
    outcome = runner.play_sandboxed_match(Rules.parse(["players=2", "rounds=1"]), [odd, "first"], seed=5, backend=backend, allow_process=True)
    result = outcome.result
    columns = sandboxing.seat_columns(outcome)[0]
    seat = MatchSeat(seat=0, log=columns["log"], log_marks=columns["log_marks"])
    texts = [text for _, _, text in selectors.seat_decision_logs(seat, result.replay)]
    assert len(texts) == len(selectors.bot_decision_records(result.replay, 0)) > 1
    for k, text in enumerate(texts, start=1):
        assert text.startswith(f"\U0001F600{k}\ufffd") and text.endswith(" " + "é" * k + "\n"), text


# Legal and within its per-decision clock (1 s) every time, but 0.9 s a decision.
THINKER_BOT = b"""import time


def agent(observation, configuration):
    time.sleep(0.9)
    return observation["legal_actions"][0]
"""


@pytest.mark.slow
def test_a_bot_that_uses_up_its_match_clock_forfeits_and_the_match_completes(bot):
    version = bot_services.bot_version_create(bot=bot, filename="thinker.py", data=THINKER_BOT, validate=False)
    match = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=3"]), seats=[version, "first"],
        seed=4, time_per_decision=1.0, time_bank=1.0, time_per_match=3.0, enqueue=False,
    )
    assert tasks.match_play.apply(args=[match.pk]).get() is True
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.attempts == 1 and match.error == ""
    thinker, first = match.seats.order_by("seat")
    assert thinker.forfeited, (thinker.fault_kind, thinker.fault_reason)
    assert thinker.fault_reason.startswith("out of match time"), (thinker.fault_kind, thinker.fault_reason)
    assert (thinker.rank, first.rank) == (2, 1)
    # about 3 s of thinking (a few 0.9 s decisions), far below the match's own limit
    assert match.duration_seconds < selectors.match_time_limits(match)[0]


def test_the_reaper_waits_for_the_longest_running_match(validated_version, settings):
    settings.MATCH_STALE_AFTER = 0
    assert sandboxing.reap_age() == sandboxing.REAP_AFTER_AT_LEAST  # nothing running: the floor
    long = services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]), seats=[validated_version, "first"],
        seed=1, deals=40, duplicate=True, time_per_match=600.0, enqueue=False,
    )
    assert services.match_start(long.pk)
    long.refresh_from_db()
    window = (long.deadline - long.started_at).total_seconds()
    assert window > sandboxing.REAP_AFTER_AT_LEAST
    assert sandboxing.reap_age() == pytest.approx(window)
    settings.MATCH_STALE_AFTER = 90
    assert sandboxing.reap_age() == 90
