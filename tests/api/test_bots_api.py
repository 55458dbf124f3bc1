"""Bots and versions through the API: create, list your own, upload, status, logs, permissions."""

from __future__ import annotations

import pytest
from api_helpers import CRASHING_BOT, assert_json_error, client_for, good_bot, make_bot
from django.core.files.uploadedfile import SimpleUploadedFile

from bots.models import Bot, BotVersion


def upload(client, bot_id: int, data: bytes, name: str = "bot.py"):
    return client.post(
        f"/api/bots/{bot_id}/versions/", {"file": SimpleUploadedFile(name, data)}, format="multipart"
    )


def test_create_bot_then_it_is_listed_among_your_own_only(alice, bob):
    make_bot(bob, "bobs", status=None)
    client = client_for(alice)
    created = client.post("/api/bots/", {"name": "alpha", "description": "mine"}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["owner"] == "alice"
    assert created.json()["playing_version"] is None
    listed = client.get("/api/bots/").json()
    assert [b["name"] for b in listed["results"]] == ["alpha"]
    assert listed["count"] == 1


def test_create_bot_with_a_taken_name_is_a_400_saying_so(alice):
    make_bot(alice, "alpha", status=None)
    response = client_for(alice).post("/api/bots/", {"name": "alpha"}, format="json")
    assert_json_error(response, 400, "already have a bot named 'alpha'")


def test_create_bot_without_name_names_the_field(alice):
    response = client_for(alice).post("/api/bots/", {"description": "x"}, format="json")
    body = assert_json_error(response, 400, "name")
    assert "name" in body["errors"]


def test_listing_your_bots_needs_credentials(db):
    response = client_for(None).get("/api/bots/")
    assert_json_error(response, 401, "credentials")


def test_bad_token_is_a_401_saying_it_is_invalid(db):
    client = client_for(None)
    client.credentials(HTTP_AUTHORIZATION="Token ua_not-a-real-key")
    assert_json_error(client.get("/api/me/"), 401, "invalid or revoked token")


def test_session_login_works_like_a_token(alice):
    response = client_for(alice, token=False).get("/api/me/")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"


def test_upload_creates_a_version_and_queues_its_validation(alice):
    bot = make_bot(alice, status=None)
    response = upload(client_for(alice), bot.pk, good_bot("one"))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["number"] == 1
    assert body["status"] == "validating"
    assert body["validation_match"] is not None
    assert BotVersion.objects.get(bot=bot, number=1).sha256 == body["sha256"]


def test_upload_that_breaks_the_contract_is_a_400_with_the_reason(alice):
    bot = make_bot(alice, status=None)
    response = upload(client_for(alice), bot.pk, b"print('no agent here')\n")
    assert_json_error(response, 400, "agent")
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_upload_of_the_same_bytes_twice_is_refused(alice):
    bot = make_bot(alice, status=None)
    client = client_for(alice)
    assert upload(client, bot.pk, good_bot("same")).status_code == 201
    assert_json_error(upload(client, bot.pk, good_bot("same")), 400, "already uploaded as version 1")


def test_upload_without_a_file_names_the_field(alice):
    bot = make_bot(alice, status=None)
    response = client_for(alice).post(f"/api/bots/{bot.pk}/versions/", {}, format="multipart")
    body = assert_json_error(response, 400, "file")
    assert "file" in body["errors"]


def test_cannot_upload_to_another_users_bot(alice, bob):
    bot = make_bot(bob, status=None)
    response = upload(client_for(alice), bot.pk, good_bot("intruder"))
    assert_json_error(response, 403, "not yours")
    assert not BotVersion.objects.filter(bot=bot).exists()


def test_cannot_edit_another_users_bot(alice, bob):
    bot = make_bot(bob, status=None)
    response = client_for(alice).patch(f"/api/bots/{bot.pk}/", {"source_public": True}, format="json")
    assert_json_error(response, 403, "owner")
    assert Bot.objects.get(pk=bot.pk).source_public is False


def test_owner_edits_description_and_visibility(alice):
    bot = make_bot(alice, status=None)
    response = client_for(alice).patch(f"/api/bots/{bot.pk}/", {"source_public": True}, format="json")
    assert response.status_code == 200
    bot.refresh_from_db()
    assert bot.source_public is True


def test_not_even_a_superuser_edits_another_users_bot_through_the_api(alice, staff):
    bot = make_bot(alice, status=None)
    response = client_for(staff).patch(f"/api/bots/{bot.pk}/", {"description": "moderated"}, format="json")
    assert_json_error(response, 403, "owner")
    assert Bot.objects.get(pk=bot.pk).description == ""


def test_validation_log_is_shown_to_the_owner_and_superusers_only(alice, bob, staff):
    bot = make_bot(alice, status="rejected", log="secret debug output")
    url = f"/api/bots/{bot.pk}/versions/1/"
    assert client_for(alice).get(url).json()["validation_log"] == "secret debug output"
    assert client_for(staff).get(url).json()["validation_log"] == "secret debug output"
    assert client_for(bob).get(url).json()["validation_log"] is None
    anonymous = client_for(None).get(url).json()
    assert anonymous["validation_log"] is None
    assert anonymous["status"] == "rejected"
    assert anonymous["rejection_reason"] == "illegal: 3 strikes"


def test_private_source_is_refused_to_others(alice, bob):
    bot = make_bot(alice)
    url = f"/api/bots/{bot.pk}/versions/1/source/"
    assert client_for(alice).get(url).content == good_bot("alpha")
    assert_json_error(client_for(bob).get(url), 403, "private")
    assert_json_error(client_for(None).get(url), 403, "private")
    assert client_for(bob).get(f"/api/bots/{bot.pk}/versions/1/").json()["source"] is None


def test_public_source_is_for_everyone(alice):
    bot = make_bot(alice, public=True)
    response = client_for(None).get(f"/api/bots/{bot.pk}/versions/1/source/")
    assert response.status_code == 200
    assert response.content == good_bot("alpha")


def test_versions_list_is_paginated_newest_first(alice):
    bot = make_bot(alice, status=None)
    from bots.services import bot_version_create

    for tag in "abc":
        bot_version_create(bot=bot, filename="b.py", data=good_bot(tag), validate=False)
    page = client_for(None).get(f"/api/bots/{bot.pk}/versions/?page_size=2").json()
    assert page["count"] == 3
    assert [v["number"] for v in page["results"]] == [3, 2]
    assert page["next"] is not None


def test_pin_a_version_and_refuse_a_rejected_one(alice):
    bot = make_bot(alice)
    from bots.services import bot_version_create

    second = bot_version_create(bot=bot, filename="b.py", data=good_bot("two"), validate=False)
    BotVersion.objects.filter(pk=second.pk).update(status="rejected", rejection_reason="crash: boom")
    client = client_for(alice)
    assert client.post(f"/api/bots/{bot.pk}/pin/", {"version": 1}, format="json").json()["playing_version"] == 1
    assert_json_error(client.post(f"/api/bots/{bot.pk}/pin/", {"version": 2}, format="json"), 400, "rejected")
    assert_json_error(client.post(f"/api/bots/{bot.pk}/pin/", {"version": 9}, format="json"), 400, "no version 9")


def test_unknown_bot_is_a_json_404(db):
    assert_json_error(client_for(None).get("/api/bots/999999/"), 404)


def test_unknown_api_path_is_a_json_404(db):
    assert_json_error(client_for(None).get("/api/nothing/here/"), 404, "no API endpoint")


@pytest.mark.slow
def test_rejected_upload_reports_reason_and_log_after_validation(alice, django_capture_on_commit_callbacks):
    """The whole path: upload, the validation match plays (in-process task), the version is rejected."""
    from celery import current_app

    bot = make_bot(alice, status=None)
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = upload(client_for(alice), bot.pk, CRASHING_BOT)
    finally:
        current_app.conf.task_always_eager = eager
    assert response.status_code == 201, response.content
    version = client_for(alice).get(f"/api/bots/{bot.pk}/versions/1/").json()
    assert version["status"] == "rejected"
    assert "my bot is broken" in version["rejection_reason"]
    assert "thinking hard" in version["validation_log"]
