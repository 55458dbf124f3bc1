"""Two matchmaking runs at once (two beat deliveries, or beat and the admin) never exceed the cap.

Needs PostgreSQL: SQLite serialises every writer anyway, so it would prove nothing.
"""

from __future__ import annotations

import random
import threading

import pytest
from django.db import connection, connections
from ladder_helpers import active_bot, bots_of, ladder
from testsupport import service_missing

from ladders import services
from ladders.models import LadderMatch
from matches import services as match_services

pytestmark = [pytest.mark.services]


def test_concurrent_matchmaking_runs_respect_the_cap_and_seat_each_bot_once(transactional_db, monkeypatch):
    if connection.vendor != "postgresql":
        service_missing("PostgreSQL test database (set DATABASE_URL=postgresql://...)")
    monkeypatch.setattr(match_services, "match_enqueue", lambda match, countdown=None: None)  # no worker here
    on = ladder(max_pending=2)
    for i in range(8):
        services.ladder_enter(on, active_bot(f"b{i}"))
    start = threading.Barrier(4)
    errors = []

    def run(seed):
        try:
            start.wait()
            services.ladder_matchmake(on, rng=random.Random(seed))
        except Exception as exc:  # reported below: an exception in a thread would vanish
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    matches = [link.match for link in LadderMatch.objects.filter(ladder=on).select_related("match")]
    assert len(matches) == 2
    seated = [bot for match in matches for bot in bots_of(match)]
    assert len(seated) == len(set(seated))
