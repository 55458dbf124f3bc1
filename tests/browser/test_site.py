"""The site in a real browser: sign up, upload, validation shown live, the replay viewer, phones.

Chromium (Debian's) through Playwright against pytest-django's live server;
matches run in-process (eager tasks) so a test needs no worker.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from browser_helpers import PASSWORD, login
from django.contrib.auth import get_user_model
from django.urls import reverse

from bots import services as bot_services
from bots.models import BotVersion
from engine.replay import action_points, state_at
from matches.models import Match
from matches.selectors import match_replay_json
from matches.services import match_create
from validation import services as validation_services
from web import guide

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SIMPLE_BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def _played(rules: dict, seats: list, seed: int = 7) -> Match:
    match = match_create(kind="challenge", rules=rules, seats=seats, seed=seed)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    return match


def _shown(page) -> dict:
    """What the viewer shows now: position, top card, hand sizes, draw pile, which hands are visible."""
    return page.evaluate(
        """() => {
        const root = document.getElementById('replay');
        const top = document.querySelector('.discard .card-top');
        const seats = [...document.querySelectorAll('.seat')];
        return {
          game: Number(root.dataset.game), pos: Number(root.dataset.pos),
          top: top ? top.dataset.card : null,
          color: document.querySelector('[data-color]').dataset.color || null,
          drawPile: Number(document.querySelector('[data-draw-pile]').dataset.drawPile),
          sizes: seats.map(s => Number(s.dataset.handSize)),
          visible: seats.map(s => s.dataset.visible === 'true'),
          faceUp: seats.map(s => [...s.querySelectorAll('.hand .card[data-card]')].map(c => c.dataset.card).sort()),
          event: document.getElementById('rv-event').textContent,
        };
    }"""
    )


def _assert_matches_engine(shown: dict, replay: dict) -> None:
    state = state_at(replay, shown["game"], shown["pos"])
    assert shown["top"] == (state["discard"][-1] if state["discard"] else None)
    assert shown["sizes"] == [len(h) for h in state["hands"]]
    assert shown["drawPile"] == state["draw_pile"]
    assert shown["color"] == state["color"]
    for seat, visible in enumerate(shown["visible"]):
        assert shown["faceUp"][seat] == (sorted(state["hands"][seat]) if visible else [])


def test_sign_up_upload_a_bot_and_see_it_validated(page, live_server, shot, tmp_path, eager_tasks):
    page.goto(live_server.url + "/")
    page.click("text=Sign up and upload a bot")
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    shot(page, "signup")
    page.click("main button[type=submit]")
    page.wait_for_load_state()
    assert get_user_model().objects.filter(username="newcomer").exists()

    page.goto(live_server.url + reverse("bots:new"))
    page.fill("input[name=name]", "starter")
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/upload/$"))
    starter = tmp_path / "starter_bot.py"
    starter.write_bytes(guide.STARTER_BOT.read_bytes())
    page.set_input_files("input[type=file]", str(starter))
    page.click("main button[type=submit]")
    page.wait_for_url(re.compile(r".*/bots/\d+/v1/$"))
    # validating pages poll and reload by themselves; on the embedded default it is already done
    page.wait_for_selector(".page-head .badge-active", timeout=90_000)
    shot(page, "validated")
    version = BotVersion.objects.get(bot__owner__username="newcomer")
    assert version.status == BotVersion.Status.ACTIVE


def test_validating_version_page_updates_without_a_reload_by_hand(page, live_server, shot, eager_tasks):
    owner = get_user_model().objects.create_user(username="waiting", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="patient")
    version = bot_services.bot_version_create(bot=bot, filename="bot.py", data=SIMPLE_BOT, validate=False)
    page.goto(live_server.url + version.get_absolute_url())
    assert page.inner_text(".page-head .badge") == "validating"
    shot(page, "validating")
    validation_services.bot_version_validate(version)  # plays at once (eager), like a worker finishing
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE
    page.wait_for_selector(".page-head .badge-active", timeout=15_000)
    shot(page, "validated-live")


def test_queue_counts_refresh_by_themselves(page, live_server):
    page.goto(live_server.url + reverse("matches:queue"))
    queued = page.locator("[data-live-key=queued]")
    assert queued.inner_text() == "0"
    match_create(kind="ladder", rules={"players": 2}, seats=["random", "first"], enqueue=False)
    page.wait_for_function("() => document.querySelector('[data-live-key=queued]').textContent === '1'", timeout=15_000)
    assert page.locator("[data-live-key='kinds.1.queued']").inner_text() == "1"


def test_replay_steps_follow_the_engine_and_a_seat_view_hides_other_hands(page, live_server, shot, eager_tasks):
    match = _played({"players": 4, "rounds": 1}, ["random", "first", "greedy", "expert"])
    replay = json.loads(match_replay_json(match))
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
    page.wait_for_selector("#replay[data-state=ready]")
    first = _shown(page)
    _assert_matches_engine(first, replay)
    assert first["pos"] > 0 and all(first["visible"])
    shot(page, "replay-start")

    seen = [first]
    for _ in range(12):
        page.keyboard.press("ArrowRight")
        seen.append(_shown(page))
        _assert_matches_engine(seen[-1], replay)
    assert len({s["pos"] for s in seen}) == len(seen), "every step moves forward"
    assert len({s["top"] for s in seen}) > 1, "the top card changes as cards are played"
    assert len({tuple(s["sizes"]) for s in seen}) > 1, "hand sizes change as cards are played and drawn"
    assert re.search(r"[Ss]eat \d \(.+\) (plays|draws)", " ".join(s["event"] for s in seen))
    page.keyboard.press("ArrowLeft")
    assert _shown(page)["pos"] == seen[-2]["pos"]
    page.click(f"#rv-history a[data-pos='{seen[-4]['pos']}']")  # "what happened" jumps back there
    assert _shown(page)["pos"] == seen[-4]["pos"] and f"e={seen[-4]['pos']}" in page.url
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")

    page.focus("#rv-view")  # as when chosen with the mouse or the keyboard
    page.select_option("#rv-view", "1")
    seat_view = _shown(page)
    _assert_matches_engine(seat_view, replay)
    assert seat_view["visible"] == [False, True, False, False]
    # after a choice in a menu the keys are the player's again, not the menu's
    page.keyboard.press("ArrowRight")
    stepped = _shown(page)
    assert stepped["pos"] > seat_view["pos"] and stepped["visible"] == [False, True, False, False]
    page.keyboard.press("ArrowLeft")
    assert _shown(page)["pos"] == seat_view["pos"]
    assert page.locator(".seat[data-seat='0'] .hand .card[data-card]").count() == 0
    shot(page, "replay-seat-view")

    url = page.url
    assert re.search(rf"#g=1&r=1&e={seat_view['pos']}&v=1$", url)
    page.goto(live_server.url + "/")
    page.goto(url)
    page.wait_for_selector("#replay[data-state=ready]")
    assert _shown(page)["pos"] == seat_view["pos"] and _shown(page)["visible"] == [False, True, False, False]

    page.keyboard.press("End")
    end = _shown(page)
    assert end["pos"] == len(replay["games"][0]["events"]) and "Game over" in page.inner_text("#rv-history")
    _assert_matches_engine(end, replay)
    page.keyboard.press("Home")
    assert _shown(page)["pos"] == 0

    page.select_option("#rv-speed", "8")
    page.click("#rv-play")
    page.wait_for_function("() => Number(document.getElementById('replay').dataset.pos) > 5", timeout=10_000)
    page.keyboard.press(" ")
    paused = _shown(page)["pos"]
    page.wait_for_timeout(400)
    assert _shown(page)["pos"] == paused, "space pauses playback"


def test_replay_page_shows_the_owner_its_bot_log(page, live_server, eager_tasks):
    owner = get_user_model().objects.create_user(username="author", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="chatty")
    data = b"def agent(o, c):\n    print('thinking about', o['top_card'])\n    return o['legal_actions'][0]\n"
    version = bot_services.bot_version_create(bot=bot, filename="chatty.py", data=data)
    version.refresh_from_db()
    match = _played({"players": 2, "rounds": 1}, [version, "random"])
    url = live_server.url + reverse("matches:replay_viewer", args=[match.pk])
    page.goto(url)
    page.wait_for_selector("#replay[data-state=ready]")
    assert page.locator("#rv-log-panel").is_hidden()
    login(page, live_server, "author")
    page.goto(url)
    page.wait_for_selector("#replay[data-state=ready]")
    assert "thinking about" in page.inner_text("#rv-log")


def test_replay_of_a_500_point_four_seat_game_is_interactive_within_a_second(page, live_server, shot, eager_tasks):
    match = _played({"players": 4, "scoring": "winner", "target": 500}, ["expert", "greedy", "greedy", "expert"], 11)
    replay = json.loads(match_replay_json(match))
    events = len(replay["games"][0]["events"])
    size = len(match_replay_json(match))
    url = live_server.url + reverse("matches:replay_viewer", args=[match.pk])
    timings = []
    for _ in range(3):  # the first load also compiles the modules; report every run
        page.goto(url)
        page.wait_for_selector("#replay[data-state=ready]")
        ready_ms = page.evaluate("performance.getEntriesByName('replay-ready')[0].startTime")
        started = time.perf_counter()
        page.keyboard.press("End")
        page.wait_for_function(f"() => document.getElementById('replay').dataset.pos === '{events}'")
        end_ms = (time.perf_counter() - started) * 1000
        timings.append((ready_ms, end_ms))
    shot(page, "replay-500-points")
    rounds = replay["games"][0]["rounds"]
    print(f"\nreplay viewer: 500-point 4-seat game, {rounds} rounds, {events} events, {size / 1024:.0f} KiB JSON;"
          f" navigation start -> ready (ms): {[round(r) for r, _ in timings]};"
          f" End key -> last event shown (ms): {[round(e) for _, e in timings]}")
    assert max(scores for scores in replay["games"][0]["scores"]) >= 500
    # best of three: the machine running the tests may be busy with other work
    assert min(r for r, _ in timings) < 1000, f"ready after {timings} ms"


@pytest.mark.parametrize("path", ["/", "/guide/", "/bots/", "/matches/", "/matches/queue/", "match", "replay"])
def test_pages_fit_a_phone(phone, live_server, shot, path, eager_tasks):
    pages_of_a_match = {"match": "matches:detail", "replay": "matches:replay_viewer"}
    if path in pages_of_a_match:
        match = _played({"players": 4, "rounds": 1}, ["random", "first", "greedy", "expert"])
        path = reverse(pages_of_a_match[path], args=[match.pk])
    phone.goto(live_server.url + path)
    if "replay" in path:
        phone.wait_for_selector("#replay[data-state=ready]")
    width = phone.evaluate("document.documentElement.scrollWidth")
    shot(phone, "phone")
    assert width <= 390, f"{path} is {width}px wide on a 390px phone"
    assert phone.locator(".nav-toggle-label").is_visible()


def _ladder_with_an_entry() -> str:
    from ladders.models import Ladder
    from ladders.services import ladder_enter

    ladder = Ladder.objects.create(name="Heads-up classic", slug="heads-up", rules={"players": 2}, seats=2)
    owner = get_user_model().objects.create_user(username="laddered", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="climber")
    bot_services.bot_version_create(bot=bot, filename="climber.py", data=SIMPLE_BOT)
    ladder_enter(ladder, bot)
    return ladder.get_absolute_url()


def _open_tournament() -> str:
    from tournaments_app.services import tournament_create, tournament_open_registration

    cup = tournament_create(name="Winter Cup", rules=["players=2", "rounds=1"], format="round_robin")
    tournament_open_registration(cup)
    return cup.get_absolute_url()


@pytest.mark.parametrize("app", ["ladders", "tournaments"])
def test_ladder_and_tournament_pages_use_the_site_layout(page, live_server, shot, app, eager_tasks):
    url = reverse(f"{app}:list")
    detail = _ladder_with_an_entry() if app == "ladders" else _open_tournament()
    for name, path in (("list", url), ("detail", detail)):
        page.goto(live_server.url + path)
        assert page.locator("header.topbar nav").is_visible()
        assert page.locator(f"nav a[href='{url}']").get_attribute("class") == "active"
        assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") == "rgb(29, 35, 48)"
        shot(page, f"{app}-{name}")
    assert ("climber" if app == "ladders" else "Winter Cup") in page.inner_text("main")


def test_hostile_names_and_fault_reasons_are_shown_as_text(page, live_server, eager_tasks):
    owner = get_user_model().objects.create_user(username="mallory", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name='<img src=x id=injected onerror="window.pwned=1">')
    data = (b"n = 0\ndef agent(o, c):\n    global n\n    n += 1\n"
            b"    if n == 2:\n        return {'type': '<img src=x id=injected2 onerror=\"window.pwned=2\">'}\n"
            b"    return o['legal_actions'][0]\n")
    version = bot_services.bot_version_create(bot=bot, filename="evil.py", data=data, validate=False)
    match = _played({"players": 2, "rounds": 1}, [version, "random"])
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
    page.wait_for_selector("#replay[data-state=ready]")
    actions = json.loads(match_replay_json(match))["games"][0]["actions"]
    fault_at = next(at for a, at in zip(actions, action_points(actions), strict=True) if "fault" in a)
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]) + f"#g=1&e={fault_at + 1}")
    page.wait_for_selector("#replay[data-state=ready]")
    page.wait_for_function(f"() => document.getElementById('replay').dataset.pos === '{fault_at + 1}'")
    assert "fault (illegal)" in page.inner_text("#rv-history") or "fault illegal" in page.inner_text("#rv-decision")
    assert "<img src=x" in page.inner_text(".seat[data-seat='0'] .seat-name")
    assert page.locator("#injected, #injected2").count() == 0
    assert page.evaluate("window.pwned === undefined")


def test_replay_page_of_a_waiting_match_shows_the_replay_once_it_is_played(page, live_server):
    from matches.services import match_play

    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=["greedy", "random"], enqueue=False)
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
    assert "waiting for a worker" in page.inner_text("main")
    assert match_play(match.pk) is True  # what a worker does
    page.wait_for_selector("#replay[data-state=ready]", timeout=15_000)
