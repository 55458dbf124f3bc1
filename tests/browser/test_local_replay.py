"""Local replays in Chromium: the page ``arena replay view`` writes plays from disk (file://) with no
network, and the site's /replays/open/ shows a file chosen or dropped without sending it anywhere."""

from __future__ import annotations

import pytest
from django.urls import reverse

from arena_cli.main import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    """Two replays from ``arena play --replay`` (other bots in each), and the page of the first."""
    folder = tmp_path_factory.mktemp("replays")
    first, second = folder / "match.json", folder / "other.json"
    assert main(["play", "greedy", "random", "--deals", "2", "--rules", "rounds=1", "--seed", "5", "--replay", str(first)]) == 0
    assert main(["play", "expert", "first", "random", "--deals", "1", "--rules", "rounds=1", "--replay", str(second)]) == 0
    assert main(["replay", "view", str(first), "--no-browser"]) == 0
    return first, second, folder / "match.json.html"


def _requests(page) -> list[str]:
    """Every request the page makes from now on ("METHOD url"), but the site's icon, which Chromium
    fetches again whenever the address's #fragment changes."""
    seen: list[str] = []
    page.on(
        "request",
        lambda request: None if request.url.endswith("/static/core/favicon.svg") else seen.append(f"{request.method} {request.url}"),
    )
    return seen


def _seat_labels(page) -> list[str]:
    return page.eval_on_selector_all("#rv-table .seat .seat-name", "els => els.map(e => e.textContent.trim())")


def _plays(page) -> None:
    """Press play at 8x and see the position and the event counter move on."""
    start = int(page.get_attribute("#replay", "data-pos"))
    counter = page.text_content("#rv-position")
    page.select_option("#rv-speed", "8")
    page.click("#rv-play")
    page.wait_for_function(f"() => Number(document.getElementById('replay').dataset.pos) >= {start + 3}", timeout=10_000)
    assert page.text_content("#rv-position") != counter
    page.click("#rv-play")  # pause


def test_the_page_of_arena_replay_view_plays_from_disk_without_network(page, phone, replays, shot):
    _, _, html = replays
    for viewer, name in ((page, "file-1280"), (phone, "file-390")):
        seen = _requests(viewer)
        viewer.goto(html.as_uri())
        viewer.wait_for_selector("#replay[data-state=ready]")
        assert _seat_labels(viewer) == ["Seat 0 · greedy (reference)", "Seat 1 · random (reference)"]
        assert viewer.evaluate("document.getElementById('rv-game').options.length") == 2
        _plays(viewer)
        shot(viewer, name)
        assert seen == [f"GET {html.as_uri()}"], f"the page loaded more than itself: {seen}"
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"


@pytest.mark.django_db(transaction=True)
def test_the_site_opens_a_chosen_or_dropped_file_without_sending_it(page, phone, replays, live_server, shot):
    first, second, _ = replays
    url = live_server.url + reverse("web:replay_open")
    page.goto(url)
    assert page.get_attribute("#replay", "data-state") == "waiting"
    assert not page.is_visible("#rv-play")  # nothing to play yet: only the file chooser
    shot(page, "open-waiting")
    seen = _requests(page)

    page.set_input_files("#rv-file", str(first))
    page.wait_for_selector("#replay[data-state=ready]")
    assert page.get_attribute("#replay", "data-file") == "match.json"
    assert _seat_labels(page) == ["Seat 0 · greedy (reference)", "Seat 1 · random (reference)"]
    _plays(page)

    # another file, dropped on the page: a new viewer replaces the first, whose keys are gone
    dropped = page.evaluate_handle(
        """(text) => { const dt = new DataTransfer();
                       dt.items.add(new File([text], "other.json", { type: "application/json" })); return dt; }""",
        second.read_text(),
    )
    page.dispatch_event("body", "dragover", {"dataTransfer": dropped})
    page.dispatch_event("body", "drop", {"dataTransfer": dropped})
    page.wait_for_function("() => document.getElementById('replay').dataset.file === 'other.json'")
    assert _seat_labels(page)[0].startswith("Seat 0 · ") and len(_seat_labels(page)) == 3
    before = int(page.get_attribute("#replay", "data-pos"))
    expected = page.evaluate(f"window.replayViewer.timeline.nextStop({before})")
    page.keyboard.press("ArrowRight")
    assert int(page.get_attribute("#replay", "data-pos")) == expected  # one step: one listener
    shot(page, "open-dropped")
    assert seen == [], f"opening local files sent requests: {seen}"

    # a file that is not a replay: a message, and the replay shown stays
    page.set_input_files("#rv-file", files=[{"name": "notes.json", "mimeType": "application/json", "buffer": b"{nope"}])
    page.wait_for_selector("#rv-error:not([hidden])")
    assert "notes.json is not a JSON file" in page.text_content("#rv-error")
    assert page.get_attribute("#replay", "data-state") == "ready"

    phone.goto(url)
    phone.set_input_files("#rv-file", str(first))
    phone.wait_for_selector("#replay[data-state=ready]")
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the open page is {width} px wide on a 390 px phone"
    shot(phone, "open-390")
