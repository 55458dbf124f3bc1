"""Pages render with their key content, and private things stay private."""

from __future__ import annotations

import gzip
import html
import json
import re

import pytest
from core.services import worker_heartbeat_record
from django.urls import reverse
from platform_helpers import make_user

from bots import services as bot_services
from engine.rules import Rules
from matches import services as match_services
from matches import tasks
from matches.models import Match

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("process_sandbox")]


@pytest.fixture
def played_match(validated_version):
    match = match_services.match_create(
        kind="challenge", rules=Rules.parse(["players=2", "rounds=1"]),
        seats=[validated_version, "greedy"], seed=3, enqueue=False,
    )
    tasks.match_play.apply(args=[match.pk])
    match.refresh_from_db()
    assert match.status == Match.Status.DONE
    return match


def get(client, name: str, *args, user=None, status: int = 200):
    if user is not None:
        client.force_login(user)
    response = client.get(reverse(name, args=args))
    assert response.status_code == status, (name, response.status_code)
    return response


# --- accounts

def test_signup_creates_the_account_and_logs_in(client):
    response = client.post(
        reverse("accounts:signup"),
        {"username": "carol", "password1": "a long enough secret 42", "password2": "a long enough secret 42"},
    )
    assert response.status_code == 302 and response["Location"] == reverse("bots:new")
    assert get(client, "home").context["user"].username == "carol"


def test_login_and_logout_by_post(client, alice):
    response = client.post(reverse("accounts:login"), {"username": "alice", "password": "correct horse battery"})
    assert response.status_code == 302
    assert client.get(reverse("home")).context["user"].is_authenticated
    assert client.post(reverse("accounts:logout")).status_code == 302
    assert not client.get(reverse("home")).context["user"].is_authenticated


def test_password_change_takes_the_old_password_and_sets_the_new(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("accounts:password_change"),
        {"old_password": "correct horse battery", "new_password1": "another fine secret 7",
         "new_password2": "another fine secret 7"},
    )
    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password("another fine secret 7")
    get(client, "accounts:password_change_done")


def test_auth_pages_render(client):
    assert b"Log in" in get(client, "accounts:login").content
    assert b"Create account" in get(client, "accounts:signup").content


def test_profile_lists_the_users_bots(client, bot, bob):
    content = get(client, "accounts:profile", "alice", user=bob).content.decode()
    assert "alpha" in content and "first bot" in content
    assert "You have no bots yet." in get(client, "accounts:profile", "bob").content.decode()


# --- bots

def test_bot_list_has_an_empty_state(client, db):
    assert "No bots yet." in get(client, "bots:list").content.decode()


def test_bot_page_shows_versions_status_and_matches(client, bot, validated_version, played_match):
    content = get(client, "bots:detail", bot.pk, user=bot.owner).content.decode()
    assert "v1" in content and "badge-active" in content
    assert validated_version.sha256[:12] in content
    assert f"#{played_match.pk}" in content
    assert "Upload a new version" in content


def test_bot_and_version_pages_show_match_numbers_on_every_database(client, bot, validated_version, played_match):
    # PostgreSQL and the embedded default's SQLite (`make demo`, `make check`) run the same SQL
    bot_page = get(client, "bots:detail", bot.pk).content.decode()
    version_page = get(client, "bots:version", bot.pk, validated_version.number).content.decode()
    assert "SQLite" not in bot_page + version_page
    for heading in ("Results by seat count", "Results by opponent", "Faults and timeouts", "Decision times"):
        assert heading in version_page
    # the played match, its seat's decision times written by the worker: counted on both pages
    assert 'data-label="Matches">1</td>' in version_page and "Over 1 match:" in version_page
    assert f'<a href="{validated_version.get_absolute_url()}#results"' in bot_page


def test_bot_page_shows_a_rejection_reason_to_everyone_but_the_log_only_to_the_owner(
    client, bot, bob, run_on_commit
):
    from platform_helpers import CRASHING_BOT

    with run_on_commit():
        version = bot_services.bot_version_create(bot=bot, filename="crash.py", data=CRASHING_BOT)
    version.refresh_from_db()
    assert "ZeroDivisionError" in get(client, "bots:detail", bot.pk, user=bob).content.decode()
    as_bob = get(client, "bots:version", bot.pk, version.number).content.decode()
    assert "ZeroDivisionError" in as_bob and "decision 2" not in as_bob
    as_owner = get(client, "bots:version", bot.pk, version.number, user=bot.owner).content.decode()
    assert "Validation log" in as_owner and "decision 2" in as_owner


def test_a_new_bot_form_creates_the_bot(client, alice):
    client.force_login(alice)
    response = client.post(reverse("bots:new"), {"name": "beta", "description": "d", "source_public": "on"})
    assert response.status_code == 302
    assert alice.bots.get(name="beta").source_public is True


def test_the_owner_pins_a_version_through_the_page(client, bot, validated_version):
    client.force_login(bot.owner)
    client.post(reverse("bots:pin", args=[bot.pk]), {"version": "1"})
    bot.refresh_from_db()
    assert bot.pinned_version == validated_version


def test_others_cannot_pin_or_edit_a_bot(client, bot, bob, validated_version):
    client.force_login(bob)
    assert client.post(reverse("bots:pin", args=[bot.pk]), {"version": "1"}).status_code == 404
    assert client.get(reverse("bots:edit", args=[bot.pk])).status_code == 404
    bot.refresh_from_db()
    assert bot.pinned_version is None


# --- source privacy

def test_private_source_is_only_for_the_owner_and_staff(client, bot, bob, staff, validated_version):
    url = reverse("bots:source", args=[bot.pk, 1])
    assert client.get(url).status_code == 404
    client.force_login(bob)
    assert client.get(url).status_code == 404
    assert b"source private" in client.get(reverse("bots:version", args=[bot.pk, 1])).content
    client.force_login(staff)
    assert client.get(url).content == bytes(validated_version.source)
    client.force_login(bot.owner)
    assert client.get(url).content == bytes(validated_version.source)


def test_public_source_is_for_everyone(client, bot, validated_version):
    bot_services.bot_update(bot, description="", source_public=True)
    response = client.get(reverse("bots:source", args=[bot.pk, 1]))
    assert response.status_code == 200
    assert response.content == bytes(validated_version.source)
    assert response["X-Content-Type-Options"] == "nosniff"


# --- matches

def test_match_page_shows_seats_results_and_the_replay_link(client, played_match):
    content = get(client, "matches:detail", played_match.pk).content.decode()
    assert "alice/alpha v1" in content and "greedy" in content
    assert reverse("matches:replay", args=[played_match.pk]) in content
    assert "done" in content


def test_replay_download_is_the_stored_json(client, played_match):
    response = get(client, "matches:replay", played_match.pk)
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == json.loads(gzip.decompress(bytes(played_match.replay_gz)))


def test_a_queued_match_has_no_replay(client, validated_version):
    match = match_services.match_create(
        kind="challenge", rules=Rules(players=2), seats=[validated_version, "random"], enqueue=False
    )
    assert "Waiting for a worker" in get(client, "matches:detail", match.pk).content.decode()
    get(client, "matches:replay", match.pk, status=404)


def test_seat_logs_are_only_for_the_bots_owner_and_staff(client, played_match, bob, staff):
    seat = played_match.seats.get(seat=0)
    assert "plays" in seat.log
    url = reverse("matches:log", args=[played_match.pk, 0])
    assert client.get(url).status_code == 404
    client.force_login(bob)
    assert client.get(url).status_code == 404
    assert seat.log not in client.get(reverse("matches:detail", args=[played_match.pk])).content.decode()
    for viewer in (staff, played_match.seats.get(seat=0).bot_version.bot.owner):
        client.force_login(viewer)
        assert client.get(url).content.decode() == seat.log
        assert "Log of seat 0" in client.get(reverse("matches:detail", args=[played_match.pk])).content.decode()


def test_match_list_filters_by_kind(client, played_match):
    assert f"#{played_match.pk}" in get(client, "matches:list").content.decode()
    response = client.get(reverse("matches:list") + "?kind=ladder")
    assert f"#{played_match.pk}" not in response.content.decode()
    assert "No matches yet." in response.content.decode()


def test_every_match_of_a_bot_can_be_reached_a_page_at_a_time(client, validated_version):
    from matches.views import MATCHES_PER_PAGE

    bot = validated_version.bot
    created = [
        match_services.match_create(kind="challenge", rules=Rules(players=2), seats=[validated_version, "random"],
                                    enqueue=False)
        for _ in range(MATCHES_PER_PAGE + 5)
    ]
    other = match_services.match_create(kind="challenge", rules=Rules(players=2), seats=["first", "random"],
                                        enqueue=False)
    assert f"?bot={bot.pk}" in client.get(reverse("bots:detail", args=[bot.pk])).content.decode()
    url = reverse("matches:list") + f"?bot={bot.pk}"
    first_page = client.get(url).content.decode()
    assert f"Matches of <a href=\"{bot.get_absolute_url()}\">{bot}</a>" in first_page
    # keyset pages (matches.selectors.match_page): the older link carries the bot and a position
    older = re.search(r'href="\?([^"]*before=[^"]*)">older', first_page)
    assert older and f"bot={bot.pk}&amp;" in older.group(1) and f"#{other.pk}<" not in first_page
    assert "← newer" not in first_page
    second_page = client.get(reverse("matches:list") + "?" + html.unescape(older.group(1))).content.decode()
    shown = {m.pk for m in created if f">#{m.pk}<" in first_page or f">#{m.pk}<" in second_page}
    assert shown == {m.pk for m in created}
    assert "← newer" in second_page and "older →" not in second_page
    # the kind filter keeps the bot; a position that is not one, a bad id: 404
    assert "older →" in client.get(url + "&kind=challenge").content.decode()
    assert client.get(url + "&before=99x").status_code == 404
    assert client.get(reverse("matches:list") + "?bot=12x").status_code == 404
    assert client.get(reverse("matches:list") + "?bot=9999999").status_code == 404
    version_page = client.get(reverse("matches:list") + f"?version={validated_version.pk}").content.decode()
    assert f"Matches of <a href=\"{validated_version.get_absolute_url()}\">" in version_page


def test_queue_page_counts_queued_and_running_and_shows_the_oldest_and_workers(client, validated_version):
    first = match_services.match_create(
        kind="ladder", rules=Rules(players=2), seats=[validated_version, "random"], enqueue=False
    )
    second = match_services.match_create(
        kind="ladder", rules=Rules(players=2), seats=[validated_version, "first"], enqueue=False
    )
    match_services.match_start(second.pk)
    worker_heartbeat_record("worker-7.example")
    response = get(client, "matches:queue")
    queue = response.context["queue"]
    assert (queue["queued"], queue["running"]) == (1, 1)
    assert queue["oldest"] == first
    content = response.content.decode()
    assert f"Match #{first.pk}" in content and "worker-7.example" in content


def test_queue_page_empty_state(client, db):
    content = get(client, "matches:queue").content.decode()
    assert "Nothing is waiting." in content and "No worker has sent a heartbeat" in content


def test_home_page_renders_with_navigation(client, db):
    content = get(client, "home").content.decode()
    assert reverse("bots:list") in content and reverse("matches:queue") in content


def test_user_menu_offers_logout_as_a_post_form(client, alice):
    content = get(client, "home", user=alice).content.decode()
    assert f'action="{reverse("accounts:logout")}"' in content and 'method="post"' in content


def test_unknown_things_are_404(client, db):
    get(client, "bots:detail", 999, status=404)
    get(client, "matches:detail", 999, status=404)
    get(client, "accounts:profile", "nobody", status=404)
    make_user("dave")


def test_admin_lists_and_shows_bots_versions_and_matches(client, played_match):
    admin = make_user("admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    version = played_match.seats.get(seat=0).bot_version
    for url in (
        reverse("admin:bots_bot_changelist"),
        reverse("admin:bots_bot_change", args=[version.bot_id]),
        reverse("admin:bots_botversion_changelist"),
        reverse("admin:bots_botversion_change", args=[version.pk]),
        reverse("admin:matches_match_changelist"),
        reverse("admin:matches_match_change", args=[played_match.pk]),
    ):
        assert client.get(url).status_code == 200, url
    # Versions are made by uploads only.
    assert client.get(reverse("admin:bots_botversion_add")).status_code == 403


def test_a_missing_page_is_the_sites_own_not_found_page(client, db):
    response = client.get("/bots/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "<title>Not found · Uno Arena</title>" in html and "/bots/999999/" in html
    assert 'class="topbar"' in html  # the site's header and menu, to find the way on


def test_the_server_error_page_needs_no_request_and_says_nothing_was_lost():
    from django.template.loader import render_to_string

    html = render_to_string("500.html")
    assert "Something went wrong on our side" in html and "core/site" in html


def test_the_admin_has_the_sites_name_and_icon(client, db):
    html = client.get("/admin/login/").content.decode()
    assert "Uno Arena administration" in html and "core/favicon" in html


def test_a_view_only_organizer_sees_a_bots_owner_as_text_not_a_forbidden_link(client, bot):
    import re

    from tournaments_app.demo import demo_organizer

    organizer = demo_organizer("pw", log=lambda _: None)
    client.force_login(organizer)
    page = client.get(reverse("admin:bots_bot_change", args=[bot.pk])).content.decode()
    assert bot.owner.username in page
    links = {link for link in re.findall(r'href="(/admin/[^"]*)"', page) if "logout" not in link}
    assert not any("/auth/user/" in link for link in links)
    for link in links:
        assert client.get(link.replace("&amp;", "&")).status_code in (200, 302), link
    # staff who may change bots keep the editable owner field
    client.force_login(make_user("chief", staff=True))
    assert 'name="owner"' in client.get(reverse("admin:bots_bot_change", args=[bot.pk])).content.decode()
