"""Accessibility in a real browser: the keyboard reaches the skip link and the navigation at every
width, every page has a description, the replay viewer's controls have names.

axe-core (installed by deploy/ensure-test-tools.sh into tests/browser/node_modules, ``AXE``) checks
every kind of page at 1280 and 390 px for serious and critical violations (issue 20 point 10), and
match tables keep their seats in view on a phone (point 8).
"""

from __future__ import annotations

import pytest
from browser_helpers import AXE, PASSWORD, axe_violations, too_wide
from django.urls import reverse

from matches.models import Match
from matches.services import match_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SIMPLE_BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"

WIDTHS = [1280, 390]


def _context(browser, width: int):
    return browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 500, has_touch=width < 500)


def _focused(page) -> dict:
    return page.evaluate(
        "() => { const e = document.activeElement; return {tag: e.tagName.toLowerCase(), id: e.id,"
        " cls: e.className, text: (e.textContent || '').trim(), href: e.getAttribute('href'),"
        " label: e.labels && e.labels[0] ? e.labels[0].textContent.trim() : ''}; }"
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_tab_from_the_page_start_reaches_the_skip_link_then_the_navigation(browser, live_server, width):
    context = _context(browser, width)
    try:
        page = context.new_page()
        page.goto(live_server.url + reverse("web:guide"))
        page.keyboard.press("Tab")
        first = _focused(page)
        assert first["href"] == "#main" and "Skip to the content" in first["text"], first
        assert page.locator(".skip-link").is_visible(), "the skip link shows while it has the focus"
        page.keyboard.press("Tab")
        assert _focused(page)["cls"] == "brand"
        page.keyboard.press("Tab")
        if width <= 1000:  # the menu: a named, focusable control that opens the navigation
            toggle = _focused(page)
            assert toggle["id"] == "nav-toggle" and toggle["label"].endswith("Menu"), toggle
            assert page.locator("#site-nav").is_hidden()
            page.keyboard.press("Space")
            assert page.locator("#site-nav").is_visible()
            page.keyboard.press("Tab")
        link = _focused(page)
        assert link["tag"] == "a" and link["text"] == "Home" and page.locator("#site-nav a").first.is_visible(), link
        page.keyboard.press("Tab")
        assert _focused(page)["text"] == "Ladders"
        # the skip link moves the focus to the page's content
        page.goto(live_server.url + reverse("web:guide"))
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        assert _focused(page)["id"] == "main"
    finally:
        context.close()


def test_every_page_has_a_description(page, live_server):
    for path in ("/", reverse("web:guide"), reverse("bots:list"), reverse("accounts:login"), reverse("admin:login")):
        page.goto(live_server.url + path)
        description = page.get_attribute("meta[name=description]", "content")
        assert description and len(description) > 40, (path, description)


def test_playback_controls_have_names_and_the_slider_says_where_it_is(page, live_server, eager_tasks):
    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=["greedy", "random"], seed=5)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
    page.wait_for_selector("#replay[data-state=ready]")
    for name in ("Start", "Step back", "Play", "Step forward", "End"):
        assert page.get_by_role("button", name=name, exact=True).count() == 1, name
    slider = page.get_by_role("slider", name="Position in the game")
    page.keyboard.press("ArrowRight")
    pos = page.get_attribute("#replay", "data-pos")
    text = slider.get_attribute("aria-valuetext")
    assert text.startswith(f"event {pos} of ") and page.inner_text("#rv-event") in text


def test_a_jump_in_the_history_list_keeps_the_focus_there(page, live_server, eager_tasks):
    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=["greedy", "random"], seed=5)
    page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
    page.wait_for_selector("#replay[data-state=ready]")
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    target = page.get_attribute("#rv-history li:nth-child(3) a", "data-pos")
    page.focus("#rv-history li:nth-child(3) a")
    page.keyboard.press("Enter")
    assert page.get_attribute("#replay", "data-pos") == target
    assert page.evaluate("document.activeElement.closest('#rv-history') !== null")
    assert page.evaluate("document.activeElement.dataset.pos") == target


# --------------------------------------------------------------- every page: axe and phone tables

#: long names, as users pick them: a 390 px table must still show whose seats they are
LONG_NAMES = ("a-rather-long-bot-name-number-one", "second_bot_with_a_long_name", "third")


def _site_with_every_kind_of_page() -> dict[str, str]:
    """A small site in which every page kind has content: bots (one owner), a played 4-seat match,
    a ladder with a played ladder match, a round robin with a played round. Name -> path."""
    from django.contrib.auth import get_user_model

    from bots import services as bot_services
    from ladders.models import Ladder
    from ladders.services import ladder_enter, ladder_matchmake
    from tournaments_app.services import (
        entry_add,
        tournament_create,
        tournament_open_registration,
        tournament_start,
    )

    owner = get_user_model().objects.create_user(username="a-long-username-of-an-owner", password=PASSWORD)
    bots = []
    for name in LONG_NAMES:
        bot = bot_services.bot_create(owner=owner, name=name, description="Plays its first legal action.")
        bot_services.bot_version_create(bot=bot, filename=f"{name}.py", data=SIMPLE_BOT)
        bots.append(bot)
    for bot in bots:  # each validation played (eager tasks) and passed: say why when one did not
        version = bot.versions.get()
        assert version.status == version.Status.ACTIVE, (str(bot), version.status, version.rejection_reason)
    ladder = Ladder.objects.create(name="Heads-up classic", slug="heads-up", rules={"players": 2, "rounds": 1},
                                   seats=2, deals=1, allow_same_owner=True)
    for bot in bots[:2]:
        ladder_enter(ladder, bot)
    (ladder_match,) = ladder_matchmake(ladder)
    cup = tournament_create(name="Winter Cup", rules=["players=2", "rounds=1"], format="round_robin",
                            allow_same_owner=True)
    tournament_open_registration(cup)
    for bot in bots:
        entry_add(cup, bot)
    tournament_start(cup)
    match = match_create(kind="challenge", rules={"players": 4, "rounds": 1},
                         seats=[bots[0].versions.get(), bots[1].versions.get(), "greedy", "expert"], seed=11)
    for played in (match, ladder_match):
        played.refresh_from_db()
        assert played.status == Match.Status.DONE, played.error
    version = bots[0].versions.get()
    return {
        "home": "/", "guide": reverse("web:guide"), "bots": reverse("bots:list"),
        "bot": bots[0].get_absolute_url(), "version": version.get_absolute_url(),
        "matches": reverse("matches:list"), "queue": reverse("matches:queue"),
        "match": match.get_absolute_url(), "replay": reverse("matches:replay_viewer", args=[match.pk]),
        "ladders": reverse("ladders:list"), "ladder": ladder.get_absolute_url(),
        "ladder entry": reverse("ladders:entry", args=[ladder.slug, bots[0].pk]),
        "tournaments": reverse("tournaments:list"), "tournament": cup.get_absolute_url(),
        "login": reverse("accounts:login"), "sign up": reverse("accounts:signup"),
        "profile": reverse("accounts:profile", args=[owner.username]),
    }


@pytest.mark.parametrize("width", WIDTHS)
def test_no_page_has_a_serious_or_critical_axe_violation(browser, live_server, eager_tasks, shot, width):
    if not AXE.exists():
        pytest.fail("axe-core is not installed: run deploy/ensure-test-tools.sh (make install does)")
    pages = _site_with_every_kind_of_page()
    context = _context(browser, width)
    problems = []
    try:
        page = context.new_page()
        for name, path in pages.items():
            page.goto(live_server.url + path)
            if name == "replay":
                page.wait_for_selector("#replay[data-state=ready]")
            problems += [f"{name} ({path}) at {width} px: {line}" for line in axe_violations(page)]
            problems += [f"{name} ({path}): {line}" for line in too_wide(page, width)]
            shot(page, name.replace(" ", "-"))
    finally:
        context.close()
    assert problems == [], "\n".join(problems)


def test_match_tables_keep_the_seats_column_in_view_on_a_phone(browser, live_server, eager_tasks, shot):
    pages = _site_with_every_kind_of_page()
    context = _context(browser, 390)
    try:
        page = context.new_page()
        for name in ("matches", "ladder", "tournament", "bot"):
            page.goto(live_server.url + pages[name])
            cells = page.locator("td.seats")
            assert cells.count() > 0, f"{name}: no seats cell"
            for i in range(cells.count()):
                box = cells.nth(i).bounding_box()
                text = cells.nth(i).inner_text()
                assert box and box["width"] >= 120 and box["x"] >= 0 and box["x"] + box["width"] <= 390, (name, box)
                assert any(n in text for n in (*LONG_NAMES, "greedy", "expert")), (name, text)
            shot(page, f"seats-{name}")
    finally:
        context.close()


#: sums the page's layout shifts (Chromium's layout-shift entries) into window.__cls from the first paint
_RECORD_LAYOUT_SHIFT = """
window.__cls = 0;
window.__shifts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.hadRecentInput) continue;
    window.__cls += entry.value;
    const what = (entry.sources || []).map((s) => s.node ? (s.node.id || s.node.className || s.node.nodeName) : "?");
    window.__shifts.push(`${entry.value.toFixed(3)}: ${what.join(", ")}`);
  }
}).observe({type: "layout-shift", buffered: true});
"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("players", [2, 4])
def test_the_replay_loads_without_a_layout_shift(browser, live_server, eager_tasks, width, players):
    match = match_create(kind="challenge", rules={"players": players, "rounds": 1},
                         seats=["greedy", "random", "first", "expert"][:players], seed=5)
    context = _context(browser, width)
    try:
        page = context.new_page()
        page.add_init_script(_RECORD_LAYOUT_SHIFT)
        page.goto(live_server.url + reverse("matches:replay_viewer", args=[match.pk]))
        page.wait_for_selector("#replay[data-state=ready]")
        page.wait_for_timeout(500)  # shifts are reported after the frame that made them
        cls, shifts = page.evaluate("[window.__cls, window.__shifts]")
    finally:
        context.close()
    print(f"\nreplay of {players} seats at {width} px: cumulative layout shift {cls:.3f}")
    assert cls < 0.1, f"cumulative layout shift {cls:.3f} at {width} px (good: under 0.1): {shifts}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_organizer_s_admin_pages_have_no_serious_or_critical_axe_violation(browser, live_server, eager_tasks, shot, width):
    """The admin an organizer works in (issue 20 points 7 and 10): its index, a tournament's change
    page with its rounds, a ladder's and a match's, and the add form; and a refused page (403)."""
    from urllib.parse import urlparse

    from browser_helpers import login
    from django.contrib.auth import get_user_model

    from ladders.models import Ladder
    from tournaments_app.models import Tournament

    site = _site_with_every_kind_of_page()
    get_user_model().objects.create_superuser(username="boss", password=PASSWORD, email="boss@example.org")
    get_user_model().objects.create_user(username="visitor", password=PASSWORD, is_staff=True)
    cup = Tournament.objects.get()
    ladder = Ladder.objects.get()
    match = Match.objects.get(pk=int(urlparse(site["match"]).path.strip("/").split("/")[-1]))
    pages = {
        "admin": "/admin/", "tournament admin": f"/admin/tournaments/tournament/{cup.pk}/change/",
        "tournament add": "/admin/tournaments/tournament/add/",
        "ladder admin": f"/admin/ladders/ladder/{ladder.pk}/change/", "match admin": f"/admin/matches/match/{match.pk}/change/",
    }
    context = _context(browser, width)
    problems = []
    try:
        page = context.new_page()
        login(page, live_server, "boss")
        for name, path in pages.items():
            response = page.goto(live_server.url + path)
            assert response is not None and response.status == 200, (name, path)
            problems += [f"{name} ({path}) at {width} px: {line}" for line in axe_violations(page)]
            problems += [f"{name} ({path}): {line}" for line in too_wide(page, width)]
            shot(page, name.replace(" ", "-"))
        context.clear_cookies()
        login(page, live_server, "visitor")  # staff without permissions: the admin refuses its pages
        refused = page.goto(live_server.url + "/admin/play/humangame/")
        assert refused is not None and refused.status == 403
        assert page.locator("meta[name=description]").count() == 1
        assert page.locator("meta[name=viewport]").count() == 1
        problems += [f"403 at {width} px: {line}" for line in axe_violations(page)]
    finally:
        context.close()
    assert problems == [], "\n".join(problems)
