"""A ladder's recent matches come from its own newest ladder matches: a ladder that other ladders
have long outplayed lists its own matches, and PostgreSQL reads about as many rows as it lists,
not every newer match of the site."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from tests.testsupport import service_missing

pytestmark = pytest.mark.django_db


def _ladder_with_matches(name: str, count: int):
    from ladders.models import Ladder, LadderMatch
    from matches.models import Match

    ladder = Ladder.objects.create(name=name, slug=name, rules={"players": 2})
    matches = Match.objects.bulk_create(
        Match(kind="ladder", status="done", rules={"players": 2}, seed=n) for n in range(count)
    )
    LadderMatch.objects.bulk_create(LadderMatch(ladder=ladder, match=match) for match in matches)
    return ladder, [m.pk for m in matches]


def _plan_rows(plan: dict) -> int:
    """The most rows any node of a JSON plan produced (every loop counted)."""
    own = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 1)
    return max([own, *(_plan_rows(child) for child in plan.get("Plans", []))])


def test_a_quiet_ladder_lists_its_own_newest_matches_reading_only_those():
    from ladders import selectors

    quiet, quiet_ids = _ladder_with_matches("quiet", 5)
    _ladder_with_matches("busy", 400)  # newer: every one of them after the quiet ladder's

    assert [m.pk for m in selectors.ladder_matches(quiet, limit=3)] == sorted(quiet_ids, reverse=True)[:3]

    if connection.vendor != "postgresql":
        service_missing("PostgreSQL (DATABASE_URL=postgresql://...): the rows a plan reads")
    sql, params = selectors.ladder_matches_query(quiet, limit=3).query.sql_with_params()
    with connection.cursor() as cursor:
        # at this size a sequential scan is cheaper, as the planner rightly picks; at the size of a
        # site the indexes are what it reads: take them here
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    # walking the site's matches newest first until 3 of this ladder turned up read all 400 newer ones
    assert _plan_rows(plan[0]["Plan"]) <= 5
