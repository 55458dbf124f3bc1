"""The referee: play_match, duplicate deals, faults and ranking (RULES.md section 9)."""

from __future__ import annotations

import json

import pytest
from uno_scenarios import first_legal, of, position, scripted

from engine.faults import Fault, InfrastructureError, SeatFault
from engine.match import AgentSeat, play_match, rank_bots
from engine.rules import Rules

BAD = {"type": "fly"}


class FaultySeat:
    """Raises the given SeatFault on its first ``times`` decisions, then plays first legal."""

    def __init__(self, kind, times=1):
        self.kind, self.times = kind, times

    def decide(self, observation, configuration):
        if self.times:
            self.times -= 1
            raise SeatFault(self.kind, f"{self.kind} for the test")
        return observation["legal_actions"][0]


def dump(result):
    return json.dumps(result.replay, sort_keys=True)


def test_match_result_has_a_rank_score_and_wins_per_bot_in_seat_order():
    result = play_match(Rules(players=3), [first_legal(), first_legal(), first_legal()], seed=1, deals=2)
    assert [p.bot for p in result.players] == [0, 1, 2]
    assert result.games == 2 and result.rounds >= 2
    assert sum(p.wins for p in result.players) >= 2
    assert sorted(p.rank for p in result.players)[0] == 1
    assert [p.score for p in result.players] == result.replay["result"]["scores"]
    best = max(p.score for p in result.players)
    assert [p.rank == 1 for p in result.players] == [p.score == best for p in result.players]


def test_same_inputs_give_a_byte_identical_replay():
    def seats():
        return [first_legal(), AgentSeat(lambda o, c: o["legal_actions"][-1], "last")]

    a = play_match(Rules(players=2), seats(), seed=9, deals=2, duplicate=True)
    b = play_match(Rules(players=2), seats(), seed=9, deals=2, duplicate=True)
    assert dump(a) == dump(b)
    c = play_match(Rules(players=2), seats(), seed=10, deals=2, duplicate=True)
    assert dump(a) != dump(c)


def test_duplicate_plays_every_deal_once_per_rotation_so_every_bot_plays_every_seat():
    result = play_match(Rules(players=3, rounds=1), [first_legal()] * 3, seed=4, deals=2, duplicate=True)
    games = result.replay["games"]
    assert result.games == 6 and len(games) == 6
    for deal in range(2):
        rotations = [g for g in games if g["deal"] == deal]
        assert len({g["seed"] for g in rotations}) == 1
        first_hands = {json.dumps(of(g["events"], "round_start")[0]["hands"]) for g in rotations}
        assert len(first_hands) == 1  # the same cards at the same seats
        for bot in range(3):
            assert sorted(g["seats"].index(bot) for g in rotations) == [0, 1, 2]


def test_seat_draws_do_not_depend_on_other_seats_draws():
    hands = [["R1", "B2", "B3"], ["G1", "G2"], ["Y1", "Y2"]]
    played = position(hands, "R5", current=0, seed=21)
    drew = position(hands, "R5", current=0, seed=21)
    played.apply({"type": "play", "card": "R1"})
    drew.apply({"type": "draw"})
    if drew.decision == "play_drawn":
        drew.apply({"type": "pass"})
    # seat 1 draws the same card whether or not seat 0 drew before it: each
    # seat reads its own stream, not the top of a shared deck
    played.apply({"type": "draw"})
    drew.apply({"type": "draw"})
    first_of_seat_0 = of(drew.events, "draw")[0]["cards"]
    assert of(played.events, "draw")[-1]["cards"] == of(drew.events, "draw")[-1]["cards"]
    assert of(drew.events, "draw")[-1]["seat"] == 1
    assert first_of_seat_0 != of(drew.events, "draw")[-1]["cards"]


def test_illegal_action_costs_two_cards_the_turn_and_a_strike():
    result = play_match(Rules(players=2, rounds=1), [scripted(BAD), first_legal()], seed=3)
    events = result.replay["games"][0]["events"]
    fault = of(events, "fault")[0]
    assert fault["seat"] == 0 and fault["kind"] == "illegal" and fault["strikes"] == 1
    assert "'fly'" in fault["reason"]
    i = events.index(fault)
    assert events[i + 1] == {"e": "draw", "seat": 0, "cards": events[i + 1]["cards"], "reason": "strike"}
    assert len(events[i + 1]["cards"]) == 2
    assert events[i + 2] == {"e": "turn", "seat": 1}
    player = result.players[0]
    assert player.strikes == 1 and player.forfeit is None
    assert player.faults[0].kind == "illegal"


def test_timeout_is_handled_like_an_illegal_action():
    result = play_match(Rules(players=2, rounds=1), [FaultySeat("timeout"), first_legal()], seed=3)
    assert result.players[0].strikes == 1 and result.players[0].forfeit is None
    assert of(result.replay["games"][0]["events"], "fault")[0]["kind"] == "timeout"


def test_reaching_max_strikes_forfeits_and_the_fallback_plays_on():
    result = play_match(Rules(players=3, rounds=1, max_strikes=2), [scripted(BAD, BAD), first_legal(),
                                                                     first_legal()], seed=6)
    loser = result.players[0]
    assert loser.strikes == 2
    assert loser.forfeit.kind == "strikes"
    assert loser.forfeit.reason.startswith("2 strikes (max_strikes=2), last ")
    assert [f.kind for f in loser.faults] == ["illegal", "illegal"]
    assert loser.rank == 3 and [p.rank for p in result.players[1:]] != [3, 3]
    events = result.replay["games"][0]["events"]
    assert of(events, "forfeit")[0]["seat"] == 0
    assert of(events, "game_end")  # the others' game went on to the end


@pytest.mark.parametrize("kind", ["crash", "protocol", "exception", "memory"])
def test_crash_or_protocol_error_forfeits_at_once(kind):
    result = play_match(Rules(players=2, rounds=1), [FaultySeat(kind), first_legal()], seed=2)
    loser = result.players[0]
    assert loser.forfeit == Fault(kind, f"{kind} for the test", game=0, round=1)
    # the replay writes the forfeit as its text
    assert result.replay["result"]["forfeits"][0] == f"{kind}: {kind} for the test"
    assert loser.strikes == 0 and loser.rank == 2
    assert of(result.replay["games"][0]["events"], "game_end")


def test_forfeiting_bot_ranks_last_even_with_the_best_score():
    # penalty scoring: the fallback seat could score well, but forfeits rank last
    result = play_match(Rules(players=2, rounds=1, scoring="penalty"),
                        [FaultySeat("crash"), AgentSeat(lambda o, c: {"type": "draw"}
                                                        if {"type": "draw"} in o["legal_actions"]
                                                        else o["legal_actions"][-1], "drawer")],
                        seed=2)
    assert result.players[0].score < result.players[1].score
    assert result.players[0].rank == 2 and result.players[1].rank == 1


def test_forfeited_bot_is_played_by_the_fallback_in_later_games():
    calls = []

    def crashing(observation, configuration):
        calls.append(1)
        raise RuntimeError("boom")

    result = play_match(Rules(players=2, rounds=1), [AgentSeat(crashing, "crash"), first_legal()], seed=2,
                        deals=3)
    assert len(calls) == 1
    assert (result.players[0].forfeit.kind, result.players[0].forfeit.reason) == ("exception", "RuntimeError: boom")
    assert [g["forfeited"] for g in result.replay["games"]] == [[], [0], [0]]


def test_bot_calling_sys_exit_forfeits_instead_of_ending_the_referee():
    def leaving(observation, configuration):
        raise SystemExit(3)

    result = play_match(Rules(players=2, rounds=1), [AgentSeat(leaving, "quit"), first_legal()], seed=2)
    assert str(result.players[0].forfeit) == "exception: SystemExit: 3"
    assert result.players[1].rank == 1


def test_infrastructure_error_passes_through():
    class Broken:
        def decide(self, observation, configuration):
            raise InfrastructureError("docker engine gone")

    with pytest.raises(InfrastructureError, match="docker engine gone"):
        play_match(Rules(players=2), [Broken(), first_legal()], seed=1)


def test_bots_get_the_rules_and_the_extra_configuration():
    seen = []

    def agent(observation, configuration):
        seen.append(configuration)
        return observation["legal_actions"][0]

    rules = Rules(players=2, rounds=1, wd4="free")
    play_match(rules, [AgentSeat(agent), first_legal()], seed=1,
               configuration={"time_per_decision": 1.0, "time_bank": 10.0})
    assert seen[0] == {"rules": rules.to_dict(), "time_per_decision": 1.0, "time_bank": 10.0}


def test_decision_seconds_go_into_timings_not_into_the_replay():
    class Timed:
        def __init__(self, seconds):
            self.seconds = seconds

        def decide(self, observation, configuration):
            self.last_decision_seconds = self.seconds
            return observation["legal_actions"][0]

    slow = play_match(Rules(players=2, rounds=1), [Timed(0.5), Timed(0.01)], seed=8)
    fast = play_match(Rules(players=2, rounds=1), [Timed(0.001), Timed(0.002)], seed=8)
    assert dump(slow) == dump(fast)
    assert slow.timings[0]["max_seconds"] == 0.5
    assert slow.timings[0]["decisions"] > 0
    assert slow.timings[0]["total_seconds"] == pytest.approx(0.5 * slow.timings[0]["decisions"])


class Counting:
    """Reports a different, known time on each decision: 1.25 ms times its decision number."""

    def __init__(self, kind=None, fault_at=None):
        self.calls = 0
        self.kind, self.fault_at = kind, fault_at

    def decide(self, observation, configuration):
        self.calls += 1
        self.last_decision_seconds = 0.00125 * self.calls
        if self.calls == self.fault_at:
            raise SeatFault(self.kind, "for the test")
        return observation["legal_actions"][0]


def test_each_decision_time_is_recorded_beside_its_action_record():
    timed = Counting()
    result = play_match(Rules(players=2, rounds=2), [timed, first_legal()], seed=8, deals=2)
    assert [len(t) for t in result.decision_ms] == [len(g["actions"]) for g in result.replay["games"]]
    mine = [
        ms
        for game, times in zip(result.replay["games"], result.decision_ms, strict=True)
        for record, ms in zip(game["actions"], times, strict=True)
        if game["seats"][record["seat"]] == 0
    ]
    # the k-th decision of bot 0 reported 1.25 * k ms, rounded to 0.1 ms
    assert len(mine) == timed.calls
    assert mine == pytest.approx([1.25 * k for k in range(1, timed.calls + 1)], abs=0.051)
    assert all(ms == round(ms, 1) for ms in mine)
    others = [
        ms
        for game, times in zip(result.replay["games"], result.decision_ms, strict=True)
        for record, ms in zip(game["actions"], times, strict=True)
        if game["seats"][record["seat"]] == 1
    ]
    assert others and set(others) == {None}  # an AgentSeat reports no time


@pytest.mark.parametrize("kind", ["illegal", "crash"])
def test_decision_times_stay_aligned_through_faults_forfeits_and_fallback_moves(kind):
    faulty = Counting(kind, fault_at=3)
    result = play_match(Rules(players=3, rounds=1), [faulty, Counting(), first_legal()], seed=4, deals=2, duplicate=True)
    for game, times in zip(result.replay["games"], result.decision_ms, strict=True):
        assert len(times) == len(game["actions"])
    records = [
        (record, ms)
        for game, times in zip(result.replay["games"], result.decision_ms, strict=True)
        for record, ms in zip(game["actions"], times, strict=True)
        if game["seats"][record["seat"]] == 0
    ]
    fault_at = next(i for i, (record, _) in enumerate(records) if "fault" in record)
    assert records[fault_at][1] == pytest.approx(3.75, abs=0.051)  # the faulted decision keeps its time
    if kind == "crash":
        # after a forfeit the fallback plays the seat: its moves have no time
        assert records[fault_at + 1:] and all(ms is None for _, ms in records[fault_at + 1:])
    else:
        assert all(ms is not None for _, ms in records)


def test_names_are_recorded_in_the_replay():
    result = play_match(Rules(players=2, rounds=1), [first_legal(), first_legal()], seed=1,
                        names=["alice", "bob"], deals=1, duplicate=True)
    assert result.replay["names"] == ["alice", "bob"]
    assert [g["names"] for g in result.replay["games"]] == [["alice", "bob"], ["bob", "alice"]]


@pytest.mark.parametrize(
    "kwargs,message",
    [({"deals": 0}, "deals"), ({"seed": "x"}, "seed"), ({"names": ["a"]}, "names")],
)
def test_bad_arguments_are_refused_with_their_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        play_match(Rules(players=2), [first_legal(), first_legal()], **kwargs)


def test_rules_players_must_match_the_number_of_seats():
    with pytest.raises(ValueError, match="rules.players is 3 but 2 seats"):
        play_match(Rules(players=3), [first_legal(), first_legal()])


def test_ranking_uses_points_then_wins_and_ties_share_a_rank():
    assert rank_bots([100, 100, 50], [2, 1, 0], [False] * 3, "winner") == [1, 2, 3]
    assert rank_bots([100, 100, 50], [1, 1, 0], [False] * 3, "winner") == [1, 1, 3]
    assert rank_bots([100, 20, 50], [0, 1, 0], [False] * 3, "penalty") == [3, 1, 2]
    assert rank_bots([100, 20, 50], [0, 1, 0], [False, True, True], "winner") == [1, 2, 2]


class BeginCounting:
    """Plays first legal; records each ``begin_game`` call and each decision's game."""

    def __init__(self, log, name, fail_at=None, kind="crash"):
        self.log, self.name, self.fail_at, self.kind = log, name, fail_at, kind
        self.game = None

    def begin_game(self, game_index):
        self.log.append((self.name, game_index))
        self.game = game_index
        if game_index == self.fail_at:
            raise SeatFault(self.kind, f"{self.kind} at begin_game for the test")

    def decide(self, observation, configuration):
        assert self.game is not None, "decide before begin_game"
        return observation["legal_actions"][0]


def test_begin_game_is_called_once_per_bot_per_game_before_its_decisions():
    log = []
    seats = [BeginCounting(log, "a"), BeginCounting(log, "b"), BeginCounting(log, "c")]
    result = play_match(Rules(players=3, rounds=1), seats, seed=5, deals=2, duplicate=True)
    assert result.games == 6
    assert sorted(log) == sorted((name, g) for name in "abc" for g in range(6))
    # in game order: every game's three calls come before the next game's
    assert [g for _, g in log] == sorted(g for _, g in log)


def test_begin_game_is_called_on_one_shared_seat_object_once_per_bot():
    log = []
    shared = BeginCounting(log, "x")
    play_match(Rules(players=2, rounds=1), [shared, shared], seed=5, deals=2)
    assert log == [("x", 0), ("x", 0), ("x", 1), ("x", 1)]


def test_a_forfeiting_fault_in_begin_game_forfeits_and_stops_the_calls():
    log = []
    seats = [BeginCounting(log, "a", fail_at=1), BeginCounting(log, "b")]
    result = play_match(Rules(players=2, rounds=1), seats, seed=5, deals=2, duplicate=True)
    loser = result.players[0]
    assert loser.forfeit == Fault("crash", "crash at begin_game for the test", game=1, round=0)
    assert loser.faults == (loser.forfeit,)
    assert loser.rank == 2 and result.players[1].rank == 1
    # a's last call was the one that failed; b is told of every game
    assert [g for name, g in log if name == "a"] == [0, 1]
    assert [g for name, g in log if name == "b"] == [0, 1, 2, 3]
    games = result.replay["games"]
    assert games[0]["forfeited"] == []
    for record in games[1:]:
        seat = record["seats"].index(0)
        assert record["forfeited"] == [seat]  # played by the fallback from its first decision
        assert all(a["seat"] != seat or "fault" not in a for a in record["actions"])
        assert of(record["events"], "game_end")


def test_a_strike_fault_in_begin_game_counts_a_strike_without_cards():
    log = []
    seats = [BeginCounting(log, "a", fail_at=0, kind="timeout"), BeginCounting(log, "b")]
    result = play_match(Rules(players=2, rounds=1), seats, seed=5, deals=2)
    assert result.players[0].strikes == 1 and result.players[0].forfeit is None
    assert result.replay["games"][0]["forfeited"] == []
    assert not of(result.replay["games"][0]["events"], "fault")
    assert [g for name, g in log if name == "a"] == [0, 1]


def test_infrastructure_error_in_begin_game_passes_through():
    class Broken(BeginCounting):
        def begin_game(self, game_index):
            raise InfrastructureError("docker gone")

    with pytest.raises(InfrastructureError):
        play_match(Rules(players=2, rounds=1), [Broken([], "a"), first_legal()], seed=5)


def test_the_replay_is_built_when_first_read_and_reads_as_a_plain_dict_everywhere():
    """``MatchResult.replay`` is kept as its parts until read (the core's compact records): nothing
    but speed tells: the same dict on every read, equality, asdict, copies and pickles of plain dicts."""
    import copy
    import dataclasses
    import pickle

    from engine import compiled

    rules = Rules(players=3, rounds=2)
    seen = []
    result = play_match(rules, [first_legal()] * 3, seed=7, deals=2, duplicate=True,
                        on_step=lambda game, events, actions: seen.append((game["index"], events, actions)))
    if compiled.COMPILED:  # not built yet: a compiled game's records are still compact
        assert type(vars(result)["replay"]) is not dict
    pickled = pickle.loads(pickle.dumps(result))
    assert type(vars(result)["replay"]) is dict and type(vars(pickled)["replay"]) is dict
    replay = result.replay
    assert result.replay is replay and type(replay["games"][0]["events"]) is list
    # the hook was shown the lists the replay holds
    for index, events, actions in seen:
        assert replay["games"][index]["events"] is events and replay["games"][index]["actions"] is actions
    again = play_match(rules, [first_legal()] * 3, seed=7, deals=2, duplicate=True)
    assert again == result == pickled == copy.deepcopy(again) and repr(again) == repr(result)
    assert dataclasses.asdict(again)["replay"] == replay and dataclasses.replace(again, games=0).replay == replay
    assert json.dumps(replay) == json.dumps(again.replay)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.replay = {}  # type: ignore[misc]
    # a replay given as a dict (tests, wrappers) is kept as it is
    assert dataclasses.replace(result, replay={"version": 2}).replay == {"version": 2}


def test_match_results_are_the_objects_their_dataclass_init_makes():
    """play_match builds its frozen results without their __init__ (engine.match._frozen): equal, with
    the same fields in the same order (so the same pickle), and as frozen."""
    import dataclasses
    import pickle

    import engine.compiled
    import engine.match
    from engine.match import MatchResult, SeatResult

    result = play_match(Rules(players=3), [first_legal()] * 3, seed=4, deals=2)
    for made in (*result.players, result):
        fields = {f.name: getattr(made, f.name) for f in dataclasses.fields(made)}
        by_init = type(made)(**fields)
        # what play_match used, and _frozen itself (the reference of its C twin engine.compiled.FROZEN)
        for again in (made, engine.match._frozen(type(made), dict(fields))):
            assert again == by_init and list(vars(again)) == list(vars(by_init))
            assert pickle.dumps(again) == pickle.dumps(by_init)
            with pytest.raises(dataclasses.FrozenInstanceError):
                again.rounds = 0  # type: ignore[misc]
    assert type(result) is MatchResult and type(result.players[0]) is SeatResult
    assert engine.match._new_result is (engine.compiled.FROZEN or engine.match._frozen)


def test_ranks_count_the_keys_strictly_above_whatever_the_order():
    import itertools

    totals, wins = [30, 10, 30, 20], [1, 0, 1, 2]
    for forfeits in itertools.product([False, True], repeat=4):
        for scoring in ("winner", "penalty"):
            got = rank_bots(totals, wins, list(forfeits), scoring)
            sign = -1 if scoring == "winner" else 1
            keys = [(1, 0, 0) if f else (0, sign * t, -w) for t, w, f in zip(totals, wins, forfeits, strict=True)]
            assert got == [1 + sum(other < mine for other in keys) for mine in keys]
