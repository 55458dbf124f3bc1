"""Schemathesis over every operation of /api/schema/: no input gives a 5xx, every answer fits the schema.

Bounded (a few examples per operation) so the whole file runs in about a minute.
"""

from __future__ import annotations

import gzip
import json

import pytest
import schemathesis
from api_helpers import make_bot, make_user
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from api.services import token_create
from ladders.models import Ladder, LadderEntry
from matches.services import match_create
from tournaments_app.services import entry_add, tournament_create, tournament_open_registration

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
MAX_EXAMPLES = 10


def _load_schema():
    # Loaded at collection through the WSGI app itself: the schema under test is the one the site serves.
    from arena.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)


schema = _load_schema()


@pytest.fixture
def _keep_connection():
    """The WSGI app would close the database connection after each request, ending the test's
    transaction on PostgreSQL; Django's own test client unhooks the same handler."""
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(db, _keep_connection):
    """Something for every endpoint to find: users, bots, a finished match, a ladder, a tournament."""
    alice, bob = make_user("alice"), make_user("bob")
    mine = make_bot(alice, "mine", public=True)
    theirs = make_bot(bob, "theirs", public=True)
    ladder = Ladder.objects.create(name="Duel", slug="duel", rules={"players": 2, "rounds": 1}, seats=2)
    LadderEntry.objects.create(ladder=ladder, bot=theirs)
    match = match_create(kind="challenge", rules={"players": 2}, seats=[mine.versions.get(), "random"], enqueue=False)
    match.status = "done"
    match.replay_gz = gzip.compress(json.dumps({"version": 1, "games": []}).encode())
    match.save()
    cup = tournament_create(name="Cup", rules=["players=2", "rounds=1"], format="round_robin")
    tournament_open_registration(cup)
    entry_add(cup, mine)
    _, key = token_create(user=alice, name="fuzz")
    return {"Authorization": f"Token {key}"}


@pytest.mark.slow  # every operation of the schema fuzzed: minutes of CPU, left out of make check
@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_answers_every_input_without_a_server_error(case, world):
    case.call_and_validate(headers=world, checks=CHECKS)
