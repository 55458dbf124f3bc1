"""Tournament services: start, automatic rounds, finish, pause/resume, re-run, withdraw, cancel, the log."""

from __future__ import annotations

import pytest
from tournament_helpers import (
    active_bot,
    field,
    finish,
    make_user,
    open_matches,
    play_round,
    refreshed,
    tournament_with,
)

from bots import services as bot_services
from bots.models import BotVersion
from engine.rules import Rules
from matches import hooks
from matches import services as match_services
from matches.models import Match
from tournaments_app import services
from tournaments_app.models import Entry, Table, Tournament, TournamentRound
from tournaments_app.services import TournamentError

pytestmark = pytest.mark.django_db


def test_create_refuses_bad_options_naming_the_value():
    with pytest.raises(TournamentError, match="'players'"):
        services.tournament_create(name="x", rules={"players": 11})
    with pytest.raises(TournamentError, match="'bogus'"):
        services.tournament_create(name="x", rules=["players=2"], tie_breaks=["bogus"])
    with pytest.raises(TournamentError, match="'knockout'"):
        services.tournament_create(name="x", rules=["players=2"], format="knockout")
    with pytest.raises(TournamentError, match="got 0"):
        services.tournament_create(name="x", rules=["players=2"], deals=0)
    with pytest.raises(TournamentError, match="cycles instead"):
        services.tournament_create(name="x", rules=["players=2"], format="round_robin", rounds=3)
    with pytest.raises(TournamentError, match="slug"):
        services.tournament_create(name="!!!", rules=["players=2"])
    # hand_size 16 fits 6 players (96 cards) but not the 7-seat tables a field of 5-seat tables may need
    with pytest.raises(TournamentError, match="table of 7 seats"):
        services.tournament_create(name="x", rules=["players=6", "hand_size=16"])
    services.tournament_create(name="Fine", rules=["players=2"])
    with pytest.raises(TournamentError, match="'fine' is taken"):
        services.tournament_create(name="fine", rules=["players=2"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rules": "players=2"}, "rules must be an object"),
        ({"rules": {"players": "many"}}, "invalid rules"),
        ({"rules": [1, 2]}, "rules must be an object"),
        ({"tie_breaks": 5}, "got 5"),
        ({"tie_breaks": ["buchholz", "buchholz"]}, "distinct"),
        ({"seed": 2**70}, "seed must be"),
        ({"deals": True}, "got True"),
        ({"rounds": 0}, "rounds must be"),
        ({"name": "x" * 101}, "1 to 100 characters"),
    ],
)
def test_hostile_options_are_refused_with_the_value(options, message):
    with pytest.raises(TournamentError, match=message):
        services.tournament_create(**{"name": "Cup", "rules": ["players=2"], **options})
    assert not Tournament.objects.exists()


def test_an_entry_needs_an_active_version_and_enters_once(owner):
    tournament = services.tournament_create(name="Cup", rules=["players=2"])
    waiting = active_bot(owner, "waiting", active=False)
    with pytest.raises(TournamentError, match="owner/waiting has no active version"):
        services.entry_add(tournament, waiting)
    ready = active_bot(owner, "ready")
    services.entry_add(tournament, ready)
    with pytest.raises(TournamentError, match="already entered"):
        services.entry_add(tournament, ready)


def test_start_freezes_the_playing_versions_and_queues_round_one(owner):
    bots = field(4, owner)
    tournament = tournament_with(bots, start=False, format="round_robin")
    frozen = {b.pk: b.versions.get().pk for b in bots}
    tournament = services.tournament_start(tournament)
    # A newer version uploaded after the start does not play in this tournament.
    newer = bot_services.bot_version_create(bot=bots[0], filename="new.py", data=b"def agent(o, c):\n    return o['legal_actions'][-1]\n", validate=False)
    BotVersion.objects.filter(pk=newer.pk).update(status=BotVersion.Status.ACTIVE)
    assert {e.bot_id: e.version_id for e in tournament.entries.all()} == frozen
    assert tournament.status == Tournament.Status.RUNNING
    assert tournament.total_rounds == 3
    matches = open_matches(tournament)
    assert len(matches) == 2
    assert {m.kind for m in matches} == {"tournament"}
    assert {m.status for m in matches} == {Match.Status.QUEUED}
    seated = {s.bot_version_id for m in matches for s in m.seats.all()}
    assert seated == set(frozen.values())
    assert Rules.from_dict(matches[0].rules).rounds == 1
    assert matches[0].duplicate is True


def test_start_refuses_entries_whose_bot_lost_its_active_version(owner):
    bots = field(3, owner)
    tournament = tournament_with(bots, start=False)
    BotVersion.objects.filter(bot=bots[1]).update(status=BotVersion.Status.REJECTED, rejection_reason="crash")
    with pytest.raises(TournamentError, match="no active version for owner/bot1"):
        services.tournament_start(tournament)
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.DRAFT
    assert not tournament.entries.filter(version__isnull=False).exists()


def test_start_needs_two_entries(owner):
    tournament = tournament_with(field(1, owner), start=False)
    with pytest.raises(TournamentError, match="at least 2 entries, has 1"):
        services.tournament_start(tournament)


def test_next_round_is_paired_only_after_the_last_match_of_a_round(owner):
    tournament = tournament_with(field(4, owner), format="round_robin")
    first, second = open_matches(tournament)
    finish(first, [1, 2])
    tournament = refreshed(tournament)
    assert tournament.current_round == 1
    assert TournamentRound.objects.filter(tournament=tournament).count() == 1
    finish(second, [2, 1])
    tournament = refreshed(tournament)
    assert tournament.current_round == 2
    assert TournamentRound.objects.get(tournament=tournament, number=1).status == TournamentRound.Status.DONE
    assert len(open_matches(tournament)) == 2
    assert tournament.events.filter(action="round paired").count() == 2


def test_a_hook_run_twice_for_one_match_counts_it_once(owner):
    tournament = tournament_with(field(2, owner), format="round_robin", cycles=2)
    (match,) = open_matches(tournament)
    finish(match, [1, 2])
    match.refresh_from_db()
    hooks.run(match)  # a second delivery of the same result
    tournament = refreshed(tournament)
    assert tournament.current_round == 2
    assert TournamentRound.objects.filter(tournament=tournament).count() == 2
    lines = services.tournament_standings_lines(tournament)
    assert [line.points for line in lines] == [1, 0]


def test_round_robin_finishes_after_its_last_round_with_consistent_standings(owner):
    bots = field(5, owner)
    tournament = tournament_with(bots, format="round_robin")
    assert tournament.total_rounds == 5
    for _ in range(5):
        play_round(tournament)
        tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.finished_at is not None
    assert not Match.objects.filter(kind="tournament").exclude(status=Match.Status.DONE).exists()
    # every pair met once; each entry had one bye (scored as a win)
    pairings = Table.objects.filter(round__tournament=tournament)
    assert pairings.filter(bye=False).count() == 10
    assert pairings.filter(bye=True).count() == 5
    lines = services.tournament_standings_lines(tournament)
    assert sum(line.points for line in lines) == 10 + 5
    assert all(line.played == 4 and line.byes == 1 for line in lines)
    finished = tournament.events.get(action="finished")
    assert f"first place: {lines[0].entry}" in finished.message


def test_swiss_plays_default_rounds_and_avoids_rematches(owner):
    tournament = tournament_with(field(8, owner), format="swiss")
    assert tournament.total_rounds == 3
    for _ in range(3):
        explanation = TournamentRound.objects.get(tournament=tournament, number=tournament.current_round).explanation
        assert explanation[0].startswith(f"swiss round {tournament.current_round}: 8 active entries")
        play_round(tournament)
        tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    met = [frozenset(e.entry_id for e in p.seats.all()) for p in Table.objects.filter(round__tournament=tournament)]
    assert len(met) == len(set(met)) == 12
    lines = services.tournament_standings_lines(tournament)
    assert [line.points for line in lines][:1] == [3]  # exactly one entry won all three rounds


def test_k_seat_tables_use_rules_for_their_size(owner):
    tournament = tournament_with(field(7, owner), rules=["players=3", "rounds=1"], format="swiss", rounds=2)
    sizes = sorted(m.seats.count() for m in open_matches(tournament))
    assert sizes == [3, 4]
    assert sorted(Rules.from_dict(m.rules).players for m in open_matches(tournament)) == [3, 4]
    play_round(tournament)
    play_round(refreshed(tournament))
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    assert sum(line.points for line in services.tournament_standings_lines(tournament)) == 2 * 7 / 2


def test_pause_holds_queued_matches_and_resume_plays_them_and_advances(owner, staff):
    tournament = tournament_with(field(4, owner), format="round_robin")
    running, queued = open_matches(tournament)
    token = match_services.match_start(running.pk)  # a worker has it already
    assert token
    services.tournament_pause(tournament, actor=staff)
    queued.refresh_from_db()
    assert queued.status == Match.Status.CANCELLED
    # the running match ends during the pause: its result counts, nothing new is paired
    running.status = Match.Status.QUEUED
    Match.objects.filter(pk=running.pk).update(status=Match.Status.QUEUED, attempt_token="", deadline=None)
    finish(running, [1, 2])
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.PAUSED
    assert tournament.current_round == 1
    services.tournament_resume(tournament, actor=staff)
    (replacement,) = open_matches(refreshed(tournament))
    assert replacement.pk != queued.pk and replacement.status == Match.Status.QUEUED
    assert [s.bot_version_id for s in replacement.seats.all()] == [s.bot_version_id for s in queued.seats.all()]
    assert replacement.seed == queued.seed
    finish(replacement, [1, 2])
    assert refreshed(tournament).current_round == 2
    paused = tournament.events.get(action="paused")
    assert paused.actor == staff and f"#{queued.pk}" in paused.message


def test_a_failed_match_blocks_its_round_until_it_is_re_run(owner, staff):
    tournament = tournament_with(field(2, owner), format="round_robin", cycles=2)
    (match,) = open_matches(tournament)
    token = match_services.match_start(match.pk)
    match_services.match_fail(match.pk, token, "sandbox image missing")
    tournament = refreshed(tournament)
    assert tournament.current_round == 1 and tournament.status == Tournament.Status.RUNNING
    failed = tournament.events.get(action="match failed")
    assert f"match #{match.pk} failed: sandbox image missing" in failed.message
    (rerun,) = services.tournament_rerun_failed(tournament, actor=staff)
    assert rerun.pk != match.pk and rerun.seed == match.seed
    hooks.run(Match.objects.get(pk=match.pk))  # the old match no longer counts
    finish(rerun, [2, 1])
    tournament = refreshed(tournament)
    assert tournament.current_round == 2
    with pytest.raises(TournamentError, match="no failed match"):
        services.tournament_rerun_failed(tournament)
    assert f"#{match.pk} as #{rerun.pk}" in tournament.events.get(action="re-run").message


def test_withdrawn_and_disqualified_entries_are_skipped_but_keep_their_results(owner, staff):
    tournament = tournament_with(field(6, owner), format="swiss", rounds=3)
    play_round(tournament)
    tournament = refreshed(tournament)
    leaver = Entry.objects.get(tournament=tournament, name="owner/bot0")
    cheat = Entry.objects.get(tournament=tournament, name="owner/bot1")
    services.entry_withdraw(leaver, actor=staff, reason="owner asked")
    services.entry_disqualify(cheat, actor=staff, reason="shared a bot")
    with pytest.raises(TournamentError, match="already withdrawn"):
        services.entry_withdraw(leaver)
    play_round(tournament)  # round 2 was paired before they left: it is played in full
    tournament = refreshed(tournament)
    assert tournament.current_round == 3
    round3 = {s.entry.name for p in Table.objects.filter(round__tournament=tournament, round__number=3) for s in p.seats.all()}
    assert round3 == {"owner/bot2", "owner/bot3", "owner/bot4", "owner/bot5"}
    play_round(tournament)
    lines = services.tournament_standings_lines(refreshed(tournament))
    assert lines[-1].entry == "owner/bot1" and lines[-1].status == "disqualified"
    assert next(x for x in lines if x.entry == "owner/bot0").played == 2
    assert "owner/bot1 disqualified: shared a bot" in tournament.events.get(action="disqualified").message


def test_round_robin_gives_a_bye_when_the_opponent_has_left(owner):
    tournament = tournament_with(field(4, owner), format="round_robin")
    play_round(tournament)
    services.entry_withdraw(Entry.objects.get(tournament=tournament, name="owner/bot3"))
    play_round(refreshed(tournament))
    round3 = TournamentRound.objects.get(tournament=refreshed(tournament), number=3)
    byes = [p for p in round3.tables.all() if p.bye]
    assert len(byes) == 1
    assert any("left the tournament" in line for line in round3.explanation)
    assert not any(s.entry.name == "owner/bot3" for p in round3.tables.all() for s in p.seats.all())


def test_too_few_active_entries_finish_the_tournament_early(owner):
    tournament = tournament_with(field(3, owner), format="swiss", rounds=2)
    for name in ("owner/bot0", "owner/bot1"):
        services.entry_withdraw(Entry.objects.get(tournament=tournament, name=name))
    play_round(tournament)
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    assert "finished early: only 1 active entry left" in tournament.events.get(action="finished").message


def test_cancel_cancels_queued_matches_and_keeps_played_ones(owner, staff):
    tournament = tournament_with(field(4, owner), format="round_robin")
    played, queued = open_matches(tournament)
    finish(played, [1, 2])
    services.tournament_cancel(tournament, actor=staff, reason="server move")
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.CANCELLED
    played.refresh_from_db()
    queued.refresh_from_db()
    assert (played.status, queued.status) == (Match.Status.DONE, Match.Status.CANCELLED)
    assert Table.objects.get(match=played).done
    with pytest.raises(TournamentError, match="already cancelled"):
        services.tournament_cancel(tournament)
    with pytest.raises(TournamentError, match="cannot pause"):
        services.tournament_pause(tournament)
    event = tournament.events.get(action="cancelled")
    assert event.actor == staff and "server move; 1 queued match(es) cancelled" in event.message


def test_the_event_log_names_who_did_what(owner, staff):
    tournament = tournament_with(field(2, owner), start=False, actor=staff)
    services.tournament_open_registration(tournament, actor=staff)
    services.tournament_start(tournament, actor=staff)
    services.tournament_pause(tournament, actor=staff)
    services.tournament_resume(tournament, actor=staff)
    log = list(tournament.events.order_by("at", "pk").values_list("action", "actor__username"))
    assert log[0] == ("created", "root")
    assert ("registration", "root") in log and ("started", "root") in log
    assert ("round paired", None) in log  # the system paired round 1
    assert log[-2:] == [("paused", "root"), ("resumed", "root")]


def test_a_second_organizer_cannot_start_a_running_tournament(owner):
    tournament = tournament_with(field(2, owner))
    with pytest.raises(TournamentError, match="cannot start: Test Cup is running"):
        services.tournament_start(tournament)
    with pytest.raises(TournamentError, match="cannot add entries"):
        services.entry_add(tournament, active_bot(make_user("late"), "late"))


def test_penalty_scoring_counts_fewer_game_points_as_better(owner):
    tournament = tournament_with(field(2, owner), rules=["players=2", "rounds=1", "scoring=penalty"],
                                 format="round_robin", tie_breaks=["game_points"])
    (match,) = open_matches(tournament)
    finish(match, [1, 2], scores=[10, 55])
    lines = services.tournament_standings_lines(refreshed(tournament))
    seat0 = Table.objects.get(match=match).seats.get(seat=0).entry.name
    assert lines[0].entry == seat0
    assert [line.tie_breaks["game_points"] for line in lines] == [-10, -55]


def test_a_match_cancelled_outside_the_tournament_is_re_run(owner):
    tournament = tournament_with(field(2, owner), format="round_robin", cycles=2)
    (match,) = open_matches(tournament)
    assert match_services.match_cancel(match)
    (rerun,) = services.tournament_rerun_failed(tournament)
    finish(rerun, [1, 2])
    assert refreshed(tournament).current_round == 2


def test_options_change_before_the_start_only_and_are_logged(owner):
    tournament = tournament_with(field(2, owner), start=False, seed=1)
    services.tournament_update(tournament, name="Test Cup", rules=["players=2", "rounds=3"], seed=1)
    services.tournament_update(tournament, name="Test Cup", rules=["players=2", "rounds=3"], seed=1)  # no change
    tournament = refreshed(tournament)
    assert Rules.from_dict(tournament.rules).rounds == 3
    (event,) = tournament.events.filter(action="updated")
    assert event.message.startswith("changed rules:")
    services.tournament_start(tournament)
    with pytest.raises(TournamentError, match="cannot change the options: Test Cup is running"):
        services.tournament_update(tournament, name="Other", rules=["players=2"])


def test_a_pairing_failure_pauses_the_tournament_and_keeps_the_result(owner, monkeypatch):
    tournament = tournament_with(field(4, owner), format="swiss")

    def broken(*args, **kwargs):
        raise KeyError("surprise")

    monkeypatch.setattr(services, "swiss_round", broken)
    play_round(tournament)
    tournament = refreshed(tournament)
    assert tournament.status == Tournament.Status.PAUSED
    assert Table.objects.filter(round__tournament=tournament, done=True).count() == 2  # results kept
    assert "round 2 could not be paired: KeyError" in tournament.events.get(action="error").message
    monkeypatch.undo()
    services.tournament_resume(tournament)
    assert refreshed(tournament).current_round == 2
