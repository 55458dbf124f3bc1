"""Tokens, challenges, matches and rate limits through the API."""

from __future__ import annotations

import gzip
import json

import pytest
from api_helpers import assert_json_error, client_for, make_bot
from django.core.files.uploadedfile import SimpleUploadedFile

from api.models import ApiToken
from api.services import token_create
from ladders.models import Ladder, LadderEntry, RatingChange
from matches.models import Challenge, Match, MatchSeat
from matches.services import match_create


@pytest.fixture
def ladder(db):
    return Ladder.objects.create(
        name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2, time_per_decision=0.5, time_bank=4
    )


def test_token_is_shown_once_and_works_until_revoked(alice):
    session = client_for(alice, token=False)
    created = session.post("/api/tokens/", {"name": "laptop"}, format="json")
    assert created.status_code == 201
    key = created.json()["key"]
    assert key.startswith("ua_")
    stored = ApiToken.objects.get(pk=created.json()["id"])
    assert key not in (stored.key_hash, stored.prefix)  # only a hash is stored
    listed = session.get("/api/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["laptop"]
    assert "key" not in listed[0]

    with_token = client_for(None)
    with_token.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert with_token.get("/api/me/").json()["username"] == "alice"
    assert session.delete(f"/api/tokens/{stored.pk}/").status_code == 204
    assert_json_error(with_token.get("/api/me/"), 401, "revoked")


def test_bearer_keyword_is_accepted(alice):
    _, key = token_create(user=alice, name="ci")
    client = client_for(None)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/me/").status_code == 200


def test_cannot_see_or_revoke_another_users_token(alice, bob):
    client_for(bob)  # gives bob a token
    bobs = ApiToken.objects.get(user=bob)
    client = client_for(alice)
    assert_json_error(client.get(f"/api/tokens/{bobs.pk}/"), 404)
    assert_json_error(client.delete(f"/api/tokens/{bobs.pk}/"), 404)
    assert ApiToken.objects.filter(pk=bobs.pk).exists()


def test_token_without_name_is_refused(alice):
    body = assert_json_error(client_for(alice).post("/api/tokens/", {}, format="json"), 400, "name")
    assert "name" in body["errors"]


def test_challenge_against_a_public_bot_queues_an_unranked_match(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    response = client_for(alice).post(
        "/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    match = Match.objects.get(pk=body["match"]["id"])
    assert match.kind == "challenge" and match.status == "queued"
    assert match.rules["players"] == 2 and match.rules["rounds"] == 1
    assert (match.time_per_decision, match.time_bank) == (ladder.time_per_decision, ladder.time_bank)
    assert [s.bot_version.bot_id for s in match.seats.all()] == [mine.pk, theirs.pk]
    assert body["ladder"] == "duel"
    assert body["match"]["page"] == f"/matches/{match.pk}/"
    assert client_for(alice).get("/api/challenges/").json()["results"][0]["id"] == body["id"]


def test_a_bot_entered_in_a_ladder_is_public(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs")
    LadderEntry.objects.create(ladder=ladder, bot=theirs)
    response = client_for(alice).post(
        "/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"
    )
    assert response.status_code == 201, response.content
    public = client_for(None).get("/api/bots/public/").json()["results"]
    assert [b["name"] for b in public] == ["theirs"]


def test_challenge_against_a_private_bot_is_refused(alice, bob, ladder):
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs")
    response = client_for(alice).post(
        "/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"
    )
    assert_json_error(response, 400, "not public")
    assert not Match.objects.exists()


def test_cannot_challenge_with_another_users_bot(alice, bob, ladder):
    theirs = make_bot(bob, "theirs", public=True)
    other = make_bot(bob, "other", public=True)
    response = client_for(alice).post(
        "/api/challenges/", {"bot": theirs.pk, "opponent": other.pk, "ladder": "duel"}, format="json"
    )
    assert_json_error(response, 403, "not yours")


def test_challenge_needs_an_active_version_and_a_known_ladder(alice, bob, ladder):
    mine = make_bot(alice, "mine", status="validating")
    theirs = make_bot(bob, "theirs", public=True)
    client = client_for(alice)
    assert_json_error(
        client.post("/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"),
        400, "no active version",
    )
    body = assert_json_error(
        client.post("/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "nope"}, format="json"),
        400, "ladder",
    )
    assert body["errors"] == {"ladder": ["no ladder 'nope'"]}


def test_challenge_under_an_inactive_ladder_is_refused(alice, bob, ladder):
    Ladder.objects.filter(pk=ladder.pk).update(active=False)
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    response = client_for(alice).post(
        "/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"
    )
    assert_json_error(response, 400, "the ladder 'duel' is not active")
    assert not Match.objects.exists() and not Challenge.objects.exists()


def test_a_challenge_plays_the_ladders_format_and_never_beyond_its_bounds(alice, bob, ladder):
    from ladders.services import ChallengeError, challenge_create

    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    Ladder.objects.filter(pk=ladder.pk).update(deals=100)
    ladder.refresh_from_db()
    match = challenge_create(challenger=alice, bot=mine, opponent=theirs, ladder=ladder).match
    assert (match.deals, match.duplicate) == (100, True)
    # A ladder out of bounds in memory (no such row can be stored) gives no match at all.
    ladder.deals = 1_000_000
    with pytest.raises(ChallengeError, match="deals: Ensure this value is less than or equal to 100"):
        challenge_create(challenger=alice, bot=mine, opponent=theirs, ladder=ladder)
    assert Match.objects.count() == 1


def test_challenges_pending_at_once_are_capped(alice, bob, ladder, settings):
    settings.API_CHALLENGES_PENDING = 2
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    client = client_for(alice)
    payload = {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}
    assert client.post("/api/challenges/", payload, format="json").status_code == 201
    assert client.post("/api/challenges/", payload, format="json").status_code == 201
    assert_json_error(client.post("/api/challenges/", payload, format="json"), 400, "2 challenges queued or running")
    Match.objects.filter(kind="challenge").update(status="done")
    assert client.post("/api/challenges/", payload, format="json").status_code == 201


def test_the_pending_cap_counts_the_address_so_new_accounts_do_not_multiply_it(alice, bob, ladder, settings):
    """Issue 16 point 3: a second account at the same client address shares the first one's cap;
    an account at another address does not, and a finished challenge frees the address's place."""
    from testsupport import make_user

    settings.API_CHALLENGES_PENDING = 2
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenges": "100/hour"}
    settings.API_THROTTLE_RATES.pop("challenges_per_address", None)
    carol, dave = make_user("carol"), make_user("dave")
    theirs = make_bot(bob, "theirs", public=True)
    here, there = {"REMOTE_ADDR": "203.0.113.7"}, {"REMOTE_ADDR": "198.51.100.9"}

    def post(user, name, meta):
        bot = make_bot(user, name)
        payload = {"bot": bot.pk, "opponent": theirs.pk, "ladder": "duel"}
        return client_for(user).post("/api/challenges/", payload, format="json", **meta)

    assert [post(alice, f"a{n}", here).status_code for n in range(2)] == [201, 201]
    assert_json_error(post(carol, "c1", here), 400, "2 challenges from your address are queued or running")
    assert post(dave, "d1", there).status_code == 201
    assert sorted(Challenge.objects.values_list("address", flat=True)) == ["198.51.100.9", "203.0.113.7", "203.0.113.7"]
    Match.objects.filter(challenge__challenger=alice).update(status="done")
    assert post(carol, "c2", here).status_code == 201
    assert Challenge.objects.filter(challenger=carol).count() == 1


def test_challenges_are_rate_limited_with_a_json_retry_time(alice, bob, ladder, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "challenges": "2/hour"}
    settings.API_CHALLENGES_PENDING = 100
    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs", public=True)
    client = client_for(alice)
    payload = {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}
    assert [client.post("/api/challenges/", payload, format="json").status_code for _ in range(2)] == [201, 201]
    limited = client.post("/api/challenges/", payload, format="json")
    body = assert_json_error(limited, 429, "retry in")
    assert 3500 <= body["retry_after"] <= 3600
    assert limited["Retry-After"] == str(body["retry_after"])
    assert Challenge.objects.count() == 2
    assert client.get("/api/challenges/").status_code == 200  # reads are never limited
    # Another user has a counter of their own.
    assert client_for(bob).post(
        "/api/challenges/", {"bot": theirs.pk, "opponent": mine.pk, "ladder": "duel"}, format="json"
    ).status_code == 400  # refused for being private, not throttled


def test_uploads_are_rate_limited(alice, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "uploads": "1/minute"}
    bot = make_bot(alice, status=None)
    client = client_for(alice)

    def upload(tag):
        data = f"def agent(o, c):\n    return o['legal_actions'][0]\n# {tag}\n".encode()
        return client.post(f"/api/bots/{bot.pk}/versions/", {"file": SimpleUploadedFile("b.py", data)})

    assert upload("a").status_code == 201
    body = assert_json_error(upload("b"), 429, "retry in")
    assert 1 <= body["retry_after"] <= 60


def _done_match(version, *, log="I printed this"):
    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=[version, "random"], enqueue=False)
    match.status = "done"
    replay = {"format": "uno-arena-replay", "events": [1, 2, 3]}
    match.replay_gz = gzip.compress(json.dumps(replay).encode())
    match.save()
    MatchSeat.objects.filter(match=match, seat=0).update(log=log, rank=1, score=10)
    return match, replay


def test_match_detail_shows_seat_logs_to_the_owner_only(alice, bob):
    bot = make_bot(alice)
    match, _ = _done_match(bot.versions.get())
    mine = client_for(alice).get(f"/api/matches/{match.pk}/").json()
    assert mine["seats"][0]["log"] == "I printed this"
    assert mine["seats"][0]["bot"] == bot.pk
    assert mine["seats"][1]["reference_bot"] == "random"
    assert client_for(bob).get(f"/api/matches/{match.pk}/").json()["seats"][0]["log"] is None
    assert client_for(None).get(f"/api/matches/{match.pk}/").json()["seats"][0]["log"] is None
    # Lists never carry logs.
    assert client_for(alice).get("/api/matches/").json()["results"][0]["seats"][0]["log"] is None


def test_replay_endpoint_returns_the_stored_document(alice):
    bot = make_bot(alice)
    match, replay = _done_match(bot.versions.get())
    detail = client_for(None).get(f"/api/matches/{match.pk}/").json()
    assert detail["replay"] == f"/api/matches/{match.pk}/replay/"
    assert detail["viewer"] == f"/matches/{match.pk}/replay/"
    response = client_for(None).get(detail["replay"])
    assert response.status_code == 200
    assert json.loads(response.content) == replay
    queued = match_create(kind="challenge", rules={"players": 2}, seats=["first", "random"], enqueue=False)
    assert_json_error(client_for(None).get(f"/api/matches/{queued.pk}/replay/"), 404, "no replay")


def test_match_list_filters_by_bot_status_kind_and_ladder(alice, bob, ladder):
    from ladders.models import LadderMatch

    a = make_bot(alice, "a")
    b = make_bot(bob, "b")
    done, _ = _done_match(a.versions.get())
    queued = match_create(kind="ladder", rules={"players": 2}, seats=[b.versions.get(), "random"], enqueue=False)
    LadderMatch.objects.create(ladder=ladder, match=queued)
    client = client_for(None)

    def ids(query):
        return [m["id"] for m in client.get(f"/api/matches/?{query}").json()["results"]]

    assert ids(f"bot={a.pk}") == [done.pk]
    assert ids("status=queued") == [queued.pk]
    assert ids("kind=challenge") == [done.pk]
    assert ids("ladder=duel") == [queued.pk]
    assert ids("ladder=unknown") == []
    body = assert_json_error(client.get("/api/matches/?status=exploded"), 400, "status")
    assert "status" in body["errors"]


def test_queue_status_counts_queued_matches(db):
    match_create(kind="challenge", rules={"players": 2}, seats=["first", "random"], enqueue=False)
    body = client_for(None).get("/api/queue/").json()
    assert body["queued"] == 1
    assert {k["kind"]: k["queued"] for k in body["kinds"]}["challenge"] == 1
    assert body["oldest_wait_seconds"] >= 0


def test_schema_and_docs_are_served_without_a_cdn(db):
    client = client_for(None)
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    paths = json.loads(schema.content)["paths"]
    assert "/api/matches/{match_id}/replay/" in paths
    assert "/api/bots/{bot_id}/versions/" in paths
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"cdn" not in docs.content.lower()
    assert b"swagger-ui" in docs.content


@pytest.mark.slow
def test_a_challenge_is_played_and_then_watchable(alice, bob, ladder, django_capture_on_commit_callbacks):
    """The whole path: the challenge's match plays (task in-process), then its detail links the replay."""
    from celery import current_app

    mine = make_bot(alice, "mine")
    theirs = make_bot(bob, "theirs")
    entry = LadderEntry.objects.create(ladder=ladder, bot=theirs)  # public by its ladder entry
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            created = client_for(alice).post(
                "/api/challenges/", {"bot": mine.pk, "opponent": theirs.pk, "ladder": "duel"}, format="json"
            )
    finally:
        current_app.conf.task_always_eager = eager
    assert created.status_code == 201, created.content
    match_id = created.json()["match"]["id"]
    detail = client_for(alice).get(f"/api/matches/{match_id}/").json()
    assert detail["status"] == "done", detail["error"]
    assert sorted(seat["rank"] for seat in detail["seats"]) in ([1, 2], [1, 1])
    assert "plays" in detail["seats"][0]["log"]  # alice sees her bot's log
    assert detail["seats"][1]["log"] is None  # not bob's
    replay = client_for(None).get(detail["replay"]).json()
    assert replay["rules"]["players"] == 2
    assert client_for(None).get(detail["viewer"]).status_code == 200
    # A challenge is unranked: the ladder entry played no rated match.
    entry.refresh_from_db()
    assert entry.matches_played == 0 and not RatingChange.objects.filter(entry=entry).exists()
