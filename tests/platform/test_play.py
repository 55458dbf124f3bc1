"""Play a bot (issue 20 point 2): a signed-in person starts an unranked human game against bots
under a ladder's rules, plays it through the game page's JSON (state.json, act) while the worker's
path (services.match_play) plays the bots in the sandbox, and the finished game is a normal match
with a replay. Refusals say why; nobody but the player sees the hand or may act."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from testsupport import make_ladder

from bots import services as bot_services
from matches import human, live, selectors, services
from matches.models import Match
from play import services as play_services
from play.models import HumanGame

pytestmark = pytest.mark.usefixtures("process_sandbox")


@pytest.fixture
def ladder(db):
    return make_ladder(name="Casual", slug="casual", rules={"players": 2, "rounds": 1})


@pytest.fixture
def carol(db):
    return get_user_model().objects.create_user(username="carol", password="pw-carol-123")


@contextlib.contextmanager
def _eager():
    from celery import current_app

    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    try:
        yield
    finally:
        current_app.conf.task_always_eager = eager


def _worker(match_id: int) -> None:
    """The worker's path on a thread of this process; its database connection closes with it."""
    from django.db import connections

    try:
        services.match_play(match_id)
    finally:
        connections.close_all()


def _logged_in(client, user):
    client.force_login(user)
    return client


def _start(client, ladder, opponents, *, seats=None, clock=30, address="127.0.0.1"):
    data = {"ladder": ladder.slug, "seats": str(seats or 1 + len(opponents)), "clock": str(clock)}
    data.update({f"opponent{i}": value for i, value in enumerate(opponents, start=1)})
    return client.post(reverse("play:new"), data, REMOTE_ADDR=address)


def _play_out(client, match_id, *, timeout=60.0, first_bad=False):
    """Answer every question with its first action until the game ends; returns the last state
    and the number of decisions answered."""
    state_url, act_url = reverse("play:state", args=[match_id]), reverse("play:act", args=[match_id])
    answered = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(state_url).json()
        if state["status"] not in ("queued", "running"):
            return state, answered
        question = state["question"]
        if question is None:
            time.sleep(0.01)
            continue
        assert question["actions"] and all(a["label"] for a in question["actions"])
        if first_bad and answered == 0:
            stale = client.post(act_url, json.dumps({"seq": question["seq"] - 1, "index": 0}), content_type="application/json")
            assert stale.status_code == 409 and "decision" in stale.json()["detail"]
            wrong = client.post(act_url, json.dumps({"seq": question["seq"], "index": 99}), content_type="application/json")
            assert wrong.status_code == 409 and "choose one of the" in wrong.json()["detail"]
        response = client.post(act_url, json.dumps({"seq": question["seq"], "index": 0}), content_type="application/json")
        if response.status_code == 200:
            answered += 1
    raise AssertionError("the game did not end in time")


@pytest.mark.services  # the worker's thread and the test share the database: PostgreSQL
@pytest.mark.django_db(transaction=True)
def test_a_person_plays_a_whole_game_against_a_sandboxed_bot_and_gets_a_replay(client, alice, carol, ladder, settings):
    settings.SANDBOX_DOCKER_WARM = "0"
    bot = bot_services.bot_create(owner=alice, name="alpha", source_public=True)
    with _eager():  # its validation here; the game's task is sent to the queue and played below
        with_version = bot_services.bot_version_create(
            bot=bot, filename="alpha.py", data=b"def agent(observation, configuration):\n    return observation['legal_actions'][-1]\n")
    with_version.refresh_from_db()
    assert with_version.status == "active", with_version.rejection_reason
    _logged_in(client, carol)
    response = _start(client, ladder, [f"bot:{bot.pk}", "ref:greedy"])
    assert response.status_code == 302, response.content.decode()[:2000]
    game = HumanGame.objects.select_related("match").get()
    match = game.match
    assert response["Location"] == reverse("play:game", args=[match.pk])
    assert match.kind == Match.Kind.HUMAN and match.deals == 1 and not match.duplicate and game.clock == 30
    seats = list(match.seats.order_by("seat"))
    assert [s.player_id for s in seats] == [carol.pk, None, None]
    assert seats[1].bot_version_id == with_version.pk and seats[2].reference_bot == "greedy"
    assert match.rules["players"] == 3 and match.rules["rounds"] == 1
    page = client.get(reverse("play:game", args=[match.pk]))
    assert page.status_code == 200 and b"Waiting for a worker" in page.content
    # the time limit counts the person's thinking for the whole game
    assert selectors.match_time_limits(match)[0] > human.THINKING_SECONDS
    worker = threading.Thread(target=_worker, args=(match.pk,), daemon=True)
    worker.start()
    try:
        state, answered = _play_out(client, match.pk, first_bad=True)
    finally:
        worker.join(60)
    assert state["status"] == "done", state
    assert answered >= 1
    match.refresh_from_db()
    assert match.status == Match.Status.DONE and match.replay_gz
    replay = json.loads(selectors.match_replay_json(match))
    assert replay["names"][0] == "carol"
    ranks = sorted(s.rank for s in match.seats.all())
    assert ranks[0] == 1 and {r["name"] for r in state["results"]} >= {"carol", "greedy (reference)"}
    assert state["replay_url"] == reverse("matches:replay_viewer", args=[match.pk])
    # the finished game reads as any match
    detail = client.get(match.get_absolute_url())
    assert detail.status_code == 200 and b"carol" in detail.content and b"(a person)" in detail.content
    listing = client.get(reverse("matches:list") + "?kind=human")
    assert listing.status_code == 200 and f"/matches/{match.pk}/".encode() in listing.content
    assert client.get(reverse("matches:replay_viewer", args=[match.pk])).status_code == 200
    assert client.get(reverse("play:game", args=[match.pk])).status_code == 200


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("store", ["redis", "memory"])
def test_only_the_player_sees_the_hand_and_may_act(client, alice, carol, ladder, redis_url, settings, store):
    if store == "memory":  # the embedded default: no Redis, the worker thread and the web share a process
        settings.REDIS_URL = ""
        assert isinstance(live.channel(), human.MemoryChannel)
        assert live.channel(blocking=True) is live.channel()
    game = play_services.human_game_start(user=carol, ladder=ladder, opponents=["greedy"], clock=30)
    match = game.match
    worker = threading.Thread(target=_worker, args=(match.pk,), daemon=True)
    worker.start()
    try:
        _logged_in(client, carol)
        deadline = time.monotonic() + 30
        while (state := client.get(reverse("play:state", args=[match.pk])).json())["question"] is None:
            assert time.monotonic() < deadline, state
            time.sleep(0.02)
        question = state["question"]
        assert question["hand"] and 0 < question["seconds_left"] <= 30
        # alice is not at the table: no question, no hand, and her action is refused
        _logged_in(client, alice)
        theirs = client.get(reverse("play:state", args=[match.pk])).json()
        assert theirs["question"] is None and theirs["seat"] is None and "hand" not in json.dumps(theirs)
        refused = client.post(reverse("play:act", args=[match.pk]), json.dumps({"seq": question["seq"], "index": 0}),
                              content_type="application/json")
        assert refused.status_code == 403
        assert client.get(reverse("play:game", args=[match.pk])).status_code == 302  # to the match page
        # a spectator's live view hides every hand
        view = live.live_view(Match.objects.get(pk=match.pk), game=0, after=0, full=False)
        assert view["events"] and all("hand" not in e or set(e["hand"]) <= {"??"} for e in view["events"] if "hand" in e)
        _logged_in(client, carol)
        bad = client.post(reverse("play:act", args=[match.pk]), b"not json", content_type="application/json")
        assert bad.status_code == 400
        _play_out(client, match.pk)
    finally:
        worker.join(60)
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE


@pytest.mark.services
@pytest.mark.slow  # one clock of 10 s runs out
@pytest.mark.django_db(transaction=True)
def test_an_abandoned_game_ends_after_its_strikes_and_the_bots_finish_it(alice, carol, settings):
    quick = make_ladder(name="Quick", slug="quick", rules={"players": 2, "rounds": 1, "max_strikes": 1})
    game = play_services.human_game_start(user=carol, ladder=quick, opponents=["greedy"], clock=human.CLOCK_MIN)
    started = time.monotonic()
    assert services.match_play(game.match_id) is True
    took = time.monotonic() - started
    match = Match.objects.get(pk=game.match_id)
    person = match.seats.get(seat=0)
    assert match.status == Match.Status.DONE and person.forfeited and "strikes" in person.fault_kind
    assert "no answer within the clock" in person.fault_reason
    assert human.CLOCK_MIN <= took < human.CLOCK_MIN + 30


def test_refusals_say_why(client, alice, bob, carol, ladder, settings):
    _logged_in(client, carol)
    private = bot_services.bot_create(owner=bob, name="secret")

    def refused(response, text):
        assert response.status_code == 400, response.status_code
        shown = response.content.decode()
        assert text in shown, shown[:3000]

    refused(_start(client, ladder, ["ref:greedy"], clock=5), "clock is 10 to 300 seconds")
    refused(_start(client, ladder, ["ref:greedy"], seats=5), "A game has 2 to 4 seats")
    refused(_start(client, ladder, ["ref:greedy"], seats="²"), "A game has 2 to 4 seats")  # a digit int() refuses
    refused(_start(client, ladder, ["ref:nobody"]), "unknown reference bot")
    refused(_start(client, ladder, [f"bot:{private.pk}"]), "is not public")
    refused(_start(client, ladder, ["bot:999999"]), "there is no bot 999999")
    with pytest.raises(play_services.PlayRefusal, match="clock is 10 to 300"):
        play_services.human_game_start(user=carol, ladder=ladder, opponents=["greedy"], clock=301)
    ladder.active = False
    ladder.save()
    refused(_start(client, ladder, ["ref:greedy"]), "is not active")
    ladder.active = True
    ladder.save()
    assert HumanGame.objects.count() == 0  # nothing refused left a row
    first = _start(client, ladder, ["ref:greedy"])
    assert first.status_code == 302
    refused(_start(client, ladder, ["ref:random"]), "you are already playing game")
    _logged_in(client, alice)
    refused(_start(client, ladder, ["ref:random"]), "a game started from your address is still in play")
    settings.HUMAN_GAMES_AT_ONCE = 1
    refused(_start(client, ladder, ["ref:random"], address="10.1.2.3"), "tables for human games are taken")
    assert HumanGame.objects.count() == 1


def test_starting_games_is_rate_limited_per_account(client, carol, ladder, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "human_games": "2/hour", "human_games_per_address": "50/hour"}
    settings.HUMAN_GAMES_AT_ONCE = 10
    from django.core.cache import cache

    cache.clear()
    _logged_in(client, carol)
    for _ in range(2):
        assert _start(client, ladder, ["ref:greedy"]).status_code == 302
        Match.objects.filter(kind="human").update(status=Match.Status.CANCELLED)  # the game is over
    response = _start(client, ladder, ["ref:greedy"])
    assert response.status_code == 400 and "Too many games started" in response.content.decode()


def test_the_play_pages_need_a_login(client, carol, ladder):
    assert client.get(reverse("play:new")).status_code == 302
    assert client.get(reverse("play:state", args=[1])).status_code == 302
    _logged_in(client, carol)
    page = client.get(reverse("play:new"))
    assert page.status_code == 200 and b"greedy (reference bot)" in page.content
    assert client.get(reverse("play:game", args=[424242])).status_code == 404


def test_memory_channel_hands_an_answer_to_the_waiting_seat():
    channel = human.MemoryChannel()
    got = []
    waiter = threading.Thread(target=lambda: got.append(channel.blpop(["k"], timeout=5)))
    waiter.start()
    time.sleep(0.05)
    channel.rpush("k", "x")
    waiter.join(5)
    assert got == [(b"k", b"x")]
    assert channel.blpop(["k"], timeout=0.05) is None
    channel.set("q", "v", ex=1)
    assert channel.get("q") == b"v"
    channel.delete("q")
    assert channel.get("q") is None


@pytest.mark.services
def test_a_person_out_of_thinking_time_forfeits_for_match_time(redis_url):
    import redis

    from engine.faults import SeatFault

    client = redis.Redis.from_url(redis_url)
    ticks = iter([0.0, 50.0])
    seat = human.HumanSeat(client, "test-play:thinking", clock=1, thinking=2, clock_fn=lambda: next(ticks))
    with pytest.raises(SeatFault) as first:
        seat.decide({"seat": 0, "legal_actions": [{"type": "draw"}]}, {})
    assert first.value.kind == "timeout"
    with pytest.raises(SeatFault) as second:
        seat.decide({"seat": 0, "legal_actions": [{"type": "draw"}]}, {})
    assert second.value.kind == "match_time" and "out of match time" in second.value.reason


def test_a_chosen_version_is_played_as_it_is_and_refused_unless_active(client, alice, carol, ladder):
    bot = bot_services.bot_create(owner=alice, name="versioned", source_public=True)
    version = bot_services.bot_version_create(bot=bot, filename="v.py", data=b"def agent(o, c):\n    return o['legal_actions'][0]\n",
                                              validate=False)
    _logged_in(client, carol)
    form = client.get(reverse("play:new") + f"?version={version.pk}")
    assert f'value="ver:{version.pk}" selected'.encode() in form.content
    refused = _start(client, ladder, [f"ver:{version.pk}"])
    assert refused.status_code == 400 and "not active: it cannot play" in refused.content.decode()
    version.status = "active"
    version.save(update_fields=["status"])
    started = _start(client, ladder, [f"ver:{version.pk}"])
    assert started.status_code == 302
    assert HumanGame.objects.get().match.seats.get(seat=1).bot_version_id == version.pk


def test_a_running_game_s_seed_is_shown_to_nobody_but_staff(client, carol, staff, ladder):
    """Every deal and draw derives from the seed: shown while the game runs, it would give the
    person the bots' hands (and a spectator the person's)."""
    game = play_services.human_game_start(user=carol, ladder=ladder, opponents=["greedy"], clock=30)
    match = game.match
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING, attempt_token="a" * 32, started_at=services.database_now(),
        deadline=services.database_now() + timedelta(hours=1))
    seed = str(match.seed).encode()
    for who in (None, carol, staff):
        client.logout()
        if who is not None:
            _logged_in(client, who)
        page = client.get(match.get_absolute_url())
        api = client.get(f"/api/matches/{match.pk}/")
        assert page.status_code == 200 and api.status_code == 200
        if who is staff:
            assert seed in page.content and api.json()["seed"] == match.seed
        else:
            assert seed not in page.content and b"shown when the match ends" in page.content
            assert api.json()["seed"] is None
    Match.objects.filter(pk=match.pk).update(status=Match.Status.DONE, finished_at=services.database_now())
    client.logout()
    assert client.get(f"/api/matches/{match.pk}/").json()["seed"] == match.seed


@pytest.mark.services
def test_a_stopping_worker_gives_a_waiting_person_s_game_back_to_the_queue(redis_url):
    """A warm shutdown (Celery's worker_shutting_down, the embedded worker's stop) must not wait a
    whole clock for a person: the seat raises the worker's InfrastructureError (the match is
    queued again, nobody is blamed) within one WAIT_SLICE."""
    import redis

    from engine.faults import InfrastructureError

    client = redis.Redis.from_url(redis_url)
    seat = human.HumanSeat(client, "test-play:stopping", clock=300)
    timer = threading.Timer(0.3, human.STOPPING.set)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(InfrastructureError, match="worker is stopping"):
            seat.decide({"seat": 0, "legal_actions": [{"type": "draw"}]}, {})
    finally:
        human.STOPPING.clear()
    assert time.monotonic() - started < human.WAIT_SLICE + 2
    assert seat.faults == [] and human.current_question(client, "test-play:stopping") is None
