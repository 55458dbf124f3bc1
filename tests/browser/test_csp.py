"""The Content-Security-Policy in a real browser: every kind of page passes it, the replay viewer plays.

The policy (arena.settings.CONTENT_SECURITY_POLICY, django-csp) allows scripts,
styles and connections only from the site and no inline script or style. The
``page`` and ``phone`` fixtures fail a test on any violation Chromium reports
(the ``securitypolicyviolation`` event or its console error); here every page
kind is visited, anonymous, as a bot's owner and as a superuser in the admin.
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import PASSWORD, login
from django.contrib.auth import get_user_model
from django.urls import reverse

from bots import services as bot_services
from bots.models import BotVersion
from matches.models import Match
from matches.services import match_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
    "base-uri": "'self'",
}


def _directives(header: str) -> dict[str, str]:
    return {name: value.strip() for name, _, value in (part.strip().partition(" ") for part in header.split(";")) if name}


def _world():
    """A finished match of an owner's bot, a ladder it is on, a running tournament: one of each page."""
    from ladders.models import Ladder
    from ladders.services import ladder_enter

    owner = get_user_model().objects.create_user(username="owner", password=PASSWORD)
    get_user_model().objects.create_superuser(username="root", password=PASSWORD, email="root@example.org")
    bot = bot_services.bot_create(owner=owner, name="plain", description="plays the first legal action")
    version = bot_services.bot_version_create(bot=bot, filename="plain.py", data=BOT)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    match = match_create(kind="challenge", rules={"players": 3, "rounds": 1}, seats=[version, "random", "greedy"], seed=3)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    ladder = Ladder.objects.create(name="Heads-up", slug="heads-up", rules={"players": 2}, seats=2)
    ladder_enter(ladder, bot)
    cup = _running_cup(owner, bot)
    return {"owner": owner, "bot": bot, "version": version, "match": match, "ladder": ladder, "cup": cup}


def _running_cup(owner, *bots):
    """A round robin shown as running, two of its three matches done (so its bar is partly filled)."""
    from tournaments_app import services as tournament_services
    from tournaments_app.models import Table, Tournament

    bots = list(bots)
    while len(bots) < 3:
        extra = bot_services.bot_create(owner=owner, name=f"entrant{len(bots)}")
        version = bot_services.bot_version_create(bot=extra, filename="e.py", data=BOT + f"# {len(bots)}\n".encode(), validate=False)
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
        bots.append(extra)
    cup = tournament_services.tournament_create(
        name="Winter Cup", rules=["players=2", "rounds=1"], format="round_robin",
        allow_same_owner=True,  # every entrant here has one owner
    )
    for entrant in bots:
        tournament_services.entry_add(cup, entrant)
    cup = tournament_services.tournament_start(cup)  # tasks run in-process: it plays to the end
    # shown as running (its page loads the live progress script) with one match to go
    Tournament.objects.filter(pk=cup.pk).update(status=Tournament.Status.RUNNING)
    Table.objects.filter(pk=Table.objects.filter(round__tournament=cup, bye=False).order_by("-pk")[0].pk).update(done=False)
    cup.refresh_from_db()
    return cup


def _visit(page, url: str, ready: str | None = None) -> dict[str, str]:
    response = page.goto(url)
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle")
    if ready:
        page.wait_for_selector(ready)
    return _directives(response.headers.get("content-security-policy", ""))


def test_every_kind_of_page_sends_the_policy_and_passes_it(page, live_server, eager_tasks):
    w = _world()
    base = live_server.url
    replay = reverse("matches:replay_viewer", args=[w["match"].pk])
    anonymous = [
        ("home", "/", None),
        ("ladders", reverse("ladders:list"), None),
        ("a ladder", w["ladder"].get_absolute_url(), None),
        ("a ladder entry", reverse("ladders:entry", args=[w["ladder"].slug, w["bot"].pk]), None),
        ("bots", reverse("bots:list"), None),
        ("a bot", w["bot"].get_absolute_url(), None),
        ("a version", w["version"].get_absolute_url(), None),
        ("matches", reverse("matches:list"), None),
        ("queue", reverse("matches:queue"), None),
        ("a match", w["match"].get_absolute_url(), None),
        ("the replay viewer", replay, "#replay[data-state=ready]"),
        ("tournaments", reverse("tournaments:list"), None),
        ("a tournament", w["cup"].get_absolute_url(), "[data-progress]"),
        ("guide", reverse("web:guide"), None),
        ("sign up", reverse("accounts:signup"), None),
        ("log in", reverse("accounts:login"), None),
        ("API docs", reverse("api:docs"), "#swagger-ui .info"),
        ("browsable API list", "/api/matches/", "#content"),
        ("browsable API item", f"/api/matches/{w['match'].pk}/", "#content"),
        ("admin login", reverse("admin:login"), None),
    ]
    owner_pages = [
        ("profile", reverse("accounts:profile", args=["owner"]), None),
        ("new bot", reverse("bots:new"), None),
        ("upload", reverse("bots:upload", args=[w["bot"].pk]), None),
        ("edit bot", reverse("bots:edit", args=[w["bot"].pk]), None),
        ("password change", reverse("accounts:password_change"), None),
        ("browsable API with a form", "/api/bots/", "form"),
    ]
    admin_pages = [
        ("admin index", reverse("admin:index"), None),
        ("admin bot list", reverse("admin:bots_bot_changelist"), None),
        ("admin bot change", reverse("admin:bots_bot_change", args=[w["bot"].pk]), None),
        ("admin match change", reverse("admin:matches_match_change", args=[w["match"].pk]), None),
        ("admin tournament list", reverse("admin:tournaments_tournament_changelist"), ".admin-progress progress"),
        ("admin tournament change", reverse("admin:tournaments_tournament_change", args=[w["cup"].pk]), "form.tournament-action"),
        ("admin user change", reverse("admin:auth_user_change", args=[w["owner"].pk]), None),
    ]
    seen: dict[str, list[str]] = {}

    def check(pages):
        for name, path, ready in pages:
            before = len(page.csp_violations)
            policy = _visit(page, base + path, ready)
            assert policy == POLICY, f"{name}: {policy}"
            seen[name] = page.csp_violations[before:]

    check(anonymous)
    # the tournament page's script (tournaments/progress.js) polls progress and updates the page in place
    from tournaments_app.models import Tournament

    page.goto(base + w["cup"].get_absolute_url())
    assert page.inner_text("[data-status]") == "running"
    Tournament.objects.filter(pk=w["cup"].pk).update(status=Tournament.Status.PAUSED)
    page.wait_for_function("() => document.querySelector('[data-status]').textContent === 'paused'", timeout=20_000)
    assert page.evaluate("document.querySelector('[data-progress] progress').value") == 67  # 2 of 3
    Tournament.objects.filter(pk=w["cup"].pk).update(status=Tournament.Status.RUNNING)
    login(page, live_server, "owner")
    check(owner_pages)
    page.goto(base + reverse("admin:login") + "?next=/admin/")
    page.fill("input[name=username]", "root")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(r".*/admin/$"))
    check(admin_pages)
    assert page.locator("#toggle-nav-sidebar, .theme-toggle").count() > 0, "the admin's own scripts ran"
    # the tournament's cancel asks first: its own page with a public reason and a tick (admin/tournaments/confirm.html)
    page.goto(base + reverse("admin:tournaments_tournament_change", args=[w["cup"].pk]))
    page.click("a:has-text('Cancel tournament')")
    page.wait_for_url(re.compile(r".*/confirm/cancel/\d+/$"))
    assert page.locator("textarea[name=reason]").count() == 1 and page.locator("input[name=confirm]").count() == 1
    w["cup"].refresh_from_db()
    assert w["cup"].status == "running", "opening the question cancels nothing"
    page.goto(base + reverse("admin:tournaments_tournament_change", args=[w["cup"].pk]))
    assert page.evaluate("getComputedStyle(document.querySelector('form.tournament-action button')).borderRadius") == "15px"
    broken = {name: found for name, found in seen.items() if found}
    assert not broken, f"pages with CSP violations: {broken}"
    page.csp_violations.clear()  # reported above, page by page


def test_inline_script_is_refused_so_the_policy_is_really_enforced(page, live_server):
    """The watcher sees a violation when there is one: an injected inline script does not run."""
    page.goto(live_server.url + "/")
    page.evaluate("""() => { const s = document.createElement('script'); s.textContent = 'window.ran = 1'; document.body.append(s); }""")
    assert page.evaluate("window.ran === undefined")
    page.wait_for_timeout(200)
    assert any("script-src" in v for v in page.csp_violations), page.csp_violations
    page.csp_violations.clear()


@pytest.mark.parametrize("width", [1280, 390])
def test_home_and_the_replay_viewer_keep_their_styles_and_the_viewer_plays(browser, live_server, shot, width, eager_tasks):
    from browser_helpers import watched

    match = match_create(kind="challenge", rules={"players": 4, "rounds": 1}, seats=["random", "first", "greedy", "expert"], seed=7)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    cup = _running_cup(get_user_model().objects.create_user(username="owner", password=PASSWORD))
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 500)
    try:
        page = watched(context)
        page.goto(live_server.url + "/")
        assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") == "rgb(29, 35, 48)"
        bar = page.locator(".card-list progress.progress")
        assert bar.get_attribute("value") == "67"
        assert bar.evaluate("b => getComputedStyle(b).borderRadius") == "999px" and bar.bounding_box()["height"] > 8
        shot(page, "home")
        page.goto(live_server.url + cup.get_absolute_url())
        shot(page, "tournament")
        page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
        page.wait_for_selector("#replay[data-state=ready]")
        # the viewer's own stylesheet applied: cards are drawn boxes, not bare text
        card = page.locator(".discard .card-top")
        assert card.evaluate("c => getComputedStyle(c).borderRadius") != "0px"
        start = int(page.get_attribute("#replay", "data-pos"))
        page.select_option("#rv-speed", "8")
        page.click("#rv-play")
        page.wait_for_function(f"() => Number(document.getElementById('replay').dataset.pos) > {start + 3}", timeout=10_000)
        page.click("#rv-play")
        shot(page, "replay")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert not page.js_errors, page.js_errors
        assert not page.csp_violations, page.csp_violations
    finally:
        context.close()
