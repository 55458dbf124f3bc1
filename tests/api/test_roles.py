"""Roles across pages, admin and API (issue 16, point 1): owner, other user, organizer, superuser
and anonymous. Only the owner acts on a bot; an organizer reads the private parts of entrants
(bots that play in ladder or tournament matches) and seat logs of event matches only, each read
audited; only superusers administer users and read the audit log."""

from __future__ import annotations

import pytest
from api_helpers import client_for, good_bot, make_bot, make_user
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from bots.models import Bot, BotVersion, SourceAccess
from engine.rules import Rules
from matches import services as match_services
from matches.models import Match, MatchSeat

pytestmark = pytest.mark.django_db

SECRET_LOG = "validation secret of alice"
LADDER_LOG = "ladder seat secret"
CHALLENGE_LOG = "challenge seat secret"
#: every permission a careless operator could hand an organizer; none may widen the role
GENEROUS_PERMISSIONS = [
    ("bots", "add_bot"), ("bots", "change_bot"), ("bots", "delete_bot"), ("bots", "view_bot"),
    ("bots", "change_botversion"), ("bots", "delete_botversion"), ("bots", "view_botversion"),
    ("bots", "view_sourceaccess"), ("auth", "view_user"), ("auth", "change_user"), ("auth", "add_user"),
    ("auth", "change_group"), ("auth", "view_group"),
]


@pytest.fixture
def world(db):
    alice = make_user("alice")
    organizer = make_user("olga")
    organizer.is_staff = True
    organizer.save()
    for app_label, codename in GENEROUS_PERMISSIONS:
        organizer.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    entrant = make_bot(alice, "entrant", log=SECRET_LOG)
    private = make_bot(alice, "private", log=SECRET_LOG)
    rules = Rules.parse(["players=2", "rounds=1"])
    matches = {}
    for kind, log in (("ladder", LADDER_LOG), ("challenge", CHALLENGE_LOG)):
        bot = entrant if kind == "ladder" else private
        match = match_services.match_create(kind=kind, rules=rules, seats=[bot.versions.get(), "random"], enqueue=False)
        MatchSeat.objects.filter(match=match, seat=0).update(log=log)
        matches[kind] = match
    return {
        "owner": alice, "other": make_user("bob"), "organizer": organizer,
        "superuser": make_user("root", staff=True), "anonymous": None,
        "entrant": entrant, "private": private, "matches": matches,
    }


def page_client(user):
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


ROLES = ["owner", "other", "organizer", "superuser", "anonymous"]


# --- reading private parts: (what, bot) -> roles allowed -----------------------------------------

READS = [
    # page of the source of a version
    ("page source", "entrant", {"owner", "organizer", "superuser"}),
    ("page source", "private", {"owner", "superuser"}),
    ("page validation log", "entrant", {"owner", "organizer", "superuser"}),
    ("page validation log", "private", {"owner", "superuser"}),
    ("api source", "entrant", {"owner", "organizer", "superuser"}),
    ("api source", "private", {"owner", "superuser"}),
    ("api validation log", "entrant", {"owner", "organizer", "superuser"}),
    ("api validation log", "private", {"owner", "superuser"}),
    ("api version list log", "entrant", {"owner", "organizer", "superuser"}),
    ("api version list log", "private", {"owner", "superuser"}),
    # seat logs: a ladder match is an event an organizer judges; a challenge is not
    ("api seat log", "ladder", {"owner", "superuser", "organizer"}),
    ("api seat log", "challenge", {"owner", "superuser"}),
    ("page seat log", "ladder", {"owner", "superuser", "organizer"}),
    ("page seat log", "challenge", {"owner", "superuser"}),
    ("replay viewer seat log", "ladder", {"owner", "superuser", "organizer"}),
    ("replay viewer seat log", "challenge", {"owner", "superuser"}),
]


def read(world, what: str, target: str, user) -> bool:
    """Did ``user`` get the private thing? (asserting the refusal looks as it should)"""
    if what.startswith("api seat log"):
        match = world["matches"][target]
        body = client_for(user).get(f"/api/matches/{match.pk}/").json()
        return body["seats"][0]["log"] is not None
    if what == "page seat log":
        match = world["matches"][target]
        response = page_client(user).get(f"/matches/{match.pk}/seats/0/log.txt")
        assert response.status_code in (200, 404)
        return response.status_code == 200 and response.content.decode() == (LADDER_LOG if target == "ladder" else CHALLENGE_LOG)
    if what == "replay viewer seat log":
        match = world["matches"][target]
        Match.objects.filter(pk=match.pk).update(status=Match.Status.DONE)
        response = page_client(user).get(f"/matches/{match.pk}/replay/")
        assert response.status_code == 200
        return (LADDER_LOG if target == "ladder" else CHALLENGE_LOG) in response.content.decode()
    bot = world[target]
    if what == "page source":
        response = page_client(user).get(f"/bots/{bot.pk}/v1/source/")
        assert response.status_code in (200, 404)
        return response.status_code == 200 and response.content == bytes(bot.versions.get().source)
    if what == "page validation log":
        response = page_client(user).get(f"/bots/{bot.pk}/v1/")
        assert response.status_code == 200
        return SECRET_LOG in response.content.decode()
    if what == "api source":
        response = client_for(user).get(f"/api/bots/{bot.pk}/versions/1/source/")
        assert response.status_code in (200, 403)
        return response.status_code == 200
    if what == "api validation log":
        return client_for(user).get(f"/api/bots/{bot.pk}/versions/1/").json()["validation_log"] == SECRET_LOG
    if what == "api version list log":
        return client_for(user).get(f"/api/bots/{bot.pk}/versions/").json()["results"][0]["validation_log"] is not None
    raise AssertionError(what)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("what", "target", "allowed"), READS, ids=[f"{w} of {t}" for w, t, _ in READS])
def test_who_reads_private_sources_and_logs_and_every_read_by_others_is_audited(world, role, what, target, allowed):
    user = world[role]
    before = SourceAccess.objects.count()
    got = read(world, what, target, user)
    assert got == (role in allowed), (role, what, target)
    records = list(SourceAccess.objects.order_by("pk")[before:])
    if got and role != "owner":
        assert records, f"the {role}'s read of {what} of {target} was not audited"
        assert {r.username for r in records} == {user.username}
        assert all(r.reason and r.path.startswith(("/bots/", "/api/", "/matches/")) for r in records)
        if "seat log" in what:
            assert records[0].what == SourceAccess.What.SEAT_LOG and records[0].match_id == world["matches"][target].pk
    else:
        assert records == [], f"{role} reading {what} of {target} wrote {records}"


def test_an_audit_record_names_reader_version_what_and_path(world):
    client = page_client(world["organizer"])
    bot = world["entrant"]
    assert client.get(f"/bots/{bot.pk}/v1/source/").status_code == 200
    record = SourceAccess.objects.get()
    assert (record.user, record.username, record.bot_version, record.what) == (
        world["organizer"], "olga", bot.versions.get(), "source"
    )
    assert record.label == "alice/entrant v1" and record.path == f"/bots/{bot.pk}/v1/source/"
    assert "organizer" in record.reason


# --- acting on a bot: only its owner, on pages and in the API ------------------------------------


def act(world, action: str, user):
    """Try ``action`` on alice's private bot; returns the response."""
    bot = world["private"]
    if action == "page upload":
        upload = SimpleUploadedFile("bot.py", good_bot(f"by {user}"))
        return page_client(user).post(f"/bots/{bot.pk}/upload/", {"file": upload})
    if action == "page edit":
        return page_client(user).post(f"/bots/{bot.pk}/edit/", {"description": "pwned", "source_public": "on"})
    if action == "page pin":
        return page_client(user).post(f"/bots/{bot.pk}/pin/", {"version": "1"})
    if action == "api upload":
        upload = SimpleUploadedFile("bot.py", good_bot(f"by {user}"))
        return client_for(user).post(f"/api/bots/{bot.pk}/versions/", {"file": upload}, format="multipart")
    if action == "api visibility":
        return client_for(user).patch(f"/api/bots/{bot.pk}/", {"source_public": True}, format="json")
    if action == "api description":
        return client_for(user).patch(f"/api/bots/{bot.pk}/", {"description": "pwned"}, format="json")
    if action == "api pin":
        return client_for(user).post(f"/api/bots/{bot.pk}/pin/", {"version": 1}, format="json")
    raise AssertionError(action)


ACTIONS = ["page upload", "page edit", "page pin", "api upload", "api visibility", "api description", "api pin"]
#: what a refusal looks like for a signed-in non-owner, and for an anonymous visitor
REFUSED = {"page": (404, 302), "api": (403, 401)}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", ACTIONS)
def test_only_the_owner_uploads_into_edits_or_pins_a_bot(world, role, action):
    bot = world["private"]
    response = act(world, action, world[role])
    bot.refresh_from_db()
    versions = BotVersion.objects.filter(bot=bot).count()
    if role == "owner":
        assert response.status_code in (200, 201, 302), response.status_code
        return
    signed_in, anonymous = REFUSED[action.split()[0]]
    assert response.status_code == (anonymous if role == "anonymous" else signed_in), response.status_code
    assert versions == 1 and not bot.source_public and bot.description == "" and bot.pinned_version_id is None


def test_the_reported_hole_is_closed_an_organizers_upload_into_another_bot_is_403(world):
    bot = world["entrant"]  # even an entrant the organizer judges
    upload = SimpleUploadedFile("bot.py", good_bot("smuggled"))
    response = client_for(world["organizer"]).post(f"/api/bots/{bot.pk}/versions/", {"file": upload}, format="multipart")
    assert response.status_code == 403 and "not yours" in response.json()["detail"]
    assert bot.versions.count() == 1


# --- the admin: organizers view bots, never change them; users and the audit log are superusers' ---

ADMIN = [
    # (method, path template, {role: status})
    ("get", "/admin/bots/bot/{bot}/change/", {"organizer": 200, "superuser": 200}),
    ("post", "/admin/bots/bot/{bot}/change/", {"organizer": 403, "superuser": 302}),
    ("get", "/admin/bots/bot/{bot}/delete/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/bots/bot/add/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/bots/botversion/{version}/delete/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/auth/user/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/auth/user/{owner}/change/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/auth/user/add/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/auth/group/", {"organizer": 403, "superuser": 200}),
    ("get", "/admin/bots/sourceaccess/", {"organizer": 403, "superuser": 200}),
]


@pytest.mark.parametrize(("method", "path", "expected"), ADMIN, ids=[f"{m} {p}" for m, p, _ in ADMIN])
@pytest.mark.parametrize("role", ROLES)
def test_admin_bots_are_changed_and_users_administered_by_superusers_only(world, role, method, path, expected):
    bot = world["private"]
    url = path.format(bot=bot.pk, version=bot.versions.get().pk, owner=world["owner"].pk)
    client = page_client(world[role])
    if method == "post":
        data = {"owner": world["other"].pk, "name": "renamed", "description": "", "pinned_version": "",
                "versions-TOTAL_FORMS": "1", "versions-INITIAL_FORMS": "1", "versions-MIN_NUM_FORMS": "0",
                "versions-MAX_NUM_FORMS": "1000", "versions-0-id": bot.versions.get().pk, "versions-0-bot": bot.pk}
        response = client.post(url, data)
    else:
        response = client.get(url)
    if role in expected:
        assert response.status_code == expected[role], (role, url, response.status_code)
    else:  # not staff: the admin's login page
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    if role != "superuser":
        assert Bot.objects.get(pk=bot.pk).name == "private"


def test_the_admin_never_shows_a_versions_validation_log(world):
    version = world["entrant"].versions.get()
    for role in ("organizer", "superuser"):
        page = page_client(world[role]).get(f"/admin/bots/botversion/{version.pk}/change/").content.decode()
        assert SECRET_LOG not in page and "on the version page" in page


def test_the_audit_log_is_read_only_even_for_superusers(world):
    page_client(world["organizer"]).get(f"/bots/{world['entrant'].pk}/v1/source/")
    record = SourceAccess.objects.get()
    client = page_client(world["superuser"])
    page = client.get("/admin/bots/sourceaccess/").content.decode()
    assert "olga" in page and "alice/entrant v1" in page
    assert client.get(f"/admin/bots/sourceaccess/{record.pk}/delete/").status_code == 403
    assert client.get("/admin/bots/sourceaccess/add/").status_code == 403
    client.post(f"/admin/bots/sourceaccess/{record.pk}/change/", {"username": "nobody"})
    record.refresh_from_db()
    assert record.username == "olga"
