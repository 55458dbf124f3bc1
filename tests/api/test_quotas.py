"""Sign-ups and quotas that more accounts cannot multiply (issue 16, point 3): new accounts per
client address, and the upload and challenge quotas per address as well as per account, on the
pages and in the API (core.ratelimit)."""

from __future__ import annotations

import pytest
from api_helpers import client_for, good_bot, make_bot, make_user
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from bots.models import BotVersion
from ladders.models import Ladder
from matches.models import Challenge

pytestmark = pytest.mark.django_db

HOME = "198.51.100.20"
ELSEWHERE = "192.0.2.77"


def signup(name: str, *, address: str = HOME, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": address}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    secret = "a long enough secret 42"
    return Client().post("/accounts/signup/", {"username": name, "password1": secret, "password2": secret}, **extra)


def accounts() -> set[str]:
    return set(get_user_model().objects.values_list("username", flat=True))


def test_three_sign_ups_an_hour_from_one_address_and_the_fourth_is_refused(settings):
    assert settings.API_THROTTLE_RATES["signups"] == "3/hour"
    assert [signup(f"user{i}", forwarded=f"10.0.0.{i}").status_code for i in range(3)] == [302] * 3
    refused = signup("user3", forwarded="10.0.0.99")  # a client-sent X-Forwarded-For changes nothing
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many new accounts from your address; retry in 60 minutes." in page
    assert accounts() == {"user0", "user1", "user2"}
    assert signup("user3", address=ELSEWHERE).status_code == 302  # another address has its own count


def test_a_mistyped_sign_up_form_does_not_use_the_quota(settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "signups": "1/hour"}
    bad = Client().post("/accounts/signup/", {"username": "x", "password1": "a", "password2": "b"}, REMOTE_ADDR=HOME)
    assert bad.status_code == 200 and "x" not in accounts()
    assert signup("carol").status_code == 302
    assert signup("dave").status_code == 429


def upload_api(user, bot, tag: str, address: str = HOME):
    upload = SimpleUploadedFile("bot.py", good_bot(tag))
    return client_for(user).post(f"/api/bots/{bot.pk}/versions/", {"file": upload}, REMOTE_ADDR=address)


def upload_page(user, bot, tag: str, address: str = HOME):
    client = Client()
    client.force_login(user)
    return client.post(f"/bots/{bot.pk}/upload/", {"file": SimpleUploadedFile("bot.py", good_bot(tag))}, REMOTE_ADDR=address)


@pytest.mark.parametrize("upload", [upload_api, upload_page], ids=["api", "page"])
def test_the_upload_quota_counts_the_address_as_well_as_the_account(upload, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "uploads": "2/hour", "uploads_per_address": "3/hour"}
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    bots = {user: make_bot(user, f"{user.username}bot", status=None) for user in (alice, bob, carol)}
    ok = (201, 302)
    assert upload(alice, bots[alice], "a1").status_code in ok
    assert upload(alice, bots[alice], "a2").status_code in ok
    assert upload(alice, bots[alice], "a3", ELSEWHERE).status_code == 429  # the account's 2 an hour, from anywhere
    assert upload(bob, bots[bob], "b1").status_code in ok  # the address's third
    refused = upload(carol, bots[carol], "c1")  # a fresh account at the same address: the address's quota is used up
    assert refused.status_code == 429
    if upload is upload_api:
        assert "retry in" in refused.json()["detail"]
    else:
        assert "Too many uploads; retry in" in refused.content.decode()
    assert upload(carol, bots[carol], "c1", ELSEWHERE).status_code in ok
    assert BotVersion.objects.filter(bot=bots[carol]).count() == 1


@pytest.fixture
def ladder(db):
    return Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2)


def challenge_api(user, mine, theirs, address: str = HOME):
    payload = {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}
    return client_for(user).post("/api/challenges/", payload, format="json", REMOTE_ADDR=address).status_code


def challenge_page(user, mine, theirs, address: str = HOME):
    client = Client()
    client.force_login(user)
    response = client.post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"}, REMOTE_ADDR=address,
                           follow=True)
    return 429 if "Too many challenges; retry in" in response.content.decode() else 201


@pytest.mark.parametrize("challenge", [challenge_api, challenge_page], ids=["api", "page"])
def test_the_challenge_quota_counts_the_address_as_well_as_the_account(challenge, settings, ladder):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenges": "20/hour",
                                   "challenges_per_address": "2/hour"}
    settings.API_CHALLENGES_PENDING = 100
    target = make_bot(make_user("target"), "target", public=True)
    players = [make_user(f"sock{i}") for i in range(3)]
    bots = [make_bot(user, f"bot{i}") for i, user in enumerate(players)]
    assert [challenge(user, bot, target) for user, bot in zip(players, bots, strict=True)] == [201, 201, 429]
    assert challenge(players[2], bots[2], target, ELSEWHERE) == 201
    assert Challenge.objects.count() == 3
