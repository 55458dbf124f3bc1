"""Replies matched by identity (the dicts an observation handed out) judge by value all the same."""

from __future__ import annotations

import pytest
from uno_scenarios import of, position

from engine import game as game_module
from engine.game import Game, IllegalAction
from engine.rules import Rules


def start_of_turn():
    # seat 1 holds R1, G2 and R5 on a red 3
    return position([["B9", "Y4"], ["R1", "G2", "R5"]], "R3", current=1)


def test_a_handed_out_reply_changed_to_another_legal_card_plays_that_card():
    g = start_of_turn()
    reply = g.observation()["legal_actions"][0]
    assert reply == {"type": "play", "card": "R1"}
    reply["card"] = "R5"
    g.apply(reply)
    assert of(g.events, "play")[-1]["card"] == "R5"
    assert g.actions[-1]["action"] == {"type": "play", "card": "R5"}


def test_a_handed_out_reply_changed_to_a_card_not_held_is_refused():
    g = start_of_turn()
    reply = g.observation()["legal_actions"][0]
    reply["card"] = "R9"
    with pytest.raises(IllegalAction, match="R9"):
        g.apply(reply)


def test_uno_changed_to_1_in_a_handed_out_play_is_no_declaration():
    g = position([["B9", "Y4"], ["R1", "G2"]], "R3", current=1)
    reply = g.observation()["legal_actions"][0]
    assert reply == {"type": "play", "card": "R1", "uno": True}
    reply["uno"] = 1
    start = len(g.events)
    g.apply(reply)
    assert of(g.events[start:], "uno_caught") == [{"e": "uno_caught", "seat": 1}]
    assert g.actions[-1]["action"] == {"type": "play", "card": "R1"}


def test_swap_target_changed_to_true_in_a_handed_out_reply_is_refused():
    g = position([["R7", "B2", "G3"], ["Y1", "Y2"], ["G5", "G6"]], "R3", current=0, seven_zero=True)
    g.apply({"type": "play", "card": "R7"})
    assert g.decision == "swap_target"
    reply = g.observation()["legal_actions"][0]
    assert reply == {"type": "swap", "target": 1}
    reply["target"] = True
    with pytest.raises(IllegalAction, match="True"):
        g.apply(reply)


def test_a_bot_mutating_its_observation_changes_neither_the_next_one_nor_the_replay():
    g = start_of_turn()
    first = g.observation()
    clean = g.observation()
    for action in first["legal_actions"]:
        action["type"] = "bogus"
    first["hand"].append("W")
    first["discard"].clear()
    assert g.observation() == clean
    g.apply(clean["legal_actions"][0])
    assert g.actions[-1]["action"] == {"type": "play", "card": "R1"}
    assert g.events[0]["hands"][1] == ["R1", "G2", "R5"]


def test_legal_actions_are_the_same_when_the_play_cache_holds_one_entry(monkeypatch):
    def legal_sequence():
        seen = []
        g = Game(Rules(players=3, rounds=2), seed=11)
        while not g.over:
            legal = g.legal_actions()
            seen.append(legal)
            g.apply(legal[len(seen) % len(legal)])
        return seen

    normal = legal_sequence()
    monkeypatch.setattr(game_module, "PLAY_CACHE_SIZE", 1)
    for cache in game_module._PLAY_LEGAL:
        cache.clear()
    assert legal_sequence() == normal
    assert all(len(cache) <= 1 for cache in game_module._PLAY_LEGAL)


def test_observation_is_the_view_of_the_seat_asked_plus_decision_and_legal_actions():
    # observation() builds its dict inline for speed; it must stay view() plus two keys
    g = Game(Rules(players=4, rounds=1, wd4="free", stacking="stack", seven_zero=True, jump_in=True), seed=5)
    checked = 0
    while not g.over:
        observation = g.observation()
        expected = {**g.view(g.seat), "decision": g.decision, "legal_actions": g.legal_actions()}
        assert observation == expected
        assert list(observation) == list(expected)
        g.apply(observation["legal_actions"][checked % len(observation["legal_actions"])])
        checked += 1
    assert checked > 20
