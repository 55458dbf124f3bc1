"""manage.py seed_scale: what it writes is shaped as the platform writes it, it refuses a database
with real users, and every page and API list or detail of a seeded site answers 200."""

from __future__ import annotations

import gzip
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from web import loadbench, scale


@pytest.fixture
def seeded(db):
    out = StringIO()
    call_command("seed_scale", bots=20, matches=200, ladders=2, tournaments=2, stdout=out)
    return out.getvalue()


@pytest.mark.slow  # seeds a small platform: a minute of setup under load: tens of seconds, left out of make check
def test_a_small_seed_is_shaped_as_the_platform_writes_and_every_page_answers_200(seeded):
    from bots.models import Bot, BotVersion
    from ladders.models import LadderEntry, LadderMatch, RatingChange
    from matches.models import Match, MatchSeat
    from tournaments_app.models import Tournament

    assert Bot.objects.count() == 20
    assert not BotVersion.objects.exclude(status=BotVersion.Status.ACTIVE).exists()
    ladder_matches = Match.objects.filter(kind=Match.Kind.LADDER)
    assert ladder_matches.count() == 200
    assert not ladder_matches.exclude(status=Match.Status.DONE).exists()
    assert LadderMatch.objects.filter(rated=True).count() == 200
    # every seat of a ladder match has its rating change, and every entry's rating is its last one
    assert RatingChange.objects.count() == MatchSeat.objects.filter(match__kind=Match.Kind.LADDER).count()
    for entry in LadderEntry.objects.filter(matches_played__gt=0):
        last = RatingChange.objects.filter(entry=entry).order_by("-pk").first()
        assert (last.after, last.matches_after) == (entry.rating, entry.matches_played)
    # the replay is a real one and names the code that sits in each seat
    for match in ladder_matches.order_by("?")[:10]:
        replay = json.loads(gzip.decompress(bytes(match.replay_gz)))
        seats = list(match.seats.select_related("bot_version").order_by("seat"))
        assert replay["seed"] == match.seed
        assert [name.split("@")[0] for name in replay["names"]] == [s.bot_version.filename for s in seats]
        assert min(s.rank for s in seats) == 1
    assert set(Tournament.objects.values_list("status", flat=True)) == {Tournament.Status.FINISHED}
    assert set(Tournament.objects.values_list("format", flat=True)) == {"round_robin", "swiss"}
    assert "total:" in seeded
    # every page and API list or detail a visitor meets answers 200, ladders and tournaments included
    paths = loadbench.discover_paths()
    labels = {label for label, _ in paths}
    assert {"ladder", "ladder bot", "swiss", "round robin", "matches deep", "replay page"} <= labels
    client = Client()
    for _label, path in [*paths, ("trivial", loadbench.TRIVIAL)]:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)


def test_it_refuses_a_database_with_real_users_unless_forced(db, django_user_model):
    django_user_model.objects.create_user("someone", password="a real password 123")
    with pytest.raises(CommandError, match="1 user"):
        call_command("seed_scale", bots=4, matches=0, ladders=1, tournaments=0, stdout=StringIO())
    call_command("seed_scale", bots=4, matches=0, ladders=1, tournaments=0, force=True, stdout=StringIO())
    assert scale.real_users().count() == 1


def test_a_seeded_username_with_a_usable_password_is_a_real_user(db, django_user_model):
    django_user_model.objects.create_user(f"{scale.SEED_PREFIX}impostor", password="a real password 123")
    assert scale.real_users().count() == 1


def test_load_bench_requests_only_this_machine():
    for url in ("http://10.0.0.1:8000", "http://example.com", "https://127.0.0.1:8000", "http://192.168.1.2"):
        with pytest.raises(loadbench.BenchError):
            loadbench.check_url(url)
    assert loadbench.check_url("http://127.0.0.1:8123") == ("127.0.0.1", 8123)
    assert loadbench.check_url("http://localhost:9") == ("localhost", 9)


@pytest.mark.slow  # seeds a small platform (tens of seconds), left out of make check
@pytest.mark.django_db(transaction=True)  # the lock probe reads the seeded rows on a connection of its own
def test_the_ladder_work_bench_times_matchmaking_rolled_back_and_probes_the_locks_of_the_check_and_refit():
    from ladders.models import Ladder
    from matches.models import Match
    from web import ladderbench

    call_command("seed_scale", bots=20, matches=120, ladders=2, tournaments=0, stdout=StringIO())
    matches_before = Match.objects.count()
    report = ladderbench.run(repeat=2)
    assert Match.objects.count() == matches_before  # every matchmaking pass was rolled back
    assert {row["ladder"] for row in report["matchmaking"]} == set(Ladder.objects.values_list("slug", flat=True))
    for row in report["matchmaking"]:
        assert row["passes"] == 2 and row["matches_made"][0] >= 1
        assert len(row["queries"]) == 1  # the same count at every pass
    assert report["check"]["differences"] == 0
    for work in ("check", "refit"):
        locks = report[work]["locks"]
        assert locks["probes"] >= 1 and locks["blocked"] == 0
    assert report["refit"]["written"] and report["refit"]["entries_moved"] == 20
    assert ladderbench.run(repeat=1)["check"]["differences"] == 0  # the refit wrote the fit back
    out = StringIO()
    call_command("load_bench", only_ladder_work=True, stdout=out)
    assert "refit of" in out.getvalue() and "lock probes meanwhile" in out.getvalue()


def test_the_ladder_work_bench_refuses_a_database_with_real_users(db, django_user_model):
    django_user_model.objects.create_user("someone", password="a real password 1")
    with pytest.raises(CommandError, match="real users"):
        call_command("load_bench", only_ladder_work=True, stdout=StringIO())
