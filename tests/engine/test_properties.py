"""Properties over random rule sets, seat counts, seeds and legal actions (hypothesis)."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from uno_scenarios import rule_sets

from engine.cards import KIND_POINTS, color_of, kind_of
from engine.game import Game
from engine.match import AgentSeat, play_match
from engine.replay import REPLAY_VERSION, state_at, verify

#: the observation keys of BOT_CONTRACT.md, no more
CONTRACT_KEYS = {
    "seat", "players", "decision", "hand", "top_card", "color", "direction", "current", "hand_sizes",
    "uno", "scores", "draw_pile", "discard", "pending_draw", "round", "dealer", "legal_actions",
}
ACTION_TYPES = {"play", "draw", "pass", "accept", "challenge", "swap", "color"}
BOUNDED = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def expected_legal(obs, rules):
    """The legal actions of a decision, worked out from the observation alone."""
    hand, color, top = obs["hand"], obs["color"], obs["top_card"]
    uno = {"uno": True} if len(hand) == 2 else {}
    distinct = sorted(set(hand), key=kind_of)
    holds_color = any(color_of(c) == color for c in hand)

    def plays(code):
        if color_of(code) is None:
            return [{"type": "play", "card": code, "color": c, **uno} for c in "RYGB"]
        return [{"type": "play", "card": code, **uno}]

    def rank(code):
        return code if color_of(code) is None else code[1:]

    wd4_ok = rules.wd4 != "enforced" or not holds_color
    decision = obs["decision"]
    if decision == "play":
        out = []
        for code in distinct:
            if code == "W" or (code == "W+4" and wd4_ok) or (
                    color_of(code) is not None and (color_of(code) == color or rank(code) == rank(top))):
                out += plays(code)
        return out + [{"type": "draw"}]
    if decision == "stack":
        out = []
        for code in distinct:
            if rank(code) == "+2" and (rank(top) == "+2" or color_of(code) == color):
                out += plays(code)
            elif code == "W+4" and rules.stacking == "stack" and wd4_ok:
                out += plays(code)
        return out + [{"type": "accept"}]
    if decision == "challenge":
        return [{"type": "accept"}, {"type": "challenge"}]
    if decision == "jump_in":
        return plays(top) + [{"type": "pass"}]
    if decision == "swap_target":
        return [{"type": "swap", "target": t} for t in range(obs["players"]) if t != obs["seat"]]
    if decision == "choose_color":
        return [{"type": "color", "color": c} for c in "RYGB"]
    return None  # play_drawn: depends on which card was drawn (checked in scenario tests)


def hand_points(codes):
    return sum(KIND_POINTS[kind_of(c)] for c in codes)


def play_randomly(game, rng, check=None):
    while not game.over:
        if check:
            check(game)
        action = dict(rng.choice(game.legal_actions()))
        if rng.random() < 0.1:
            action.pop("uno", None)
        game.apply(action)


@pytest.mark.slow
@BOUNDED
@given(rules=rule_sets(), seed=st.integers(0, 2**40), choices=st.integers(0, 2**32))
def test_every_decision_keeps_108_cards_shows_only_the_contract_and_replays_to_the_same_state(rules, seed, choices):
    game = Game(rules, seed)
    rng = random.Random(choices)
    steps = [0]

    def check(g):
        obs = g.observation()
        assert set(obs) == CONTRACT_KEYS
        assert sum(obs["hand_sizes"]) + obs["draw_pile"] + len(obs["discard"]) == 108
        assert len(obs["hand"]) == obs["hand_sizes"][obs["seat"]]
        state = g.state()
        assert obs["hand"] == state["hands"][obs["seat"]]  # its own hand, nothing else
        assert obs["legal_actions"] == g.legal_actions()
        expected = expected_legal(obs, rules)
        if expected is not None:
            assert obs["legal_actions"] == expected
        else:
            assert obs["legal_actions"][-1] == {"type": "pass"}
            assert len({a["card"] for a in obs["legal_actions"][:-1]}) == 1
        assert obs["legal_actions"], "legal actions are never empty"
        keys = [json.dumps(a, sort_keys=True) for a in obs["legal_actions"]]
        assert len(keys) == len(set(keys)), "one entry per distinct action"
        for a in obs["legal_actions"]:
            assert a["type"] in ACTION_TYPES
            if a["type"] == "play":
                assert a["card"] in obs["hand"]
                assert a.get("uno", False) == (len(obs["hand"]) == 2)
        assert obs["color"] in ("R", "Y", "G", "B") or (obs["color"] is None and obs["decision"] == "choose_color")
        steps[0] += 1
        if steps[0] % 15 == 0:
            # every offered action is accepted by the engine
            for a in obs["legal_actions"]:
                copy.deepcopy(g).apply(a)

    snapshots = []
    original = check

    def check_and_snapshot(g):
        original(g)
        if steps[0] % 10 == 0:
            snapshots.append((len(g.events), g.state()))

    play_randomly(game, rng, check_and_snapshot)
    assert game.over
    replay = {"version": REPLAY_VERSION, "rules": rules.to_dict(), "games": [
        {"seed": seed, "seats": list(range(rules.players)), "events": game.events, "actions": game.actions}]}
    for at, state in snapshots:
        assert state_at(replay, 0, at) == state
    assert state_at(replay, 0, len(game.events)) == game.state()


@BOUNDED
@given(rules=rule_sets(), seed=st.integers(0, 2**40), choices=st.integers(0, 2**32))
def test_same_seed_and_actions_give_the_same_events_and_scores_add_up(rules, seed, choices):
    a, b = Game(rules, seed), Game(rules, seed)
    play_randomly(a, random.Random(choices))
    play_randomly(b, random.Random(choices))
    assert json.dumps(a.events) == json.dumps(b.events)
    replay = {"version": REPLAY_VERSION, "rules": rules.to_dict(), "games": [
        {"seed": seed, "seats": list(range(rules.players)), "events": a.events, "actions": a.actions}]}
    assert verify(replay) == len(a.events)
    total = [0] * rules.players
    for i, event in enumerate(a.events):
        if event["e"] != "round_end":
            continue
        hands = state_at(replay, 0, i)["hands"]
        left = [hand_points(h) for h in hands]
        if event["winner"] is None:
            assert event["points"] == [0] * rules.players
        elif rules.scoring == "winner":
            assert event["points"][event["winner"]] == sum(left)
            assert sum(event["points"]) == sum(left)
        else:
            assert event["points"] == left and left[event["winner"]] == 0
        total = [t + p for t, p in zip(total, event["points"], strict=True)]
        assert event["scores"] == total
    assert a.scores == total


@settings(max_examples=10, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 2**40))
def test_match_replays_are_byte_identical_and_verify(rules, seed):
    def seats():
        return [AgentSeat(lambda o, c, i=i: o["legal_actions"][(len(o["discard"]) + i) % len(o["legal_actions"])],
                          f"bot{i}") for i in range(rules.players)]

    one = play_match(rules, seats(), seed=seed, deals=1, duplicate=rules.players <= 4)
    two = play_match(rules, seats(), seed=seed, deals=1, duplicate=rules.players <= 4)
    assert json.dumps(one.replay, sort_keys=True) == json.dumps(two.replay, sort_keys=True)
    verify(json.loads(json.dumps(one.replay)))
