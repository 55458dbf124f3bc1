"""The web side: tokens on the profile page (key shown once), the challenge form on a bot page."""

from __future__ import annotations

import re

import pytest
from api_helpers import client_for, make_bot
from django.test import Client

from api.models import ApiToken
from ladders.models import Ladder
from matches.models import Challenge, Match


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_profile_lists_tokens_to_their_owner_only(alice, bob):
    client_for(alice)  # makes a token named "tests"
    own = browser(alice).get("/users/alice/").content.decode()
    assert "API tokens" in own and "tests" in own
    assert "API tokens" not in browser(bob).get("/users/alice/").content.decode()


def test_new_token_key_is_shown_once_and_works(alice):
    client = browser(alice)
    page = client.post("/account/tokens/new/", {"name": "laptop"})
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    key = re.search(r'id="token-key">(ua_[^<]+)<', page.content.decode()).group(1)
    api = client_for(None)
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/me/").json()["username"] == "alice"
    profile = client.get("/users/alice/").content.decode()
    assert "laptop" in profile and key not in profile


def test_token_without_name_is_refused_with_a_message(alice):
    response = browser(alice).post("/account/tokens/new/", {"name": "  "}, follow=True)
    assert "a token needs a name" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_revoke_from_the_profile_and_not_someone_elses(alice, bob):
    client_for(bob)
    bobs = ApiToken.objects.get(user=bob)
    assert browser(alice).post(f"/account/tokens/{bobs.pk}/revoke/").status_code == 404
    assert ApiToken.objects.filter(pk=bobs.pk).exists()
    response = browser(bob).post(f"/account/tokens/{bobs.pk}/revoke/")
    assert response.status_code == 302
    assert not ApiToken.objects.filter(pk=bobs.pk).exists()


def test_token_pages_need_login_and_post(alice):
    assert Client().post("/account/tokens/new/", {"name": "x"}).status_code == 302  # to the login page
    assert browser(alice).get("/account/tokens/new/").status_code == 405
    assert not ApiToken.objects.exists()


@pytest.fixture
def ladder(db):
    return Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2)


def test_challenge_form_on_a_public_bot_queues_a_match_and_opens_its_page(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    client = browser(alice)
    page = client.get(f"/bots/{theirs.pk}/").content.decode()
    assert "Challenge theirs" in page
    response = client.post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"})
    match = Challenge.objects.get().match
    assert response.status_code == 302 and response["Location"] == f"/matches/{match.pk}/"
    assert match.kind == "challenge"


def test_challenge_form_is_not_offered_for_private_bots_or_your_own(alice, bob, ladder):
    make_bot(alice, "mine")
    private = make_bot(bob, "private")
    assert "Challenge private" not in browser(alice).get(f"/bots/{private.pk}/").content.decode()
    own_public = make_bot(alice, "shown", public=True)
    assert "Challenge shown" not in browser(alice).get(f"/bots/{own_public.pk}/").content.decode()


def test_challenge_of_a_private_bot_by_hand_is_refused_with_a_message(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    private = make_bot(bob, "private")
    response = browser(alice).post(f"/account/challenge/{private.pk}/", {"bot": mine.pk, "ladder": "duel"}, follow=True)
    assert "is not public" in response.content.decode()
    assert not Match.objects.exists()


def test_challenge_with_someone_elses_bot_is_refused(alice, bob, ladder):
    theirs = make_bot(bob, "theirs", public=True)
    other = make_bot(bob, "other", public=True)
    response = browser(alice).post(f"/account/challenge/{theirs.pk}/", {"bot": other.pk, "ladder": "duel"}, follow=True)
    assert "Choose one of your bots" in response.content.decode()
    assert not Match.objects.exists()


def test_web_challenges_share_the_api_rate_limit(alice, bob, ladder, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenges": "1/hour"}
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    client = browser(alice)
    client.post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"})
    response = client.post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"}, follow=True)
    assert "Too many challenges; retry in" in response.content.decode()
    api = client_for(alice).post("/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json")
    assert api.status_code == 429
    assert Challenge.objects.count() == 1


def test_challenge_form_offers_only_active_ladders(alice, bob, ladder):
    Ladder.objects.create(name="Archived", slug="archived", rules={"players": 2}, seats=2, active=False)
    make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    page = browser(alice).get(f"/bots/{theirs.pk}/").content.decode()
    options = re.findall(r'<option value="([^"]+)">', page.split('name="ladder"')[1].split("</select>")[0])
    assert options == ["duel"]


def test_challenge_form_without_an_active_ladder_says_so(alice, bob, ladder):
    Ladder.objects.update(active=False)
    make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    page = browser(alice).get(f"/bots/{theirs.pk}/").content.decode()
    assert "There is no active ladder" in page and 'name="ladder"' not in page


def test_challenge_under_an_inactive_ladder_by_hand_is_refused_with_a_message(alice, bob, ladder):
    Ladder.objects.update(active=False)
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    response = browser(alice).post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"}, follow=True)
    assert "the ladder &#x27;duel&#x27; is not active" in response.content.decode()
    assert not Match.objects.exists() and not Challenge.objects.exists()


def test_the_message_says_queued_while_the_match_waits(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    response = browser(alice).post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"}, follow=True)
    page = response.content.decode()
    assert Challenge.objects.get().match.status == "queued"
    assert "Challenge queued: alice/mine against bob/theirs" in page
    assert "Challenge played" not in page


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_message_says_played_when_the_match_ran_during_the_request(alice, bob, eager_tasks):
    """The embedded default runs the task in-process when the challenge commits, before the response."""
    Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2)
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    client = browser(alice)
    response = client.post(f"/account/challenge/{theirs.pk}/", {"bot": mine.pk, "ladder": "duel"})
    match = Challenge.objects.get().match
    assert match.status == "done", match.error
    page = client.get(response["Location"]).content.decode()
    assert "Challenge played: alice/mine against bob/theirs" in page
    assert "Challenge queued" not in page and "when it is played" not in page
