"""Play a bot in a real browser (issue 20 point 2), end to end at 1280 and 390 px: a signed-in
person opens a public bot's page, starts a game from "Play against it", and plays it by clicking
cards and buttons while a real Celery worker of the ``play`` queue plays the bot in the sandbox;
leaving the page and coming back resumes the decision asked; the finished game shows its result
and opens its replay."""

from __future__ import annotations

import time

import pytest
from browser_helpers import PASSWORD, axe_violations, login, watched
from django.contrib.auth import get_user_model

from bots import services as bot_services
from bots.models import BotVersion
from ladders.models import Ladder
from matches.models import Match

pytestmark = [pytest.mark.slow, pytest.mark.docker]

BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def _public_bot():
    from celery import current_app

    owner = get_user_model().objects.create_user(username="botsmith", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="firstly", source_public=True)
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True  # its validation in-process; the game goes to the worker
    try:
        version = bot_services.bot_version_create(bot=bot, filename="firstly.py", data=BOT)
    finally:
        current_app.conf.task_always_eager = eager
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    return bot


def _state(page) -> tuple[str, str]:
    return page.get_attribute("#play", "data-state") or "", page.get_attribute("#play", "data-seq") or ""


@pytest.mark.parametrize(("width", "seats"), [(1280, 2), (390, 2), (1280, 4), (390, 3)])
def test_a_person_plays_a_public_bot_in_the_browser_to_the_end(browser, live_server, celery_worker_factory, shot, width, seats):
    worker = celery_worker_factory(queues="play")
    Ladder.objects.create(name="Casual", slug="casual", rules={"players": 2, "rounds": 1}, seats=2)
    bot = _public_bot()
    get_user_model().objects.create_user(username="carol", password=PASSWORD)
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 500, has_touch=width < 500)
    page = watched(context)
    try:
        login(page, live_server, "carol")
        page.goto(live_server.url + bot.get_absolute_url())
        page.click("text=Play against it")
        assert page.locator("#play-opponent1").input_value() == f"bot:{bot.pk}"
        page.wait_for_selector("#play-opponent2", state="hidden", timeout=5_000)  # two seats: one bot
        if seats > 2:
            page.select_option("#play-seats", str(seats))
            page.wait_for_selector(f"#play-opponent{seats - 1}", state="visible", timeout=5_000)
            for other in range(2, seats):
                page.select_option(f"#play-opponent{other}", f"bot:{bot.pk}" if other % 2 else "ref:greedy")
        page.fill("#play-clock", "60")
        problems = [f"form: {line}" for line in axe_violations(page)]
        shot(page, "form")
        page.click("button:has-text('Start the game')")
        page.wait_for_url("**/play/*/")
        match = Match.objects.get(kind=Match.Kind.HUMAN)
        assert match.seats.count() == seats
        try:
            page.wait_for_selector("#play[data-state=asked]", timeout=60_000)
        except Exception:
            raise AssertionError(f"never asked; page: {page.inner_text('main')[:500]}\nworker:\n{worker.log[-3000:]}") from None
        assert page.locator("#play-clock").is_visible() and int(page.inner_text("#play-seconds")) > 50
        page.wait_for_selector("#replay[data-live=true]", timeout=10_000)  # the table follows the game
        # the person is not staff: every hand of the table is face down while it is played, and it says so
        assert "hands hidden" in (page.locator("#rv-view option[value=full]").text_content() or "")
        actions = page.locator("#play-actions button")
        assert actions.count() >= 1
        box = actions.first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width  # reachable at this width
        problems += [f"asked: {line}" for line in axe_violations(page)]
        shot(page, "asked")
        # leave and come back: the same decision is waiting
        _, seq = _state(page)
        page.goto(live_server.url + "/")
        page.goto(live_server.url + f"/play/{match.pk}/")
        page.wait_for_selector("#play[data-state=asked]", timeout=20_000)
        assert _state(page)[1] == seq
        clicked_card = False
        deadline = time.monotonic() + 240
        decisions = 0
        while time.monotonic() < deadline:
            state, seq = _state(page)
            if state == "over":
                break
            if state != "asked":
                page.wait_for_timeout(50)
                continue
            card = page.locator("#play-hand button.card-button[data-index]")
            if not clicked_card and card.count():
                card.first.click()  # a playable card of the hand is itself the button
                clicked_card = True
            else:
                page.locator("#play-actions button").first.click()
            decisions += 1
            page.wait_for_function(
                "(seq) => { const p = document.getElementById('play'); return !p || p.dataset.seq !== seq || p.dataset.state === 'over'; }",
                arg=seq, timeout=30_000,
            )
        page.wait_for_selector("#play[data-state=over]", timeout=30_000)
        assert decisions > 1
        match.refresh_from_db()
        assert match.status == Match.Status.DONE, (match.status, match.error)
        person = match.seats.get(seat=0)
        assert person.player.username == "carol" and not person.forfeited and person.strikes == 0
        result = page.inner_text("#play-result")
        assert "carol (you)" in result and "firstly" in result
        assert page.inner_text("#play-message").startswith(("You won", "You finished"))
        problems += [f"over: {line}" for line in axe_violations(page)]
        assert problems == [], "\n".join(problems)  # axe-core: no serious or critical violation
        shot(page, "over")
        page.click("#play-result a:has-text('Watch the replay')")
        page.wait_for_selector("#replay[data-state=ready]", timeout=20_000)
        assert "carol" in page.inner_text("#replay")
        assert page.locator("#rv-view option[value=full]").text_content() == "Full view (every hand)"  # ended: all shown
        assert not page.js_errors, page.js_errors
        assert not page.csp_violations, page.csp_violations
    finally:
        context.close()
