"""Replay documents: state_at, seat_view, verify, size (docs/replay-format.md)."""

from __future__ import annotations

import copy
import gzip
import json
import random

import pytest
from uno_scenarios import first_legal, scripted

from engine.game import Game
from engine.match import AgentSeat, play_match
from engine.replay import REPLAY_VERSION, ReplayError, action_points, seat_view, state_at, verify
from engine.rules import Rules

RULE_SETS = [
    [],
    ["players=2", "draw=until_playable", "stacking=deflect", "wd4=enforced"],
    ["players=5", "stacking=stack", "wd4=free", "jump_in=on", "seven_zero=on"],
    ["players=3", "scoring=penalty", "first_card=number_only", "uno_penalty=4"],
]


def random_player(seed):
    rng = random.Random(seed)

    def agent(observation, configuration):
        action = dict(rng.choice(observation["legal_actions"]))
        if rng.random() < 0.2:
            action.pop("uno", None)  # sometimes forget UNO
        return action

    return AgentSeat(agent, f"random{seed}")


def play_prefer(seed):
    """Random among plays, drawing only when nothing can be played."""
    rng = random.Random(seed)

    def agent(observation, configuration):
        legal = observation["legal_actions"]
        plays = [a for a in legal if a["type"] not in ("draw", "pass", "accept")]
        return rng.choice(plays or legal)

    return AgentSeat(agent, f"player{seed}")


def replay_of(items, seed=5):
    """A game played move by move, with the live state and view at every decision."""
    rules = Rules.parse(items + ["rounds=2", "max_turns=300"])
    game = Game(rules, seed)
    rng = random.Random(seed)
    snapshots = []
    while not game.over:
        views = [game.view(s) for s in range(rules.players)]
        snapshots.append((len(game.events), game.state(), views, game.seat, game.observation()))
        game.apply(rng.choice(game.legal_actions()))
    replay = {"version": REPLAY_VERSION, "rules": rules.to_dict(), "games": [
        {"seed": seed, "seats": list(range(rules.players)), "events": game.events, "actions": game.actions}]}
    return json.loads(json.dumps(replay)), snapshots


@pytest.mark.parametrize("items", RULE_SETS)
def test_state_at_equals_the_live_state_at_every_decision(items):
    replay, snapshots = replay_of(items)
    for at, state, _, _, _ in snapshots:
        assert state_at(replay, 0, at) == state


@pytest.mark.parametrize("items", RULE_SETS)
def test_seat_view_is_the_observation_of_the_seat_asked_and_the_view_of_the_others(items):
    replay, snapshots = replay_of(items)
    for at, _, views, seat, observation in snapshots[::40]:
        for s, live in enumerate(views):
            view = seat_view(replay, 0, at, s)
            assert view == (observation if s == seat else live)


def test_seat_view_holds_no_other_hand():
    replay, snapshots = replay_of([])
    at = snapshots[10][0]
    view = seat_view(replay, 0, at, 1)
    hands = state_at(replay, 0, at)["hands"]
    assert view["hand"] == hands[1]
    assert "hands" not in view and "seed" not in view
    assert view["hand_sizes"] == [len(h) for h in hands]


def test_verify_reproduces_a_whole_match_with_faults_and_forfeits():
    seats = [scripted({"type": "fly"}), random_player(1), AgentSeat(lambda o, c: 1 / 0, "crash")]
    result = play_match(Rules(players=3), seats, seed=12, deals=2, duplicate=True)
    replay = json.loads(json.dumps(result.replay))
    assert verify(replay) == sum(len(g["events"]) for g in replay["games"])


def test_verify_finds_a_tampered_event():
    result = play_match(Rules(players=2, rounds=1), [random_player(2), random_player(3)], seed=4)
    replay = copy.deepcopy(result.replay)
    events = replay["games"][0]["events"]
    draw = next(i for i, e in enumerate(events) if e["e"] == "draw")
    events[draw]["cards"] = ["W+4"] * len(events[draw]["cards"])
    with pytest.raises(ReplayError, match=f"game 0: event {draw} differs"):
        verify(replay)


def test_verify_finds_a_tampered_action():
    result = play_match(Rules(players=2, rounds=1), [first_legal(), first_legal()], seed=4)
    replay = copy.deepcopy(result.replay)
    first = replay["games"][0]["actions"][0]
    first["action"] = {"type": "draw"} if first["action"] != {"type": "draw"} else {"type": "pass"}
    with pytest.raises(ReplayError, match="game 0"):
        verify(replay)


def test_verify_refuses_missing_actions_and_unknown_versions():
    result = play_match(Rules(players=2, rounds=1), [first_legal(), first_legal()], seed=4)
    truncated = copy.deepcopy(result.replay)
    del truncated["games"][0]["actions"][-1]
    with pytest.raises(ReplayError, match="do not finish the game|events"):
        verify(truncated)
    future = dict(result.replay, version=3)
    with pytest.raises(ReplayError, match="unsupported replay version 3"):
        verify(future)
    with pytest.raises(ReplayError, match="event index 99999"):
        state_at(result.replay, 0, 99999)
    with pytest.raises(ReplayError, match="game index 3"):
        state_at(result.replay, 3, 0)


def test_full_500_point_four_seat_game_stays_under_100_kb_gzipped():
    seats = [play_prefer(s) for s in range(4)]
    result = play_match(Rules(players=4, scoring="winner", target=500), seats, seed=1)
    assert max(result.replay["result"]["scores"]) >= 500
    size = len(gzip.compress(json.dumps(result.replay, sort_keys=True).encode()))
    assert size < 100_000


def _uniform(rng):
    return lambda observation, configuration: rng.choice(observation["legal_actions"])


def test_a_game_of_uniformly_random_play_stays_under_100_kb_gzipped():
    # The largest of 300 such games (seeds 0-299, docs/replay-format.md "Size"): 29,236 events
    # over 10 rounds; it was 140 KB in replay version 1, where every action record held its
    # absolute event index.
    seed = 217
    seats = [AgentSeat(_uniform(random.Random(seed * 4 + i))) for i in range(4)]
    result = play_match(Rules(players=4, target=500), seats, seed=seed)
    assert max(result.replay["result"]["scores"]) >= 500
    assert len(result.replay["games"][0]["events"]) > 25_000
    size = len(gzip.compress(json.dumps(result.replay, sort_keys=True).encode()))
    assert size < 100_000


def test_action_records_count_events_since_the_previous_decision():
    rules = Rules.parse(["players=3", "rounds=2", "jump_in=on", "stacking=stack", "wd4=free"])
    game, rng, asked = Game(rules, 8), random.Random(8), []
    while not game.over:
        asked.append(len(game.events))
        game.apply(rng.choice(game.legal_actions()))
    assert all(set(a) == {"since", "seat", "decision", "action"} for a in game.actions)
    assert [a["since"] for a in game.actions] == [b - a for a, b in zip([0, *asked], asked, strict=False)]
    assert action_points(game.actions) == asked
    assert play_match(rules, [random_player(s) for s in range(3)], seed=8).replay["version"] == 2


def test_a_version_1_replay_still_reads_and_verifies():
    result = play_match(Rules(players=4, rounds=2), [random_player(s) for s in range(4)], seed=12)
    old = copy.deepcopy(result.replay)
    old["version"] = 1
    for game in old["games"]:
        for record, at in zip(game["actions"], action_points(game["actions"]), strict=True):
            del record["since"]
            record["at"] = at
    assert verify(old) == verify(result.replay)
    asked = action_points(old["games"][0]["actions"])[5]
    assert state_at(old, 0, asked) == state_at(result.replay, 0, asked)
    seat = old["games"][0]["actions"][5]["seat"]
    assert seat_view(old, 0, asked, seat) == seat_view(result.replay, 0, asked, seat)
    assert "legal_actions" in seat_view(old, 0, asked, seat)
