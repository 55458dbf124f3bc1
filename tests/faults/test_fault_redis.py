"""Redis (the broker) crashes in the middle of a batch of matches and comes back, with its data
(an append-only file synced at every write) or empty (no persistence): every match still ends
exactly once, without a person. The test's own redis-server: the machine's shared Redis is
never restarted. Real worker subprocess, PostgreSQL, Docker."""

from __future__ import annotations

import time

import pytest
from faultsupport import (
    SandboxWatch,
    all_finished,
    assert_each_played_once,
    assert_nothing_left,
    ladder_with_matches,
)
from testsupport import wait_for

from matches.models import Match

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

#: every match ends within this many seconds of the broker's return
DONE_WITHIN = 60.0


@pytest.mark.parametrize("keep_data", [True, False], ids=["data-kept", "data-lost"])
def test_every_match_ends_once_after_redis_restarts(keep_data, broker, workers, seats, docker_client):
    worker = workers.start("redis", SANDBOX_WORK_DIR=seats)
    item, matches = ladder_with_matches(f"redis-{'kept' if keep_data else 'lost'}", 2, delay=0.05)
    with SandboxWatch([m.pk for m in matches]) as watch:
        wait_for("a match to start", lambda: Match.objects.filter(pk__in=[m.pk for m in matches], status="running").exists(), 60, worker)
        broker.crash()
        time.sleep(2.0)
        broker.start()
        back = time.monotonic()
        if not keep_data:
            # nothing of the queued matches' messages survived (the worker may have declared its queues again)
            assert not any(key.startswith(b"matches") and key != b"matches" for key in broker.keys())
        wait_for("every match", lambda: all_finished(matches), 120, worker)
        took = time.monotonic() - back
    assert took < DONE_WITHIN
    assert_each_played_once(item, matches)
    assert all(row.attempts <= 2 for row in Match.objects.filter(pk__in=[m.pk for m in matches]))
    if not keep_data:
        assert "the broker lost its data: sent the" in worker.log
    assert_nothing_left(watch, docker_client, [seats])
    print(f"\nRedis restarted ({'data kept' if keep_data else 'data lost'}): both matches done {took:.1f} s after it was back")
