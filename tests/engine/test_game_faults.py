"""Faults inside a game: a strike costs two cards and the turn, at every decision kind."""

from __future__ import annotations

import pytest
from uno_scenarios import act, hand, of, play, position

from engine.game import IllegalAction


def strike(game):
    start = len(game.events)
    game.fault("illegal", "test", strikes=1)
    return game.events[start:]


def test_strike_on_a_turn_draws_two_and_passes_the_turn():
    g = position([["R1", "B2"], ["Y1"], ["G1"]], "R5", current=0)
    events = strike(g)
    assert events[0] == {"e": "fault", "seat": 0, "kind": "illegal", "reason": "test", "strikes": 1}
    assert of(events, "draw")[0]["reason"] == "strike" and len(hand(g, 0)) == 4
    assert (g.seat, g.decision) == (1, "play")


def test_strike_on_a_challenge_decision_also_takes_the_wild_draw_four():
    g = position([["W+4", "B1", "B2"], ["Y1"], ["G1"]], "R5", current=0)
    play(g, "W+4", "G")
    strike(g)
    assert len(hand(g, 1)) == 1 + 2 + 4
    assert g.seat == 2


def test_strike_on_a_stack_decision_takes_the_pending_draw():
    g = position([["R+2", "B1", "B2"], ["B+2", "G1"], ["Y1"]], "R5", current=0, wd4="free", stacking="stack")
    play(g, "R+2")
    assert g.decision == "stack"
    strike(g)
    assert len(hand(g, 1)) == 2 + 2 + 2
    assert g.seat == 2


def test_strike_on_a_jump_in_decision_declines_it():
    g = position([["R3", "B1", "B2"], ["Y1"], ["R3", "G2"]], "R5", current=0, jump_in=True)
    play(g, "R3")
    assert g.decision == "jump_in"
    strike(g)
    assert len(hand(g, 2)) == 4
    assert (g.seat, g.decision) == (1, "play")


def test_strike_on_a_swap_decision_swaps_nothing():
    g = position([["R7", "B1", "B2"], ["Y1"], ["G1"]], "R5", current=0, seven_zero=True)
    play(g, "R7")
    strike(g)
    assert hand(g, 0)[:2] == ["B1", "B2"] and len(hand(g, 0)) == 4
    assert not of(g.events, "swap")
    assert g.seat == 1


def test_strike_on_a_starting_wild_names_red_and_passes_the_turn():
    g = position([["B1"], ["G1"], ["Y1"]], "W", first_card_effect=True)
    assert g.decision == "choose_color"
    strike(g)
    assert g.state()["color"] == "R"
    assert (g.seat, g.decision) == (2, "play")


def test_forfeit_without_strike_leaves_the_decision_to_the_fallback():
    g = position([["R1", "B2"], ["Y1"]], "R5", current=0)
    g.fault("crash", "segfault", forfeit="crash: segfault")
    assert of(g.events, "forfeit") == [{"e": "forfeit", "seat": 0, "reason": "crash: segfault"}]
    assert (g.seat, g.decision) == (0, "play")
    assert g.apply_fallback() == {"type": "play", "card": "R1", "uno": True}


@pytest.mark.parametrize("reply_factory", [
    lambda: [],
    lambda: "play R1",
    lambda: {"type": {"nested": "dict"}},
    lambda: {"type": "play", "card": "R1", "color": ["R"]},
    lambda: {"type": "swap", "target": True},
    lambda: {1: 2},
])
def test_hostile_replies_are_illegal_actions_not_crashes(reply_factory):
    g = position([["R1", "B2", "W"], ["Y1"]], "R5", current=0)
    with pytest.raises(IllegalAction):
        g.apply(reply_factory())
    assert g.decision == "play" and g.seat == 0


def test_reply_that_cannot_be_printed_is_still_refused_cleanly():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    g = position([["R1", "B2"], ["Y1"]], "R5", current=0)
    with pytest.raises(IllegalAction, match="unprintable list"):
        g.apply(deep)


def test_uno_key_with_a_non_true_value_is_no_declaration():
    g = position([["R1", "B2"], ["Y1"]], "R5", current=0)
    events = act(g, {"type": "play", "card": "R1", "uno": "yes"})
    assert of(events, "uno_caught")
