"""Tournaments end to end: a real Celery worker through Redis plays every match in the Docker sandbox
against PostgreSQL, and the rounds advance by themselves until both tournaments finish."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from fractions import Fraction
from itertools import combinations

import pytest
from django.db import connection, connections
from testsupport import played_match, service_missing
from tournament_helpers import field, make_user, open_matches, refreshed, tournament_with

from bots import services as bot_services
from bots.models import BotVersion
from matches import services as match_services
from matches.models import Match
from tournaments_app import selectors, services
from tournaments_app.models import Table, Tournament
from web.demo import reference_bot_upload

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

REFERENCE_MODULES = ["random_bot", "first", "greedy", "expert"]


def reference_bots(owner, count: int) -> list:
    """``count`` bots whose versions are uploads of the reference bots (validation already covered
    by the platform tests; here they are made active directly to keep the run short)."""
    bots = []
    for i in range(count):
        module = REFERENCE_MODULES[i % len(REFERENCE_MODULES)]
        bot = bot_services.bot_create(owner=owner, name=f"{module}-{i}")
        filename, data = reference_bot_upload(module)
        version = bot_services.bot_version_create(bot=bot, filename=filename, data=data, validate=False)
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
        bots.append(bot)
    return bots


def points_from_matches(tournament: Tournament) -> dict[str, Fraction]:
    """Each entry's points recomputed from the stored match rows: win 1, draw 1/2, bye 1."""
    points: dict[str, Fraction] = defaultdict(Fraction)
    for pairing in Table.objects.filter(round__tournament=tournament).prefetch_related("seats__entry"):
        seats = {s.seat: s.entry for s in pairing.seats.all()}
        if pairing.bye:
            points[seats[0].name] += 1
            continue
        ranks = {s.seat: s.rank for s in pairing.match.seats.all()}
        a, b = ranks[0], ranks[1]
        points[seats[0].name] += Fraction(1) if a < b else Fraction(1, 2) if a == b else Fraction(0)
        points[seats[1].name] += Fraction(1) if b < a else Fraction(1, 2) if a == b else Fraction(0)
    return points


def test_swiss_of_8_and_round_robin_of_6_reference_bots_play_to_finished(celery_worker_factory, docker_client):
    worker = celery_worker_factory(env_extra={"SANDBOX_BACKEND": "docker"})
    organizer = make_user("organizer", staff=True)
    owner = make_user("refs")
    bots = reference_bots(owner, 8)
    rules = ["players=2", "rounds=1"]
    # one owner uploads every reference bot here
    swiss = services.tournament_create(name="E2E Swiss", rules=rules, format="swiss", seed=3, actor=organizer,
                                       allow_same_owner=True)
    robin = services.tournament_create(name="E2E Robin", rules=rules, format="round_robin", seed=4, actor=organizer,
                                       allow_same_owner=True)
    for bot in bots:
        services.entry_add(swiss, bot, actor=organizer)
    for bot in bots[:6]:
        services.entry_add(robin, bot, actor=organizer)
    started = time.monotonic()
    swiss = services.tournament_start(swiss, actor=organizer)
    robin = services.tournament_start(robin, actor=organizer)
    assert (swiss.total_rounds, robin.total_rounds) == (3, 5)

    deadline = time.monotonic() + 420
    while time.monotonic() < deadline:
        statuses = set(Tournament.objects.filter(pk__in=[swiss.pk, robin.pk]).values_list("status", flat=True))
        if statuses <= {"finished"} or not statuses <= {"running", "finished"}:
            break
        time.sleep(1)
    elapsed = time.monotonic() - started
    failed = list(Match.objects.filter(kind="tournament").exclude(status="done").values_list("pk", "status", "error"))
    for tournament in (swiss, robin):
        tournament.refresh_from_db()
        log = "\n".join(tournament.events.order_by("pk").values_list("message", flat=True))
        assert tournament.status == "finished", f"{tournament} is {tournament.status}; {failed}\n{log}\n{worker.log[-3000:]}"
    print(f"27 tournament matches played by one worker in {elapsed:.1f} s")

    matches = Match.objects.filter(kind="tournament")
    assert matches.count() == 12 + 15
    assert set(matches.values_list("status", flat=True)) == {"done"}
    assert {m.timings["backend"] for m in matches} == {"docker"}
    assert all(m.attempts == 1 for m in matches)
    for tournament, tables in ((swiss, 12), (robin, 15)):
        pairings = Table.objects.filter(round__tournament=tournament, bye=False)
        assert pairings.count() == tables and not pairings.filter(done=False).exists()
        meetings = [frozenset(s.entry_id for s in p.seats.all()) for p in pairings]
        assert len(set(meetings)) == tables  # no rematch in the Swiss; each pair once in the round robin
        # the frozen versions are the ones that played
        for pairing in pairings:
            assert [s.entry.version_id for s in pairing.seats.order_by("seat")] == [
                s.bot_version_id for s in pairing.match.seats.order_by("seat")]
        standings = selectors.tournament_standings(tournament)
        expected = points_from_matches(tournament)
        assert {row.entry.name: Fraction(row.points) for row in standings} == expected
        ranked = [expected[row.entry.name] for row in standings]
        assert ranked == sorted(ranked, reverse=True)
        assert sum(ranked) == tables  # one point per 2-seat table, no byes in even fields
    assert {frozenset(p) for p in combinations([e.pk for e in robin.entries.all()], 2)} == {
        frozenset(s.entry_id for s in p.seats.all()) for p in Table.objects.filter(round__tournament=robin)}


def linger(match):
    """A result hook that holds its transaction open a moment."""
    time.sleep(0.5)


@pytest.mark.django_db(transaction=True)
def test_the_last_two_results_of_a_round_stored_at_once_pair_the_next_round_once(settings):
    """Two workers store a round's last two results at the same instant (PostgreSQL row locks).

    A second hook holds each result's transaction open for a moment after the
    tournament's hook ran, so the two transactions surely overlap: without the
    tournament's row lock each would see the other's table still open and
    nobody would pair round 2.
    """
    if connection.vendor != "postgresql":
        service_missing("PostgreSQL test database (set DATABASE_URL=postgresql://...)")
    tournament = tournament_with(field(4, make_user("racer")), name="Race", format="round_robin")
    matches = open_matches(tournament)
    tokens = [match_services.match_start(m.pk) for m in matches]
    barrier = threading.Barrier(2)
    errors: list = []

    def store(match, token):
        try:
            outcome = played_match([1, 2], scores=[100, 0], replay={})
            barrier.wait(timeout=10)
            match_services.match_record_result(match.pk, token, outcome)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    table = dict(settings.MATCH_RESULT_HOOKS)
    settings.MATCH_RESULT_HOOKS = {**table, "tournament": [*table["tournament"], f"{__name__}.linger"]}
    threads = [threading.Thread(target=store, args=(m, t)) for m, t in zip(matches, tokens, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors, errors
    tournament = refreshed(tournament)
    assert tournament.current_round == 2
    assert tournament.round_set.count() == 2
    assert len(open_matches(tournament)) == 2
    assert tournament.events.filter(action="round paired").count() == 2
