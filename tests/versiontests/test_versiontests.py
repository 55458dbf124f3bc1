"""Version tests on the site (issue 17 point 6): start checks, pairs played to a verdict on the
process sandbox, a pair counted once, failed pairs played again, unrated, the page and its JSON."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from testsupport import make_ladder, played_match
from versiontests import services
from versiontests.models import VersionTest, VersionTestPair
from versiontests.services import VersionTestError, version_test_match_finish, version_test_start

from bots import services as bot_services
from bots.models import BotVersion
from ladders.models import Ladder, LadderEntry, RatingChange
from matches import services as match_services
from matches.models import Match
from web.demo import reference_bot_upload

FIRST_LEGAL = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def user(name: str, **extra):
    return get_user_model().objects.create_user(name, **extra)  # no password: force_login needs none


def version(bot, data: bytes = FIRST_LEGAL, *, filename: str = "bot.py", status=BotVersion.Status.ACTIVE):
    """A version of ``bot`` whose status is set directly (validation is not what these tests are about)."""
    tag = f"\n# {bot.name} {bot.versions.count() + 1}\n".encode() if filename.endswith(".py") else b""
    made = bot_services.bot_version_create(bot=bot, filename=filename, data=data + tag, validate=False)
    BotVersion.objects.filter(pk=made.pk).update(status=status, rejection_reason="crash: test" if status == "rejected" else "")
    made.refresh_from_db()
    return made


def two_seat_ladder(**fields) -> Ladder:
    fields = {"name": "Duel", "slug": "duel", "rules": {"players": 2, "rounds": 1}, "seats": 2,
              "time_per_decision": 1.0, "time_bank": 5.0, **fields}
    return make_ladder(**fields)


@pytest.fixture
def alice(db):
    return user("alice")


@pytest.fixture
def mine(alice):
    bot = bot_services.bot_create(owner=alice, name="mine")
    return bot, version(bot), version(bot)


@pytest.fixture
def ladder(db):
    return two_seat_ladder()


def played(match: Match, new_games: list[int], *, new_forfeits: bool = False) -> None:
    """Store a result for a pair's match as a worker would: ``new_games`` is NEW's rank (1 or 2) in each game."""
    token = match_services.match_start(match.pk)
    games = [{"seats": [0, 1], "ranks": [new_games[0], 3 - new_games[0]]},
             {"seats": [1, 0], "ranks": [3 - new_games[1], new_games[1]]}]
    wins = sum(rank == 1 for rank in new_games)
    first = 1 if wins >= 1 and not new_forfeits else 2
    outcome = played_match([first, 3 - first], wins=[wins, 2 - wins], forfeits={0} if new_forfeits else (),
                           rounds=2, games=2, replay={"version": 1, "games": games})
    assert match_services.match_record_result(match.pk, token, outcome)


def pair_matches(test: VersionTest, state=VersionTestPair.State.PLAYING) -> list[Match]:
    return [p.match for p in VersionTestPair.objects.filter(test=test, state=state).select_related("match").order_by("index")]


# -- starting ---------------------------------------------------------------------------------


def test_starting_refuses_others_private_versions_and_says_what_is_wrong(alice, mine, ladder):
    bot, v1, v2 = mine
    bob = user("bob")
    private = bot_services.bot_create(owner=bob, name="private")
    theirs = version(private)
    cases = [
        (dict(new_version=theirs, old_version=v1), "new_version", "is not yours"),
        (dict(new_version=v2, old_version=theirs), "old_version", "is not public"),
        (dict(new_version=v2, old_version=v2), "old_version", "are both"),
        (dict(new_version=version(bot, status="rejected"), old_version=v1), "new_version", "is rejected"),
        (dict(new_version=v2, old_version=version(bot, status="validating")), "old_version", "is validating"),
        (dict(new_version=v2, old_version=v1, ladder=two_seat_ladder(name="Four", slug="four", seats=4,
                                                                       rules={"players": 4})), "ladder", "has 4 seats"),
        (dict(new_version=v2, old_version=v1, ladder=two_seat_ladder(name="Off", slug="off", active=False)),
         "ladder", "is not active"),
        (dict(new_version=v2, old_version=v1, elo0=5, elo1=5), "elo0", "below elo1"),
        (dict(new_version=v2, old_version=v1, alpha=0.7), "alpha", "between 0 and 0.5"),
        (dict(new_version=v2, old_version=v1, max_pairs=services.MAX_PAIRS_LIMIT + 1), "max_pairs", "max pairs"),
    ]
    for kwargs, field, text in cases:
        with pytest.raises(VersionTestError, match=text) as refused:
            version_test_start(owner=alice, **{"ladder": ladder, **kwargs})
        assert refused.value.field == field, kwargs
    assert not VersionTest.objects.exists() and not Match.objects.filter(kind="challenge").exists()


def test_elo_bounds_beyond_what_the_llr_can_compute_are_refused_and_the_limits_count_pairs(alice, mine, ladder):
    # elo1 7000 rounds the logistic score to 1 and tournaments.sprt.llr divides by zero: such a
    # test played every pair and threw each result away (the hook raised; "no bot blamed").
    _, v1, v2 = mine
    for elo0, elo1, field in ((0, 7000, "elo1"), (-200000, 0, "elo0"), (-services.ELO_LIMIT - 1, 0, "elo0")):
        with pytest.raises(VersionTestError, match=f"{field} must be from") as refused:
            version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder, elo0=elo0, elo1=elo1)
        assert refused.value.field == field
    assert not VersionTest.objects.exists()
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder,
                              elo0=-services.ELO_LIMIT, elo1=services.ELO_LIMIT, max_pairs=3)
    played(pair_matches(test)[0], [1, 2])
    test.refresh_from_db()
    assert test.pentanomial == [0, 0, 1, 0, 0] and test.status == "running"


def test_a_public_bot_is_tested_in_the_version_it_plays(alice, mine, ladder):
    _, _, v2 = mine
    carol = bot_services.bot_create(owner=user("carol"), name="public", source_public=True)
    older, playing = version(carol), version(carol)
    with pytest.raises(VersionTestError, match="not the version carol/public plays now"):
        version_test_start(owner=alice, new_version=v2, old_version=older, ladder=ladder)
    test = version_test_start(owner=alice, new_version=v2, old_version=playing, ladder=ladder, seed=100)
    assert test.status == "running" and (test.elo0, test.elo1, test.alpha, test.beta) == (0, 10, 0.05, 0.05)


def test_a_start_queues_a_few_unrated_duplicate_pairs_of_consecutive_seeds(alice, mine, ladder, settings):
    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 3
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder, seed=500, max_pairs=10)
    matches = pair_matches(test)
    assert [m.seed for m in matches] == [500, 501, 502]
    for match in matches:
        assert (match.kind, match.deals, match.duplicate, match.status) == ("challenge", 1, True, "queued")
        assert [s.bot_version_id for s in match.seats.order_by("seat")] == [v2.pk, v1.pk]
        assert (match.time_per_decision, match.time_bank) == (1.0, 5.0)  # the ladder's clocks
        assert match.rules["players"] == 2


def test_running_tests_per_owner_are_capped(alice, mine, ladder, settings):
    settings.VERSION_TESTS_RUNNING = 1
    _, v1, v2 = mine
    first = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder)
    with pytest.raises(VersionTestError, match="1 version tests running"):
        version_test_start(owner=alice, new_version=v1, old_version=v2, ladder=ladder)
    services.version_test_cancel(first, user=alice)
    assert version_test_start(owner=alice, new_version=v1, old_version=v2, ladder=ladder).status == "running"


# -- counting -----------------------------------------------------------------------------------


def test_a_pair_is_counted_once_when_the_hook_runs_twice(alice, mine, ladder, settings):
    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 2
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder, max_pairs=10)
    first, second = pair_matches(test)
    played(first, [1, 1])  # NEW wins both games: 2 points
    played(second, [1, 2], new_forfeits=True)  # a forfeit loses the pair, as the ladder ranks it last
    test.refresh_from_db()
    assert test.pentanomial == [1, 0, 0, 0, 1]
    llr = test.llr
    for match in (first, second):
        version_test_match_finish(Match.objects.get(pk=match.pk))  # a second run of the hook
    test.refresh_from_db()
    assert test.pentanomial == [1, 0, 0, 0, 1] and test.llr == llr
    assert VersionTestPair.objects.filter(test=test, state="counted").count() == 2
    # the two counted pairs were replaced: two more in flight, of the next seeds
    assert [m.seed - test.seed for m in pair_matches(test)] == [2, 3]


@pytest.mark.services  # Redis and two workers' transactions: not for make check
def test_pairs_finishing_at_once_on_two_workers_are_both_counted(transactional_db, redis_url, settings):
    """Two results stored at the same moment from two threads (two connections, as two workers):
    the test's row lock orders the hooks, so neither pair's count overwrites the other's."""
    import threading

    import redis

    from arena import queues

    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 2
    owner = user("alice")
    bot = bot_services.bot_create(owner=owner, name="mine")
    old, new = version(bot), version(bot)
    test = version_test_start(owner=owner, new_version=new, old_version=old, ladder=two_seat_ladder(), max_pairs=2)
    first, second = pair_matches(test)
    tokens = {m.pk: match_services.match_start(m.pk) for m in (first, second)}
    games = {first.pk: [1, 1], second.pk: [2, 2]}
    barrier = threading.Barrier(2)
    errors = []

    def store(match: Match) -> None:
        from django.db import connection

        try:
            token = tokens[match.pk]
            ranks = games[match.pk]
            replay = {"version": 1, "games": [{"seats": [0, 1], "ranks": [ranks[0], 3 - ranks[0]]},
                                              {"seats": [1, 0], "ranks": [3 - ranks[1], ranks[1]]}]}
            barrier.wait(timeout=10)
            assert match_services.match_record_result(
                match.pk, token, played_match([ranks[0], 3 - ranks[0]], wins=[2 * (ranks[0] == 1), 2 * (ranks[0] == 2)],
                                              rounds=2, games=2, replay=replay)
            )
        except Exception as exc:  # reported below: an assertion in a thread would be lost
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=store, args=(m,)) for m in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    redis.Redis.from_url(redis_url).delete(*queues.ALL)  # the start sent its pairs' tasks; no worker takes them
    assert not errors, errors
    test.refresh_from_db()
    assert test.pentanomial == [1, 0, 0, 0, 1] and test.status == "inconclusive"
    assert sorted(VersionTestPair.objects.filter(test=test).values_list("counted_number", flat=True)) == [1, 2]


def test_a_pair_that_cannot_be_queued_fails_the_test_with_the_reason(alice, mine, ladder, settings):
    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 1
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder, max_pairs=10)
    BotVersion.objects.filter(pk=v1.pk).update(status="rejected", rejection_reason="crash: revalidated")
    [match] = pair_matches(test)
    played(match, [1, 2])
    test.refresh_from_db()
    assert test.status == "failed" and "cannot be queued" in test.reason and "rejected" in test.reason
    assert test.pentanomial == [0, 0, 1, 0, 0]  # the pair that was played still counts


def test_a_failed_pair_is_played_again_on_the_same_deal_and_then_fails_the_test(alice, mine, ladder, settings):
    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 1
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder, max_pairs=10)
    seeds = []
    for attempt in range(1, services.PAIR_ATTEMPTS + 1):
        [match] = pair_matches(test)
        assert VersionTestPair.objects.get(match=match).attempt == attempt
        seeds.append(match.seed)
        assert match_services.match_fail(match.pk, None, "InfrastructureError: the sandbox vanished")
    test.refresh_from_db()
    assert seeds == [test.seed] * services.PAIR_ATTEMPTS
    assert test.status == "failed" and "the sandbox vanished" in test.reason and "pair 1 failed 3 times" in test.reason
    assert test.pentanomial == [0, 0, 0, 0, 0] and not pair_matches(test)


def test_cancelling_stops_the_queued_pairs_and_a_late_result_is_not_counted(alice, mine, ladder):
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder)
    running, *queued = pair_matches(test)
    token = match_services.match_start(running.pk)
    assert token
    with pytest.raises(VersionTestError, match="only the owner"):
        services.version_test_cancel(test, user=user("mallory"))
    services.version_test_cancel(test, user=alice)
    assert {m.status for m in Match.objects.filter(pk__in=[m.pk for m in queued])} == {"cancelled"}
    match_services.match_fail(running.pk, token, "late")  # its hook runs: discarded, nothing queued
    test.refresh_from_db()
    assert test.status == "cancelled" and test.pentanomial == [0, 0, 0, 0, 0]
    assert VersionTestPair.objects.get(match=running).state == "discarded"
    assert VersionTestPair.objects.filter(test=test).count() == len(queued) + 1


# -- played for real ------------------------------------------------------------------------------


@pytest.fixture
def process_sandbox(settings, bwrap_path):
    settings.SANDBOX_BACKEND = "process"
    settings.SANDBOX_ALLOW_PROCESS = True


def arena_sprt(*argv: str) -> dict:
    """``arena sprt ... --json`` run in this process (reference bots by name)."""
    import contextlib
    import io
    import json

    from arena_cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["sprt", *argv, "--json"]) == 0
    return json.loads(out.getvalue())


@pytest.mark.slow
def test_a_test_of_real_bots_runs_to_a_verdict_and_rates_nothing(alice, ladder, process_sandbox, run_on_commit, settings):
    """greedy against first-legal on the process sandbox, in-process tasks: wide bounds end it in a few
    pairs, the same pairs, counts and verdict as ``arena sprt`` on the same seeds and rules."""
    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 3
    bot = bot_services.bot_create(owner=alice, name="candidate")
    filename, data = reference_bot_upload("greedy")
    new = version(bot, data, filename=filename)
    old_bot = bot_services.bot_create(owner=user("olga"), name="baseline", source_public=True)
    old = version(old_bot)
    entry = LadderEntry.objects.create(ladder=ladder, bot=old_bot)
    with run_on_commit():
        test = version_test_start(owner=alice, new_version=new, old_version=old, ladder=ladder,
                                  elo0=-100, elo1=100, alpha=0.1, beta=0.1, max_pairs=20, seed=7)
    test.refresh_from_db()
    assert test.status in ("H1", "H0"), (test.status, test.reason, test.pentanomial)
    cli = arena_sprt("greedy", "first", "--elo0", "-100", "--elo1", "100", "--alpha", "0.1", "--beta", "0.1",
                     "--seed", "7", "--max-games", "40", "--rules", "rounds=1")
    assert (test.status, test.pentanomial) == (cli["result"], cli["pentanomial"])
    assert round(test.llr, 4) == cli["llr"] and round(test.elo, 1) == cli["elo"]
    lower, upper = test.bounds
    assert test.llr >= upper if test.status == "H1" else test.llr <= lower
    counted = VersionTestPair.objects.filter(test=test, state="counted")
    assert test.pairs == counted.count() == len(set(counted.values_list("index", flat=True))) >= 1
    done = Match.objects.filter(version_test_pair__test=test, status="done")
    assert done.count() == test.pairs  # every played pair counted; the queued rest cancelled at the verdict
    assert set(Match.objects.filter(version_test_pair__test=test).values_list("status", flat=True)) <= {"done", "cancelled"}
    history = list(counted.order_by("counted_number").values_list("llr_after", flat=True))
    assert history[-1] == pytest.approx(test.llr)
    assert test.elo_low <= test.elo <= test.elo_high
    # unrated: the baseline's ladder entry played nothing rated
    entry.refresh_from_db()
    assert entry.matches_played == 0 and not RatingChange.objects.filter(ladder=ladder).exists()

    client = Client()
    client.force_login(alice)
    live = client.get(f"/versiontests/{test.pk}/live.json").json()
    assert live["llr"] == round(test.llr, 3) and live["final"] is True and live["pairs"] == test.pairs
    assert live["pentanomial"] == test.pentanomial and len(live["chart"]["points"].split()) == test.pairs + 1
    page = client.get(f"/versiontests/{test.pk}/")
    assert page.status_code == 200 and "accepted" in page.content.decode()


# -- pages ----------------------------------------------------------------------------------------------


def test_the_page_and_its_json_are_the_owners_and_staffs(alice, mine, ladder):
    _, v1, v2 = mine
    test = version_test_start(owner=alice, new_version=v2, old_version=v1, ladder=ladder)
    page, live = f"/versiontests/{test.pk}/", f"/versiontests/{test.pk}/live.json"
    anonymous = Client()
    assert anonymous.get(page).status_code == 302 and "/login" in anonymous.get(page)["Location"]
    assert anonymous.get(live).status_code == 404
    other = Client()
    other.force_login(user("eve"))
    assert other.get(page).status_code == 404 and other.get(live).status_code == 404
    assert other.post(f"{page}cancel/").status_code == 404
    staff = Client()
    staff.force_login(user("root", is_staff=True))
    assert staff.get(page).status_code == 200 and staff.get(live).json()["status"] == "running"
    owner = Client()
    owner.force_login(alice)
    body = owner.get(page).content.decode()
    assert "Cancel the test" in body and 'data-live-url="/versiontests/' in body
    assert owner.get(live).json()["llr"] == 0.0
    assert owner.post(f"{page}cancel/").status_code == 302
    test.refresh_from_db()
    assert test.status == "cancelled"


def test_the_start_form_shows_the_services_errors(alice, mine, settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    _, v1, v2 = mine
    two_seat_ladder(name="Four", slug="four", seats=4, rules={"players": 4})
    client = Client()
    client.force_login(alice)
    form = client.get(f"/versiontests/new/?new={v2.pk}").content.decode()
    assert f'<option value="{v2.pk}" selected>' in form and "Four (4 seats)" in form
    fields = {"new_version": v2.pk, "old_version": v1.pk, "ladder": "four", "elo0": 0, "elo1": 10,
              "alpha": 0.05, "beta": 0.05, "max_pairs": 100}
    refused = client.post("/versiontests/new/", fields)
    assert refused.status_code == 200 and "has 4 seats" in refused.content.decode()
    two_seat_ladder()
    started = client.post("/versiontests/new/", {**fields, "ladder": "duel"})
    test = VersionTest.objects.get()
    assert started.status_code == 302 and started["Location"] == f"/versiontests/{test.pk}/"
    assert "mine v2" in client.get("/versiontests/").content.decode()


@pytest.mark.slow
def test_a_celery_worker_plays_a_test_to_its_end(celery_worker_factory, bwrap_path, settings):
    """The production path: pairs sent through Redis, played by a real worker on the process
    sandbox, each result's hook queueing the next pair from the worker."""
    from testsupport import wait_for

    settings.VERSION_TEST_PAIRS_IN_FLIGHT = 2
    worker = celery_worker_factory(env_extra={
        "SANDBOX_BACKEND": "process", "SANDBOX_ALLOW_PROCESS": "1", "VERSION_TEST_PAIRS_IN_FLIGHT": "2",
    })
    owner = user("alice")
    bot = bot_services.bot_create(owner=owner, name="mine")
    old, new = version(bot), version(bot)
    test = version_test_start(owner=owner, new_version=new, old_version=old, ladder=two_seat_ladder(), max_pairs=3)
    wait_for("the test's end", lambda: VersionTest.objects.get(pk=test.pk).is_finished, 90, worker)
    test.refresh_from_db()
    assert test.status in ("inconclusive", "H0"), (test.status, test.reason)
    counted = VersionTestPair.objects.filter(test=test, state="counted")
    assert test.pairs == counted.count() and sorted(counted.values_list("index", flat=True)) == list(range(test.pairs))
    assert test.pairs == 3 or test.status == "H0"  # the third pair was queued by the worker's hook
    if test.status == "inconclusive":  # at the cap: never a pair more than max_pairs queued
        assert Match.objects.filter(version_test_pair__test=test).count() == 3


def test_starts_share_the_challenges_rate_limit_and_refused_forms_do_not_count(alice, mine, ladder, settings):
    from django.core.cache import cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenges": "1/hour", "challenges_per_address": "5/hour"}
    cache.clear()
    _, v1, v2 = mine
    client = Client()
    client.force_login(alice)
    fields = {"new_version": v2.pk, "old_version": v2.pk, "ladder": "duel", "elo0": 0, "elo1": 10,
              "alpha": 0.05, "beta": 0.05, "max_pairs": 100}
    assert "are both" in client.post("/versiontests/new/", fields).content.decode()  # refused: not counted
    assert client.post("/versiontests/new/", {**fields, "old_version": v1.pk}).status_code == 302
    limited = client.post("/versiontests/new/", {**fields, "old_version": v1.pk, "new_version": v1.pk})
    assert "Too many requests for matches; retry in" in limited.content.decode()
    assert VersionTest.objects.count() == 1
    cache.clear()
