"""A version's page gives its author its numbers (results by seat count and by opponent, rating change
per ladder match, faults and timeouts with their reasons, the distribution of decision times), each
one aggregate in the database, so the page's queries stay the same at any history size; a match page
links its ladder or tournament and shows each seat's rating change; match tables stack at 390 px.

The same SQL runs on PostgreSQL and SQLite (the embedded default): these tests run on whichever the
suite is given (`make check`: SQLite; the full suite: PostgreSQL), and on PostgreSQL the last test
runs them again on SQLite, so both databases answer every run."""

from __future__ import annotations

import doctest
import hashlib
import os
import re
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.scale.test_scale_query_counts import MAX_QUERIES
from tests.testsupport import make_user, played_match

pytestmark = [pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[2]
_clock = [timezone.now() - timedelta(days=30)]


def _version(owner, name: str):
    from bots.models import Bot, BotVersion

    bot = Bot.objects.create(owner=owner, name=name)
    source = f"# {name}".encode()
    return BotVersion.objects.create(
        bot=bot, number=1, filename="main.py", source=source, sha256=hashlib.sha256(source).hexdigest(),
        size=len(source), status=BotVersion.Status.ACTIVE,
    )


def _play(seats, *, kind="ladder", status="done"):
    """One match with ``seats``: (version or reference name, rank, extra seat fields, timing or None),
    queued a minute after the previous one."""
    from matches.models import Match, MatchSeat

    if status == "done":
        _results_stored()
    _clock[0] += timedelta(minutes=1)
    timings = [t or {"decisions": 0, "mean": None, "max": 0.0} for *_, t in seats]
    match = Match.objects.create(kind=kind, status=status, rules={"players": len(seats)}, seed=1,
                                 timings={"backend": "process", "seats": timings})
    Match.objects.filter(pk=match.pk).update(queued_at=_clock[0])
    match.queued_at = _clock[0]
    for number, (who, rank, extra, _) in enumerate(seats):
        occupant = {"reference_bot": who} if isinstance(who, str) else {"bot_version": who}
        MatchSeat.objects.create(match=match, seat=number, rank=rank, score=None if rank is None else 10.0 * rank, **occupant, **extra)
    return match


def _results_stored() -> None:
    """What a stored result does to the pages' caches (the result hooks, which these rows bypass):
    the versions' numbers are computed again."""
    from django.core.cache import cache

    cache.clear()


def _timing(mean: float, slowest: float) -> dict:
    return {"decisions": 40, "mean": mean, "max": slowest, "total": mean * 40}


def _timeout(reason: str, game: int = 0) -> dict:
    return {"strikes": 1, "fault_kind": "timeout", "fault_reason": reason,
            "faults": [{"game": game, "round": 3, "kind": "timeout", "reason": reason}]}


@pytest.fixture
def versions():
    alice, bob = make_user("alice"), make_user("bob")
    return _version(alice, "mine"), _version(bob, "rival"), _version(bob, "other")


def test_results_by_seat_count_count_finished_matches_and_leave_out_validation(versions):
    from web.bot_stats import version_results_by_seats

    mine, rival, other = versions
    _play([(mine, 1, {}, None), (rival, 2, {}, None)])
    _play([(mine, 1, {}, None), ("random", 2, {}, None)])
    _play([(mine, 2, {"forfeited": True, "fault_kind": "crash", "strikes": 1}, None), (rival, 1, {}, None)])
    _play([(mine, 3, {}, None), (rival, 1, {}, None), (other, 2, {}, None), ("random", 4, {}, None)])
    _play([(mine, 1, {}, None), ("random", 2, {}, None)], kind="validation")  # the platform's test
    _play([(mine, None, {}, None), (rival, None, {}, None)], status="queued")  # not played yet

    rows = version_results_by_seats(mine)

    assert [(r["players"], r["matches"], r["wins"], r["forfeits"], r["strikes"]) for r in rows] == [
        (2, 3, 2, 1, 1), (4, 1, 0, 0, 0)]
    assert rows[0]["mean_rank"] == pytest.approx(4 / 3) and rows[0]["win_rate"] == pytest.approx(2 / 3)
    assert rows[1]["mean_score"] == 30.0


def test_results_by_opponent_name_the_most_met_first_and_stop_at_the_limit(versions):
    from web.bot_stats import version_results_by_opponent

    mine, rival, other = versions
    for _ in range(3):
        _play([(mine, 2, {}, None), (rival, 1, {}, None)])
    _play([(mine, 1, {}, None), (rival, 2, {}, None), (other, 3, {}, None)])
    _play([(mine, 1, {}, None), ("random", 2, {}, None)])
    _play([(mine, 2, {}, None), ("random", 1, {}, None)])

    rows = version_results_by_opponent(mine, limit=2)

    assert [(r["bot_name"] or r["reference_bot"], r["matches"], r["ahead"], r["behind"], r["wins"])
            for r in rows] == [("rival", 4, 1, 3, 1), ("random", 2, 1, 1, 1)]
    assert rows[0]["owner"] == "bob" and rows[0]["bot_id"] == rival.bot_id
    assert len(version_results_by_opponent(mine)) == 3  # "other" comes in without the limit


def test_faults_are_counted_by_kind_with_the_newest_reasons_first(versions):
    from web.bot_stats import version_faults

    mine, rival, _ = versions
    _play([(mine, 2, _timeout("no answer in 1.0 s (first)"), None), (rival, 1, {}, None)])
    _play([(mine, 1, {}, None), (rival, 2, _timeout("not mine"), None)])  # the rival's fault is not counted
    crash = {"forfeited": True, "fault_kind": "crash", "fault_reason": "exit code 1: KeyError 'hand'",
             "faults": [{"game": 1, "round": 7, "kind": "crash", "reason": "exit code 1: KeyError 'hand'"}]}
    _play([(mine, 2, crash, None), (rival, 1, {}, None)])
    _play([(mine, 2, _timeout("no answer in 1.0 s (last)", game=2), None), (rival, 1, {}, None)])

    faults = version_faults(mine, recent=2)

    assert [(k["kind"], k["faults"], k["matches"]) for k in faults["kinds"]] == [("timeout", 2, 2), ("crash", 1, 1)]
    assert [(f["kind"], f["matches"]) for f in faults["forfeits"]] == [("crash", 1)]
    assert [(f["kind"], f["reason"], f["game"], f["round"]) for f in faults["recent"]] == [
        ("timeout", "no answer in 1.0 s (last)", 2, 3), ("crash", "exit code 1: KeyError 'hand'", 1, 7)]


def test_the_decision_time_histogram_buckets_each_matchs_mean_and_slowest_decision(versions):
    from web.bot_stats import version_decision_times

    mine, rival, _ = versions
    _play([(mine, 1, {}, _timing(0.002, 0.5)), (rival, 2, {}, _timing(0.2, 0.9))])
    _play([(mine, 1, {}, _timing(0.002, 0.004)), (rival, 2, {}, _timing(0.2, 0.9))])
    _play([(mine, 1, {}, _timing(0.05, 2.5)), (rival, 2, {}, None)])
    _play([(mine, 1, {}, None), (rival, 2, {}, None)])  # no timed decision: not counted

    times = version_decision_times(mine)

    by_label = {b["label"]: (b["mean"], b["max"]) for b in times["buckets"]}
    assert times["matches"] == 3
    assert by_label["1–3 ms"] == (2, 0) and by_label["30–100 ms"] == (1, 0)
    assert by_label["3–10 ms"] == (0, 1) and by_label["300 ms–1 s"] == (0, 1) and by_label["1–3 s"] == (0, 1)
    assert sum(m for m, _ in by_label.values()) == 3 and sum(x for _, x in by_label.values()) == 3
    assert times["p50"] == pytest.approx(0.002) and times["max"] == pytest.approx(2.5)


def test_the_bot_page_counts_each_versions_matches_wins_and_forfeits(versions):
    from bots.models import BotVersion
    from web.bot_stats import bot_version_results

    mine, rival, _ = versions
    second = BotVersion.objects.create(bot=mine.bot, number=2, filename="main.py", source=b"2", sha256="2" * 64,
                                       size=1, status=BotVersion.Status.ACTIVE)
    _play([(mine, 1, {}, None), (rival, 2, {}, None)])
    _play([(second, 2, {"forfeited": True, "fault_kind": "crash"}, None), (rival, 1, {}, None)])
    _play([(second, 1, {}, None), (rival, 2, {}, None)])
    _play([(second, 1, {}, None), (rival, 2, {}, None)], kind="validation")

    results = bot_version_results(mine.bot)

    assert {v: (r["matches"], r["wins"], r["forfeits"], r["faulty"]) for v, r in results.items()} == {
        mine.pk: (1, 1, 0, 0), second.pk: (2, 1, 1, 1)}
    html = Client().get(mine.bot.get_absolute_url()).content.decode()
    assert f'<a href="{second.get_absolute_url()}#results"' in html and "50%" in html


def _ladder_match(mine, rival, *, before, after):
    from ladders.models import Ladder, LadderEntry, LadderMatch, RatingChange

    ladder, _ = Ladder.objects.get_or_create(name="Main ladder", slug="main", defaults={"rules": {"players": 2}})
    match = _play([(mine, 1, {}, None), (rival, 2, {}, None)])
    LadderMatch.objects.create(ladder=ladder, match=match, rated=after is not None)
    for version, rank, b, a in ((mine, 1, before, after), (rival, 2, before, None if after is None else 2 * before - after)):
        entry, _ = LadderEntry.objects.get_or_create(ladder=ladder, bot=version.bot)
        RatingChange.objects.create(ladder=ladder, match=match, entry=entry, bot_version=version, rank=rank,
                                    before=Decimal(b), after=None if a is None else Decimal(a), matches_after=1)
    return ladder, match


def test_rating_changes_per_ladder_match_newest_first_with_their_total(versions):
    from web.bot_stats import version_rating_changes

    mine, rival, _ = versions
    _ladder_match(mine, rival, before=1500, after=1516)
    _, last = _ladder_match(mine, rival, before=1516, after=1509)
    _ladder_match(mine, rival, before=1509, after=None)  # not fitted yet: listed, not in the total
    _play([(mine, 1, {}, None), (rival, 2, {}, None)], kind="challenge")

    ratings = version_rating_changes(mine, limit=2)

    assert ratings["rated"] == 2 and ratings["gained"] == Decimal(9)
    assert [c.after for c in ratings["changes"]] == [None, Decimal(1509)]
    assert ratings["changes"][1].match_id == last.pk and ratings["changes"][1].ladder.slug == "main"


def test_the_match_page_links_its_ladder_and_shows_each_seats_rating_change(versions):
    mine, rival, _ = versions
    ladder, match = _ladder_match(mine, rival, before=1500, after=1516)

    html = Client().get(f"/matches/{match.pk}/").content.decode()

    assert f'<a href="{ladder.get_absolute_url()}">Main ladder</a>' in html
    assert '1500 → 1516 <span class="gain">(+16)</span>' in html
    assert '1500 → 1484 <span class="loss">(-16)</span>' in html


def test_the_match_page_links_its_tournament_round_and_table(versions):
    from tournaments_app.models import Table, Tournament, TournamentRound

    mine, rival, _ = versions
    tournament = Tournament.objects.create(name="Winter cup", slug="winter", rules={"players": 2})
    match = _play([(mine, 1, {}, None), (rival, 2, {}, None)], kind="tournament")
    Table.objects.create(round=TournamentRound.objects.create(tournament=tournament, number=2, seed=5), number=3, match=match)

    html = Client().get(f"/matches/{match.pk}/").content.decode()

    assert f'<a href="{tournament.get_absolute_url()}">Winter cup</a> <span class="muted">(round 2, table 3)</span>' in html
    assert "Rating</th>" not in html  # no rating column outside rated ladder matches


def _history(mine, rivals, n: int) -> None:
    for i in range(n):
        rival = rivals[i % len(rivals)]
        extra = _timeout(f"no answer ({i})") if i % 3 == 0 else {}
        _play([(mine, 1 + i % 2, extra, _timing(0.001 * (1 + i % 7), 0.01 * (1 + i % 5))), (rival, 2 - i % 2, {}, None)])
    for i in range(n // 4):
        _ladder_match(mine, rivals[i % len(rivals)], before=1500 + i, after=1501 + i)


def _page_queries(client, path: str) -> tuple[int, str]:
    client.get(path)  # warm: sessions, content types
    from django.core.cache import cache

    from bots.models import BotVersion
    from web.bot_stats import _version_stats_key

    cache.delete_many([_version_stats_key(pk) for pk in BotVersion.objects.values_list("pk", flat=True)])  # not cached
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_the_version_page_shows_its_numbers_in_the_same_queries_at_any_history_size(versions):
    mine, rival, other = versions
    rivals = [rival, other] + [_version(rival.bot.owner, f"rival-{i}") for i in range(4)]
    client = Client()
    client.force_login(mine.bot.owner)
    _history(mine, rivals[:2], 8)
    small, _ = _page_queries(client, mine.get_absolute_url())
    bot_small, _ = _page_queries(client, mine.bot.get_absolute_url())
    _history(mine, rivals, 80)
    large, html = _page_queries(client, mine.get_absolute_url())
    bot_large, bot_html = _page_queries(client, mine.bot.get_absolute_url())

    assert large == small < MAX_QUERIES, (small, large)
    assert bot_large == bot_small < MAX_QUERIES, (bot_small, bot_large)
    assert f'href="{mine.get_absolute_url()}#results"' in bot_html
    for heading in ("Results by seat count", "Results by opponent", "Rating change per ladder match",
                    "Faults and timeouts", "Decision times"):
        assert heading in html
    assert "no answer (78)" in html and "no answer (75)" in html  # the newest faults with their reasons
    assert re.search(r'data-label="Matches">\s*110\s*<', html)  # 88 two-seat matches and 22 ladder ones


def test_a_versions_numbers_and_bot_page_line_are_cached_until_a_result_of_one_of_its_matches_is_stored(
    versions, django_capture_on_commit_callbacks
):
    from matches import services as match_services
    from matches.models import MatchSeat
    from web import bot_stats

    mine, rival, other = versions
    _play([(mine, 1, {}, None), (rival, 2, {}, None)])
    assert [r["matches"] for r in bot_stats.version_stats(mine)["by_seats"]] == [1]
    assert bot_stats.bot_version_results(mine.bot)[mine.pk]["wins"] == 1
    assert bot_stats.bot_version_results(other.bot) == {}  # no match yet: cached as none
    assert [r["matches"] for r in bot_stats.version_stats(rival)["by_seats"]] == [1]
    # a row written behind the result path's back is not seen: the numbers come from the cache
    MatchSeat.objects.filter(bot_version=mine).update(rank=2)
    MatchSeat.objects.filter(bot_version=rival).update(rank=1)
    assert bot_stats.version_stats(mine)["by_seats"][0]["wins"] == 1
    assert bot_stats.bot_version_results(mine.bot)[mine.pk]["wins"] == 1

    queued = _play([(mine, None, {}, None), (other, None, {}, None)], kind="challenge", status="queued")
    with django_capture_on_commit_callbacks(execute=True):
        token = match_services.match_start(queued.pk)
        assert match_services.match_record_result(queued.pk, token, played_match([1, 2]))

    mine_now = bot_stats.version_stats(mine)["by_seats"][0]
    assert (mine_now["matches"], mine_now["wins"]) == (2, 1)  # the stored result and the row changed above
    assert (bot_stats.bot_version_results(mine.bot)[mine.pk]["matches"]) == 2  # the bot page's line too
    assert bot_stats.version_stats(rival)["by_seats"][0]["wins"] == 0  # rival played in neither: still cached
    assert [r["matches"] for r in bot_stats.version_stats(other)["by_seats"]] == [1]
    assert bot_stats.bot_version_results(other.bot)[other.pk]["matches"] == 1


def test_match_tables_label_every_cell_so_they_stack_at_390_px(versions):
    mine, rival, _ = versions
    _, match = _ladder_match(mine, rival, before=1500, after=1516)
    client = Client()
    for path in ("/matches/", f"/matches/{match.pk}/", mine.get_absolute_url(), mine.bot.get_absolute_url()):
        html = client.get(path).content.decode()
        tables = re.findall(r'<table class="stack[^"]*">.*?</table>', html, re.S)
        assert tables, path
        for table in tables:
            body = table.split("<tbody>", 1)[1]
            cells = re.findall(r"<td[^>]*>", body)
            assert cells and all("data-label=" in cell for cell in cells), (path, [c for c in cells if "data-label" not in c])
    assert '<td class="seats" data-label="Seats">' in client.get("/matches/").content.decode()


def test_the_numbers_cover_the_newest_window_of_seats_and_the_page_says_so(versions, monkeypatch):
    from web import bot_stats as selectors

    mine, rival, _ = versions
    _play([(mine, 2, _timeout("old and outside the window"), _timing(2.0, 2.5)), (rival, 1, {}, None)])
    for _ in range(3):
        _play([(mine, 1, {}, _timing(0.002, 0.004)), (rival, 2, {}, None)])
    monkeypatch.setattr(selectors, "STATS_WINDOW", 3)

    stats = selectors.version_stats(mine)

    assert stats["windowed"] and [(r["players"], r["matches"], r["wins"]) for r in stats["by_seats"]] == [(2, 3, 3)]
    assert stats["faults"]["kinds"] == [] and stats["decisions"]["matches"] == 3 and stats["decisions"]["max"] == 0.004
    line = selectors.bot_version_results(mine.bot)[mine.pk]
    assert line["matches"] == 3 and line["windowed"]
    assert "of its newest 3 matches: it played more" in Client().get(mine.bot.get_absolute_url()).content.decode()
    html = Client().get(mine.get_absolute_url()).content.decode()
    assert "this version has played more than 3" in html
    monkeypatch.setattr(selectors, "STATS_WINDOW", 4)
    _results_stored()  # a new window is a new deployment: no process keeps the old numbers
    assert not selectors.version_stats(mine)["windowed"]


def test_a_known_history_gives_every_number_of_the_version_page(versions):
    """One version's whole page of numbers from a history whose every figure is known, on this
    database: results by seats and by opponent, faults with reasons, decision-time buckets and
    percentiles (interpolated as PostgreSQL's percentile_cont), rating changes, and the bot page line."""
    from web import bot_stats as selectors

    mine, rival, other = versions
    # the timed means, 0.5, 2, 4 and 8 ms: p50 at 0.5 * 3 = 1.5 is 2 + 0.5 * 2 ms, p95 at 2.85 is 4 + 0.85 * 4 ms
    _play([(mine, 1, {}, _timing(0.0005, 0.002)), (rival, 2, {}, None)])
    _play([(mine, 2, _timeout("no answer in 1.0 s"), _timing(0.002, 1.2)), (rival, 1, {}, None)])
    _play([(mine, 1, {}, _timing(0.004, 0.02)), (rival, 3, {}, None), ("random", 2, {}, None)])
    two = {"forfeited": True, "strikes": 2, "fault_kind": "crash", "fault_reason": "exit code 1",
           "faults": [{"game": 0, "round": 4, "kind": "timeout", "reason": "slow"},
                      {"game": 1, "round": 9, "kind": "crash", "reason": "exit code 1"}]}
    _play([(mine, 3, two, _timing(0.008, 4.0)), (other, 1, {}, None), (rival, 2, {}, None)])
    _, first = _ladder_match(mine, rival, before=1500, after=1512)  # no decision timed: not in the times
    _, last = _ladder_match(mine, other, before=1512, after=1507)
    _play([(mine, 1, {}, _timing(0.016, 0.05)), (rival, 2, {}, None)], kind="validation")  # not counted

    stats = selectors.version_stats(mine)

    assert stats["windowed"] is False
    assert [(r["players"], r["matches"], r["wins"], r["forfeits"], r["strikes"]) for r in stats["by_seats"]] == [
        (2, 4, 3, 0, 1), (3, 2, 1, 1, 2)]
    assert stats["by_seats"][0]["mean_rank"] == pytest.approx(1.25) and stats["by_seats"][1]["mean_score"] == 20.0
    assert [(r["bot_name"] or r["reference_bot"], r["matches"], r["ahead"], r["behind"], r["wins"])
            for r in stats["by_opponent"]] == [("rival", 5, 3, 2, 3), ("other", 2, 1, 1, 1), ("random", 1, 1, 0, 1)]
    faults = stats["faults"]
    assert [(k["kind"], k["faults"], k["matches"]) for k in faults["kinds"]] == [("timeout", 2, 2), ("crash", 1, 1)]
    assert [(f["kind"], f["matches"]) for f in faults["forfeits"]] == [("crash", 1)]
    assert [(f["kind"], f["reason"], f["game"], f["round"]) for f in faults["recent"]] == [
        ("crash", "exit code 1", 1, 9), ("timeout", "slow", 0, 4), ("timeout", "no answer in 1.0 s", 0, 3)]
    times = stats["decisions"]
    assert times["matches"] == 4 and times["max"] == 4.0
    assert times["p50"] == pytest.approx(0.003) and times["p95"] == pytest.approx(0.0074)
    by_label = {b["label"]: (b["mean"], b["max"]) for b in times["buckets"]}
    assert by_label["< 1 ms"] == (1, 0) and by_label["1–3 ms"] == (1, 1) and by_label["3–10 ms"] == (2, 0)
    assert by_label["10–30 ms"] == (0, 1) and by_label["1–3 s"] == (0, 1) and by_label["≥ 3 s"] == (0, 1)
    ratings = stats["ratings"]
    assert ratings["rated"] == 2 and ratings["gained"] == Decimal(7)
    assert [(c.match_id, c.before, c.after) for c in ratings["changes"]] == [
        (last.pk, Decimal(1512), Decimal(1507)), (first.pk, Decimal(1500), Decimal(1512))]
    line = selectors.bot_version_results(mine.bot)[mine.pk]
    assert (line["matches"], line["wins"], line["forfeits"], line["faulty"], line["windowed"]) == (6, 4, 1, 2, False)
    assert line["win_rate"] == pytest.approx(4 / 6)


def test_the_examples_in_the_selectors_docstrings_hold():
    from web import bot_stats as selectors

    assert doctest.testmod(selectors).failed == 0


@pytest.mark.slow
def test_the_numbers_are_the_same_on_sqlite():
    """On PostgreSQL, this module again on SQLite (an in-memory test database, as `make check`): the
    one SQL text answers both. On SQLite the module has just run there."""
    if connection.vendor == "sqlite":
        pytest.skip("this run is on SQLite already")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "ARENA_REQUIRE_SERVICES")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", __file__],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
