"""``manage.py pipeline_bench`` at a tiny size against the real services (PostgreSQL, Redis, Celery
workers it starts itself, Docker seats): the report's shape, every queued match played, and
nothing of the run left (rows, Redis keys, containers, seat folders). Its figures are not
checked here: it is a benchmark, run by hand (docs/performance.md)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from testsupport import make_user, service_urls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.services]


@pytest.mark.docker
@pytest.mark.slow
def test_pipeline_bench_plays_every_queued_match_reports_its_shares_and_leaves_nothing(docker_client, redis_url):
    import redis
    from core.models import WorkerHeartbeat
    from django.contrib.auth import get_user_model

    from bots.models import Bot
    from ladders.models import Ladder
    from matches.models import Match
    from web import pipelinebench

    service_urls()  # PostgreSQL and a Redis broker, or a clear skip/failure
    out = io.StringIO()
    call_command("pipeline_bench", "--matches", "2", "--workers", "1", "--json", stdout=out)
    report = json.loads(out.getvalue())

    assert (report["two_seat"], report["four_seat"], report["workers"], report["cores"]) == (1, 1, 1, 1)
    assert report["complete"] is True
    assert report["statuses"] == {"done": 2}, report["statuses"]
    assert report["attempts"] == 2  # each match started once
    for key in ("matches_per_s_per_core", "floor_ratio", "inprocess_ratio", "seat_start_p50_s",
                "decisions_per_s_per_core", "two_seat_matches_per_s_per_core", "two_seat_floor_ratio"):
        assert isinstance(report[key], float) and report[key] > 0, (key, report[key])
    assert set(report["shares"]) == {"seat_start", "decisions", "stop", "bookkeeping"}
    assert all(0 <= share <= 1 for share in report["shares"].values()), report["shares"]
    assert sum(report["shares"].values()) == pytest.approx(1, abs=0.002)
    assert report["shares"]["decisions"] > 0 and report["shares"]["seat_start"] > 0
    assert report["floors"]["inprocess"]["matches_per_s_per_core"] > 0
    assert report["floors"]["containers"]["container_p50_s"] > 0
    assert report["floors"]["containers_two_seat"]["matches_per_s_per_core"] > 0  # the 2-seat target's ceiling
    assert report["floors"]["containers"]["cpu_ms_per_container"] > 0
    assert report["two_seat_basis"] == "derived"  # a mixed run: the 2-seat rate comes from its 2-seat matches
    assert set(report["targets"]) == {"two_seat_matches_per_s_per_core >= 2", "seat_start_p50_s < 0.050",
                                      "bookkeeping < 10%"}
    # the workers stopped with nothing of theirs left; the bench removed its rows and keys
    assert report["left_behind"] == {"containers": 0, "seat_folders": 0}
    assert not Match.objects.filter(pk__in=report["match_ids"]).exists()
    assert not Match.objects.exists()
    assert not Ladder.objects.exists() and not Bot.objects.exists()
    assert not get_user_model().objects.exists()
    assert not WorkerHeartbeat.objects.filter(hostname__startswith=pipelinebench.BENCH_PREFIX).exists()
    prefix = f"{pipelinebench.BENCH_PREFIX}{report['tag']}:"
    assert list(redis.Redis.from_url(redis_url).scan_iter(match=prefix + "*")) == []
    # this run's floor containers (another run's on the same engine may come and go meanwhile)
    floors = {"label": f"{pipelinebench.FLOOR_LABEL}={report['tag']}"}
    assert docker_client.containers.list(all=True, filters=floors, ignore_removed=True) == []
    assert report["kept"] is False


def test_pipeline_bench_refuses_a_database_with_real_users_and_creates_nothing(redis_url):
    from bots.models import Bot
    from ladders.models import Ladder

    make_user("ada")
    with pytest.raises(CommandError, match="--force"):
        call_command("pipeline_bench", "--matches", "2", "--workers", "1", "--json", stdout=io.StringIO())
    assert not Ladder.objects.exists() and not Bot.objects.exists()


def test_pipeline_bench_refuses_bad_sizes():
    with pytest.raises(CommandError, match="--matches"):
        call_command("pipeline_bench", "--matches", "0", stdout=io.StringIO())
