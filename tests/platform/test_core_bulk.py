"""core.bulk.bulk_set: many rows' columns in one statement, each value as the field stores it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from core.bulk import bulk_set
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine.rules import Rules
from matches import services
from matches.models import Match, MatchSeat

pytestmark = [pytest.mark.django_db]


def matches(n: int) -> list[Match]:
    rules = Rules.parse(["players=2", "rounds=1"])
    return [services.match_create(kind="challenge", rules=rules, seats=["first", "random"], seed=i, enqueue=False)
            for i in range(n)]


@pytest.mark.parametrize("rows", [10, 100])
def test_every_column_of_every_row_is_written_in_one_statement(postgresql_db, rows):
    made = matches(rows)
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    untouched = {m.pk: m.seed for m in made}
    for i, match in enumerate(made):
        match.attempts = i
        match.worker = f"w{i}'; DROP TABLE x; --"
        match.avoid_until = None if i % 2 else when + timedelta(seconds=i)
        match.timings = {"seats": [{"start": i / 10, "name": "é\u2603"}], "none": None}
        match.replay_gz = bytes([i % 256, 0, 255])
        match.seed = -1  # not among the fields written
    with CaptureQueriesContext(connection) as queries:
        assert bulk_set(made, ["attempts", "worker", "avoid_until", "timings", "replay_gz"]) == rows
    assert len(queries) == 1
    for i, match in enumerate(Match.objects.filter(pk__in=untouched).order_by("pk")):
        assert match.attempts == i
        assert match.worker == f"w{i}'; DROP TABLE x; --"
        assert match.avoid_until == (None if i % 2 else when + timedelta(seconds=i))
        assert match.timings == {"seats": [{"start": i / 10, "name": "é\u2603"}], "none": None}
        assert bytes(match.replay_gz) == bytes([i % 256, 0, 255])
        assert match.seed == untouched[match.pk]


def test_seats_columns_with_nulls_booleans_and_json_lists(postgresql_db):
    seats = list(MatchSeat.objects.filter(match__in=matches(3)).order_by("pk"))
    for i, seat in enumerate(seats):
        seat.score = None if i == 0 else i + 0.5
        seat.rank = i + 1
        seat.forfeited = i == 2
        seat.faults = [{"kind": "timeout", "reason": f"r{i}"}] if i else []
        seat.log_marks = {}
    bulk_set(seats, ["score", "rank", "forfeited", "faults", "log_marks"])
    stored = list(MatchSeat.objects.filter(pk__in=[s.pk for s in seats]).order_by("pk"))
    assert [s.score for s in stored] == [None, *[i + 0.5 for i in range(1, len(seats))]]
    assert [s.rank for s in stored] == list(range(1, len(seats) + 1))
    assert [s.forfeited for s in stored] == [i == 2 for i in range(len(seats))]
    assert stored[0].faults == [] and stored[1].faults == [{"kind": "timeout", "reason": "r1"}]


def test_nothing_to_write_sends_nothing_and_an_unsaved_row_is_refused(postgresql_db):
    with CaptureQueriesContext(connection) as queries:
        assert bulk_set([], ["worker"]) == 0
    assert len(queries) == 0
    with pytest.raises(ValueError, match="saved objects only"):
        bulk_set([Match(kind="challenge", rules={}, seed=1)], ["worker"])
