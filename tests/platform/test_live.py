"""Live matches (issue 20 point 1): the worker's referee publishes each game's events while it
plays (matches.live, Redis when REDIS_URL is set, else this process), and a spectator reads them:
hidden cards for everyone but staff, never a seed, only the current attempt's."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from testsupport import SLEEPY_COUNTER_BOT

from bots import services as bot_services
from bots.models import BotVersion
from engine.cards import CODES
from engine.replay import HIDDEN_CARD
from engine.rules import Rules
from matches import human, live, services
from matches.models import Match
from sandbox import runner


def _running(match: Match, token: str = "a" * 32) -> Match:
    now = services.database_now()
    Match.objects.filter(pk=match.pk).update(
        status=Match.Status.RUNNING, attempt_token=token, attempts=1, started_at=now,
        deadline=now + timedelta(hours=1), lease_expires_at=now + timedelta(hours=1),
    )
    match.refresh_from_db()
    return match


def _played_live(match: Match, every: float = 0.0) -> list:
    """Play ``match``'s format in-process with the publisher; the referee's replay games."""
    outcome = runner.play_sandboxed_match(
        Rules.from_dict(match.rules), ["greedy", "first"], seed=match.seed, deals=match.deals,
        duplicate=match.duplicate, backend="inprocess", on_step=live.LivePublisher(match, every=every),
    )
    return outcome.result.replay["games"]


def test_a_spectator_sees_every_event_with_hands_hidden_and_no_seed(db):
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=7, deals=2, duplicate=True, enqueue=False))
    games = _played_live(match)
    view = live.live_view(match, game=0, after=0, full=False)
    assert view["status"] == "running" and len(view["games"]) == len(games) == 4
    assert all("seed" not in head for head in view["games"])
    assert [head["events"] for head in view["games"]] == [len(g["events"]) for g in games]
    assert all(head["over"] for head in view["games"])
    # the decision points of the game asked for: where each of its action records was asked; the
    # heads carry none (a poll reads the same three keys however many games were played)
    assert all("points" not in head for head in view["games"])
    assert [len(live.live_view(match, game=g, after=0, full=False)["points"]) for g in range(4)] == [
        len(g["actions"]) for g in games]
    events = view["events"]
    assert [e["e"] for e in events] == [e["e"] for e in games[0]["events"]]
    for seen, real in zip(events, games[0]["events"], strict=True):
        if real["e"] == "draw":
            assert seen["cards"] == [HIDDEN_CARD] * len(real["cards"])
        elif real["e"] == "round_start":
            assert all(set(hand) == {HIDDEN_CARD} for hand in seen["hands"]) and seen["top"] in CODES
        else:
            assert seen == real  # plays, turns and scores are public
    staff = live.live_view(match, game=1, after=5, full=True)
    assert staff["events"] == games[1]["events"][5:]


def test_a_game_that_ended_stays_live_until_the_match_s_deadline(db):
    """An ended game is never written again: its lists outlive the 10 minutes a running game's
    writes are kept for, until the match's deadline, so a spectator can go back to it."""
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=19, deals=2, enqueue=False))
    _played_live(match)
    store = live.channel()
    prefix = f"{live._key(match.pk)}:{'a' * 32}"
    for game in range(2):
        for kind in ("events", "points"):
            assert store.ttl(f"{prefix}:{game}:{kind}") > live.LIVE_TTL_SECONDS + 3000  # the deadline is 1 h away
    assert store.ttl(live._key(match.pk)) <= live.LIVE_TTL_SECONDS


def test_another_attempt_and_an_ended_match_show_nothing_live(db):
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=3, enqueue=False))
    _played_live(match)
    assert live.live_view(match, game=0, after=0, full=True)["events"]
    requeued = _running(match, token="b" * 32)
    assert live.live_view(requeued, game=0, after=0, full=True) == {
        "status": "running", "games": [], "game": 0, "after": 0, "events": [], "points": []}
    Match.objects.filter(pk=match.pk).update(status=Match.Status.DONE)
    match.refresh_from_db()
    assert live.live_view(match, game=0, after=0, full=True)["events"] == []


def test_the_publisher_writes_at_most_every_flush_interval_and_each_event_once(db):
    heads, pushed = [], []

    class Counting(human.MemoryChannel):
        def set(self, key, value, ex=None):
            heads.append(key)
            super().set(key, value, ex)

        def rpush(self, key, *values):
            pushed.append((key, values))
            super().rpush(key, *values)

    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=5, enqueue=False))
    ticks = iter(range(10_000))
    publisher = live.LivePublisher(match, store=Counting(), every=10.0, clock=lambda: float(next(ticks)))
    outcome = runner.play_sandboxed_match(Rules.from_dict(match.rules), ["greedy", "first"], seed=5, deals=1,
                                backend="inprocess", on_step=publisher)
    # the clock moves 1 a call: a write every 10 calls and at the end
    calls = next(ticks)
    assert calls > 30 and calls // 10 <= len(heads) <= calls // 10 + 2, (calls, len(heads))
    assert set(heads) == {publisher.key}
    # a write appends only what is new: every event goes to the store once, in order
    events_key = f"{publisher.key}:{'a' * 32}:0:events"
    sent = [json.loads(v) for key, values in pushed if key == events_key for v in values]
    assert sent == outcome.result.replay["games"][0]["events"]
    assert len([key for key, _ in pushed if key == events_key]) > 1  # in several writes, not one at the end
    assert json.loads(publisher.store.get(publisher.key))["games"][0]["over"] is True


def test_a_spectator_never_gets_an_event_the_head_does_not_count_yet(db):
    """The events list may be ahead of the head record (a write between a poll's two reads):
    the view sends up to the head's count, so the next poll's ``after`` neither skips nor repeats."""
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=21, enqueue=False))
    games = _played_live(match)
    store = live.channel()
    events_key = f"{live._key(match.pk)}:{'a' * 32}:0:events"
    store.rpush(events_key, json.dumps({"e": "turn", "seat": 0}))  # written, head not yet updated
    first = live.live_view(match, game=0, after=0, full=True)
    assert first["events"] == games[0]["events"]
    assert live.live_view(match, game=0, after=len(first["events"]), full=True)["events"] == []


def test_the_live_endpoint_checks_its_numbers_and_hides_cards_from_non_staff(client, db):
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=9, enqueue=False))
    _played_live(match)
    url = reverse("web:live_events", args=[match.pk])
    assert client.get(url, {"game": "x"}).status_code == 400
    assert client.get(url, {"after": "-1"}).status_code == 400
    body = client.get(url, {"game": 0, "after": 0}).json()
    drawn = [card for e in body["events"] if e["e"] == "draw" for card in e["cards"]]
    assert drawn and set(drawn) == {HIDDEN_CARD}
    staff = get_user_model().objects.create_user(username="staffer", password="correct horse battery", is_staff=True)
    client.force_login(staff)
    drawn = [card for e in client.get(url, {"game": 0}).json()["events"] if e["e"] == "draw" for card in e["cards"]]
    assert drawn and HIDDEN_CARD not in drawn


@pytest.mark.slow  # a match of several seconds watched while it plays
@pytest.mark.django_db(transaction=True)
def test_a_worker_s_match_is_live_while_it_is_played(bot, run_on_commit):
    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="sleepy.py", data=SLEEPY_COUNTER_BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    match = services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=3"]),
                                  seats=[version, "first"], seed=11, deals=2, enqueue=False)
    worker = threading.Thread(target=services.match_play, args=(match.pk,))
    worker.start()
    seen_running = []
    try:
        deadline = time.monotonic() + 60
        while worker.is_alive() and time.monotonic() < deadline:
            current = Match.objects.get(pk=match.pk)
            view = live.live_view(current, game=0, after=0, full=False)
            if current.status == Match.Status.RUNNING and view["events"]:
                seen_running.append(len(view["events"]))
            time.sleep(0.1)
    finally:
        worker.join(60)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert seen_running, "no event was seen while the match was running"
    assert seen_running[0] < sum(len(g["events"]) for g in json.loads(match_replay(match))["games"])


def match_replay(match: Match) -> str:
    from matches.selectors import match_replay_json

    return match_replay_json(match)


def test_the_embedded_default_keeps_live_events_in_its_own_process(db, settings):
    settings.REDIS_URL = ""  # the embedded default: the worker runs in the web server's process
    assert isinstance(live.channel(), human.MemoryChannel)
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=13, enqueue=False))
    games = _played_live(match)
    view = live.live_view(match, game=0, after=0, full=True)
    assert view["events"] == games[0]["events"]


def test_a_running_match_s_page_and_the_match_list_link_to_its_live_view(client, db):
    match = _running(services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                           seats=["greedy", "first"], seed=17, enqueue=False))
    live_page = reverse("matches:replay_viewer", args=[match.pk])
    assert f'href="{live_page}">Watch it live</a>' in client.get(match.get_absolute_url()).content.decode()
    assert f'href="{live_page}" title="watch it as it is played">● live</a>' in client.get(reverse("matches:list")).content.decode()
