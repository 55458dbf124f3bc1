"""The replay viewer beside each decision: its time for everyone, its prints for the bot's owner."""

from __future__ import annotations

import json

import pytest
from browser_helpers import PASSWORD, login
from django.contrib.auth import get_user_model
from django.urls import reverse
from testsupport import SLEEPY_COUNTER_BOT

from bots import services as bot_services
from bots.models import BotVersion
from engine.replay import action_points
from matches.models import Match
from matches.selectors import match_replay_json
from matches.services import match_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]



def _decisions(page) -> list[dict]:
    return page.evaluate(
        """() => [...document.querySelectorAll('#rv-decision .decision')].map(d => ({
            action: Number(d.dataset.action),
            ms: d.querySelector('.decision-time') ? Number(d.querySelector('.decision-time').dataset.ms) : null,
            log: d.querySelector('.decision-log') ? d.querySelector('.decision-log').textContent : null,
        }))"""
    )


def test_each_decision_shows_its_time_and_the_owner_sees_what_it_printed(page, phone, live_server, shot, eager_tasks):
    owner = get_user_model().objects.create_user(username="author", password=PASSWORD)
    bot = bot_services.bot_create(owner=owner, name="counter")
    version = bot_services.bot_version_create(bot=bot, filename="counter.py", data=SLEEPY_COUNTER_BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=[version, "greedy"], seed=7)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    game = json.loads(match_replay_json(match))["games"][0]
    own = [i for i, a in enumerate(game["actions"]) if game["seats"][a["seat"]] == 0]
    k = next(n for n, i in enumerate(own) if game["actions"][i]["decision"] == "play" and n > 0)
    index = own[k]
    url = live_server.url + reverse("matches:replay_viewer", args=[match.pk]) + f"#g=1&e={action_points(game['actions'])[index] + 1}"

    page.goto(url)
    page.wait_for_selector("#replay[data-state=ready]")
    shown = {d["action"]: d for d in _decisions(page)}
    assert shown[index]["ms"] >= 20.0 and shown[index]["log"] is None  # a visitor: the time, no prints

    login(page, live_server, "author")
    page.goto(url)
    page.wait_for_selector("#replay[data-state=ready]")
    shown = {d["action"]: d for d in _decisions(page)}
    assert shown[index]["ms"] >= 20.0
    assert shown[index]["log"] == f"decision {k + 1}\n"
    page.locator("#rv-decision").scroll_into_view_if_needed()
    shot(page, "decision-time-and-log")

    login(phone, live_server, "author")
    phone.goto(url)
    phone.wait_for_selector("#replay[data-state=ready]")
    assert {d["action"]: d for d in _decisions(phone)}[index]["log"] == f"decision {k + 1}\n"
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the replay page is {width} px wide on a 390 px phone"
    shot(phone, "decision-time-and-log-phone")
