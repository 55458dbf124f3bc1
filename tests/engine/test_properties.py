"""Properties over random rule sets, seat counts, seeds and legal actions (hypothesis)."""

from __future__ import annotations

import copy
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import KIND_POINTS, kind_of
from engine.game import Game
from engine.match import AgentSeat, play_match
from engine.replay import state_at, verify
from engine.rules import Rules

#: the observation keys of BOT_CONTRACT.md, no more
CONTRACT_KEYS = {
    "seat", "players", "decision", "hand", "top_card", "color", "direction", "current", "hand_sizes",
    "uno", "scores", "draw_pile", "discard", "pending_draw", "round", "dealer", "legal_actions",
}
ACTION_TYPES = {"play", "draw", "pass", "accept", "challenge", "swap", "color"}
BOUNDED = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rule_sets(draw):
    players = draw(st.integers(2, 10))
    wd4 = draw(st.sampled_from(["challenge", "enforced", "free"]))
    stacking = "off" if wd4 == "challenge" else draw(st.sampled_from(["off", "deflect", "stack"]))
    return Rules(
        players=players,
        hand_size=draw(st.integers(1, min(20, 107 // players))),
        first_card=draw(st.sampled_from(["apply", "number_only"])),
        draw=draw(st.sampled_from(["one", "until_playable"])),
        draw_limit=draw(st.integers(1, 12)),
        two_player_reverse_skips=draw(st.booleans()),
        wd4=wd4,
        stacking=stacking,
        uno_penalty=draw(st.integers(0, 4)),
        seven_zero=draw(st.booleans()),
        jump_in=draw(st.booleans()),
        scoring=draw(st.sampled_from(["winner", "penalty"])),
        rounds=draw(st.integers(1, 2)),
        max_turns=draw(st.integers(20, 250)),
    )


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


@BOUNDED
@given(rules=rule_sets(), seed=st.integers(0, 2**40), choices=st.integers(0, 2**32))
def test_every_decision_keeps_108_cards_and_shows_only_the_contract(rules, seed, choices):
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

    play_randomly(game, rng, check)
    assert game.over


@BOUNDED
@given(rules=rule_sets(), seed=st.integers(0, 2**40), choices=st.integers(0, 2**32))
def test_same_seed_and_actions_give_the_same_events_and_scores_add_up(rules, seed, choices):
    a, b = Game(rules, seed), Game(rules, seed)
    play_randomly(a, random.Random(choices))
    play_randomly(b, random.Random(choices))
    assert json.dumps(a.events) == json.dumps(b.events)
    replay = {"version": 1, "rules": rules.to_dict(), "games": [
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

    one = play_match(rules, seats(), seed=seed, games=1, duplicate=rules.players <= 4)
    two = play_match(rules, seats(), seed=seed, games=1, duplicate=rules.players <= 4)
    assert json.dumps(one.replay, sort_keys=True) == json.dumps(two.replay, sort_keys=True)
    verify(json.loads(json.dumps(one.replay)))
