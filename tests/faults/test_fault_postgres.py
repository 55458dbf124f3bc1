"""PostgreSQL drops every worker's connection again and again for 20 s (pg_terminate_backend on
the test database's connections but the test's own) while matches play: every match ends
exactly once, rated once, within 60 s of the end of the outage (issue 18's target).
Real worker subprocesses, Redis (the test's own), Docker."""

from __future__ import annotations

import threading
import time

import pytest
from faultsupport import (
    SandboxWatch,
    all_finished,
    assert_each_played_once,
    assert_nothing_left,
    ladder_with_matches,
    seats_folder,
)
from testsupport import service_urls, wait_for

from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

OUTAGE_SECONDS = 20.0
#: every match completes within this many seconds of the outage's end
DONE_WITHIN = 60.0


class Terminator(threading.Thread):
    """Terminates the test database's other connections every ``every`` s for ``seconds`` s."""

    def __init__(self, spare: list[int], seconds: float, every: float = 0.5):
        super().__init__(daemon=True)
        self.spare, self.seconds, self.every = spare, seconds, every
        self.terminated = 0

    def run(self):
        import psycopg

        database_url, _ = service_urls()
        with psycopg.connect(database_url, autocommit=True) as conn:
            end = time.monotonic() + self.seconds
            while time.monotonic() < end:
                rows = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND NOT (pid = ANY(%s))", (self.spare,),
                ).fetchall()
                self.terminated += sum(1 for (ok,) in rows if ok)
                time.sleep(self.every)


def test_matches_survive_connections_terminated_for_20_s(workers, docker_client):
    from django.db import connection

    with seats_folder() as one, seats_folder() as two:
        first = workers.start("pg-a", SANDBOX_WORK_DIR=one)
        workers.start("pg-b", SANDBOX_WORK_DIR=two)
        item, matches = ladder_with_matches("pg", 6, delay=0.08)
        with SandboxWatch([m.pk for m in matches]) as watch:  # it reconnects when its connection is cut
            wait_for("a match to start", lambda: Match.objects.filter(pk__in=[m.pk for m in matches], status="running").exists(), 60, first)
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                mine = cursor.fetchone()[0]
            terminator = Terminator([mine], OUTAGE_SECONDS)
            terminator.start()
            terminator.join()
            ended = time.monotonic()
            wait_for("every match", lambda: all_finished(matches), 120, first)
            took = time.monotonic() - ended
        assert terminator.terminated > 10, "the test cut hardly any connection"
        assert took < DONE_WITHIN, f"matches done {took:.1f} s after the outage"
        assert_each_played_once(item, matches)
        assert_nothing_left(watch, docker_client, [one, two])
    print(f"\nPostgreSQL connections terminated {terminator.terminated} times over {OUTAGE_SECONDS:.0f} s: "
          f"all 6 matches done {took:.1f} s after")
