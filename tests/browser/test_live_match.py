"""A match watched live in a real browser (issue 20 point 1): events arrive in the page while the
match is played by the worker's path (services.match_play on a thread of this process, the live
store Redis when REDIS_URL is set), hands face down for a visitor, and the page turns into the
replay when the match ends."""

from __future__ import annotations

import threading
import time

import pytest
from browser_helpers import PASSWORD
from django.contrib.auth import get_user_model
from django.urls import reverse

from bots import services as bot_services
from bots.models import BotVersion
from engine.rules import Rules
from matches import services
from matches.models import Match

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

#: thinks 150 ms a decision in a game of 3 rounds (this test's match: long enough to be watched),
#: at once otherwise (its validation game is quick)
SLOW_BOT = b"""import time


def agent(observation, configuration):
    if configuration["rules"].get("rounds") == 3:
        time.sleep(0.15)
    return observation["legal_actions"][0]
"""


#: what the page shows now, read at one moment (the page reloads into the replay at the match's end)
SNAPSHOT = """() => {
  const root = document.getElementById("replay");
  return {live: root !== null && root.dataset.live === "true", events: Number(root && root.dataset.liveEvents || 0),
          face_up: document.querySelectorAll(".hand .card[data-card]").length,
          backs: document.querySelectorAll(".hand .card-back").length};
}"""


def _slow_version(eager_tasks) -> BotVersion:
    owner = get_user_model().objects.create_user(username="patient", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="slowpoke")
    version = bot_services.bot_version_create(bot=bot, filename="slowpoke.py", data=SLOW_BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    return version


@pytest.mark.parametrize("width", [1280, 390])
def test_a_running_match_is_watched_live_then_becomes_its_replay(browser, live_server, eager_tasks, shot, width):
    version = _slow_version(eager_tasks)
    match = services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=3"]),
                                  seats=[version, "greedy"], seed=4, deals=1, enqueue=False)
    worker = threading.Thread(target=services.match_play, args=(match.pk,), daemon=True)
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 500)
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
        assert "waiting for a worker" in page.inner_text("main")  # queued: the page waits
        worker.start()
        try:
            page.wait_for_selector("#replay[data-live=true]", timeout=30_000)  # reloaded when it started
        except Exception:
            raise AssertionError(f"not live; page errors {errors}, shown: {page.inner_text('main')[:300]}") from None
        first = int(page.get_attribute("#replay", "data-live-events"))
        assert Match.objects.get(pk=match.pk).status == Match.Status.RUNNING
        deadline = time.monotonic() + 20  # polled from here: the page's CSP forbids evaluated strings
        while True:
            seen = page.evaluate(SNAPSHOT)
            if not seen["live"] or seen["events"] > first or time.monotonic() > deadline:
                break
            page.wait_for_timeout(100)
        assert seen["live"], "the match ended before a second batch of events arrived"
        more = seen["events"]
        # a visitor sees no card of any hand while the match runs
        assert seen["face_up"] == 0 and seen["backs"] > 0, seen
        assert "live" in page.inner_text(".live-banner")
        shot(page, "live")
        # back and forth within what has been played
        page.keyboard.press("Home")
        assert page.get_attribute("#replay", "data-pos") == "0"
        worker.join(60)
        assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
        page.wait_for_selector("#replay[data-state=ready]:not([data-live])", timeout=20_000)  # the replay now
        page.keyboard.press("Home")
        page.keyboard.press("ArrowRight")  # just after the first deal: every hand face up
        assert page.locator(".hand .card[data-card]").count() > 0
        assert errors == []
        assert first < more
    finally:
        context.close()
        if worker.is_alive():
            worker.join(60)


@pytest.mark.parametrize("page_of", ["home", "bot"])
def test_pages_update_their_tables_without_a_reload_while_a_match_is_in_play(page, live_server, eager_tasks, page_of):
    version = _slow_version(eager_tasks)
    match = services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                  seats=[version, "greedy"], seed=4, enqueue=False)
    url = "/" if page_of == "home" else version.bot.get_absolute_url()
    page.goto(live_server.url + url)
    row = page.locator(f"[data-live-region] tr:has(a[href='/matches/{match.pk}/'])")
    assert row.locator(".badge").inner_text() == "queued"
    page.evaluate("() => { window.notReloaded = true; }")
    services.match_play(match.pk)  # played while the page is open
    deadline = time.monotonic() + 20
    while row.locator(".badge").inner_text() != "done" and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert row.locator(".badge").inner_text() == "done"
    assert page.evaluate("() => window.notReloaded === true"), "the page was reloaded"
    # nothing is in play any more: the regions stop being live
    page.wait_for_timeout(6000)
    assert page.locator("[data-live-region][data-live-active]").count() == 0


@pytest.mark.parametrize("page_of", ["home", "ladder"])
def test_a_page_opened_while_nothing_runs_picks_up_what_starts_without_a_reload(page, live_server, eager_tasks, page_of):
    """A page whose tables were not live when it loaded (the site idle, a ladder between two
    matchmaking passes) watches the queue and follows the matches that start (issue 20 point 1)."""
    from ladders.models import Ladder
    from ladders.services import ladder_enter, ladder_matchmake

    version = _slow_version(eager_tasks)
    other = bot_services.bot_create(owner=get_user_model().objects.create_user(username="second", password=PASSWORD),
                                    name="second")
    bot_services.bot_version_create(bot=other, filename="second.py", data=SLOW_BOT)
    ladder = Ladder.objects.create(name="Idle ladder", slug="idle", rules={"players": 2, "rounds": 1}, seats=2, deals=1,
                                   duplicate=False)
    for bot in (version.bot, other):
        ladder_enter(ladder, bot)
    page.goto(live_server.url + ("/" if page_of == "home" else ladder.get_absolute_url()))
    assert page.locator("[data-live-region][data-live-active]").count() == 0  # nothing in play yet
    page.evaluate("() => { window.notReloaded = true; }")
    seen_requests = []
    page.on("request", lambda r: seen_requests.append(r.url))
    if page_of == "home":
        matches = [services.match_create(kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
                                         seats=[version, "greedy"], seed=5, enqueue=False)]
    else:
        from celery import current_app

        current_app.conf.task_always_eager = False  # queued, not played inside matchmaking
        try:
            matches = ladder_matchmake(ladder)
        finally:
            current_app.conf.task_always_eager = True
    assert matches
    row = page.locator(f"[data-live-region] tr:has(a[href='/matches/{matches[0].pk}/'])")
    deadline = time.monotonic() + 45  # the queue is watched every 15 s
    while row.count() == 0 and time.monotonic() < deadline:
        page.wait_for_timeout(250)
    assert row.count() == 1, f"the new match never appeared; requests {seen_requests[-8:]}"
    for match in matches:
        services.match_play(match.pk)
    deadline = time.monotonic() + 20
    while row.locator(".badge").inner_text() != "done" and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert row.locator(".badge").inner_text() == "done"
    assert page.evaluate("() => window.notReloaded === true"), "the page was reloaded"
