"""A turn, drawing and the action cards (RULES.md sections 3 and 4)."""

from __future__ import annotations

import pytest
from uno_scenarios import act, hand, of, play, position

from engine.cards import CODES, DECK
from engine.game import IllegalAction

DRAW = {"type": "draw"}
PASS = {"type": "pass"}


def full_deck_without(*codes):
    """Every card code of the deck, minus one copy of each code given."""
    deck = [CODES[k] for k in DECK]
    for code in codes:
        deck.remove(code)
    return deck


def test_legal_actions_list_each_distinct_playable_card_once_and_wilds_per_colour():
    g = position([["R1", "R1", "G5", "B7", "W", "W+4"], ["Y1"]], "R5", current=0)
    wilds = [{"type": "play", "card": w, "color": c} for w in ("W", "W+4") for c in "RYGB"]
    assert g.legal_actions() == [{"type": "play", "card": "R1"}, {"type": "play", "card": "G5"}, *wilds, DRAW]


def test_play_that_leaves_one_card_is_listed_with_uno_set():
    g = position([["R1", "B7"], ["Y1"]], "R5", current=0)
    assert g.legal_actions() == [{"type": "play", "card": "R1", "uno": True}, DRAW]


def test_card_matching_neither_colour_nor_rank_is_refused_with_the_reply_and_decision():
    g = position([["R1", "B7", "B8"], ["Y1"]], "R5", current=0)
    with pytest.raises(IllegalAction, match=r"'B7'.*decision 'play' of seat 0"):
        play(g, "B7")
    assert hand(g, 0) == ["R1", "B7", "B8"]


@pytest.mark.parametrize(
    "reply",
    [
        {"type": "play", "card": "R1", "color": "R"},  # colour on a coloured card
        {"type": "play", "card": "W"},  # wild without a colour
        {"type": "play", "card": "W", "color": "P"},
        {"type": "play", "card": "R1", "extra": 1},
        {"type": "pass"},
        {"type": "draw", "card": "R1"},
        {"type": "swap", "target": 1},
        ["play", "R1"],
        None,
        {"type": ["play"]},
        {"type": "play", "card": ["R1"]},
    ],
)
def test_anything_not_equal_to_a_listed_action_is_illegal(reply):
    g = position([["R1", "W", "B8"], ["Y1"]], "R5", current=0)
    with pytest.raises(IllegalAction):
        g.apply(reply)


def test_active_colour_after_a_wild_is_the_one_named():
    g = position([["W", "B7", "B8"], ["Y1", "G2"]], "R5", current=0)
    play(g, "W", "G")
    assert g.state()["color"] == "G"
    assert g.legal_actions() == [{"type": "play", "card": "G2", "uno": True}, DRAW]


def test_draw_one_playable_card_may_be_played_at_once_and_only_that_card():
    g = position([["R1", "B7"], ["Y1"]], "R5", current=0, draws={0: ["R9"]})
    events = act(g, DRAW)
    assert of(events, "draw") == [{"e": "draw", "seat": 0, "cards": ["R9"], "reason": "draw"}]
    assert (g.seat, g.decision) == (0, "play_drawn")
    assert g.legal_actions() == [{"type": "play", "card": "R9"}, PASS]
    act(g, PASS)
    assert (g.seat, g.decision, hand(g, 0)) == (1, "play", ["R1", "B7", "R9"])


def test_draw_one_unplayable_card_ends_the_turn():
    g = position([["B7"], ["Y1"]], "R5", current=0, draws={0: ["B2"]})
    act(g, DRAW)
    assert (g.seat, g.decision, hand(g, 0)) == (1, "play", ["B7", "B2"])


def test_drawn_wild_is_offered_once_per_colour():
    g = position([["B7"], ["Y1"]], "R5", current=0, draws={0: ["W"]})
    act(g, DRAW)
    assert g.legal_actions() == [
        *({"type": "play", "card": "W", "color": c, "uno": True} for c in "RYGB"), PASS]


def test_drawing_is_allowed_even_when_a_card_could_be_played():
    g = position([["R1", "R2"], ["Y1"]], "R5", current=0)
    assert DRAW in g.legal_actions()


def test_until_playable_keeps_drawing_until_a_playable_card():
    g = position([["B7"], ["Y1"]], "R5", current=0, draws={0: ["B1", "G2", "R9"]}, draw="until_playable")
    events = act(g, DRAW)
    assert [c for e in of(events, "draw") for c in e["cards"]] == ["B1", "G2", "R9"]
    assert g.decision == "play_drawn"
    assert g.legal_actions() == [{"type": "play", "card": "R9"}, PASS]


def test_until_playable_stops_at_draw_limit_and_the_turn_passes():
    g = position([["B7"], ["Y1"]], "R5", current=0, draws={0: ["B1", "G2", "R9"]},
                 draw="until_playable", draw_limit=2)
    act(g, DRAW)
    assert hand(g, 0) == ["B7", "B1", "G2"]
    assert (g.seat, g.decision) == (1, "play")


def test_empty_draw_pile_is_refilled_from_the_discard_pile_except_its_top():
    hands = [["R6", "Y9"], full_deck_without("R5", "R6", "Y9")]
    g = position(hands, "R5", current=0)
    assert g.state()["draw_pile"] == 0
    play(g, "R6", uno=True)
    play(g, "R8")
    events = act(g, DRAW)
    assert of(events, "reshuffle") == [{"e": "reshuffle", "cards": 2}]
    drawn = of(events, "draw")[0]["cards"]
    assert drawn[0] in ("R5", "R6")
    state = g.state()
    assert state["discard"] == ["R8"] and state["draw_pile"] == 1


def test_draw_with_both_piles_empty_takes_nothing_and_the_turn_passes():
    hands = [["Y9"], full_deck_without("R5", "Y9")]
    g = position(hands, "R5", current=0)
    events = act(g, DRAW)
    assert of(events, "draw") == [{"e": "draw", "seat": 0, "cards": [], "reason": "draw"}]
    assert (g.seat, hand(g, 0)) == (1, ["Y9"])


def test_skip_makes_the_next_player_lose_the_turn():
    g = position([["RS", "B1"], ["Y1"], ["G1"]], "R5", current=0)
    events = play(g, "RS", uno=True)
    assert of(events, "skip") == [{"e": "skip", "seat": 1}]
    assert g.seat == 2


def test_reverse_flips_the_direction_of_play():
    g = position([["RR", "B1", "B2"], ["Y1"], ["G1"]], "R5", current=0)
    events = play(g, "RR")
    assert of(events, "direction") == [{"e": "direction", "direction": -1}]
    assert g.seat == 2
    assert g.observation()["direction"] == -1


def test_reverse_with_two_players_acts_as_a_skip():
    g = position([["RR", "B1", "B2"], ["Y1"]], "R5", current=0)
    play(g, "RR")
    assert (g.seat, g.decision) == (0, "play")


def test_reverse_with_two_players_passes_the_turn_when_the_option_is_off():
    g = position([["RR", "B1", "B2"], ["Y1"]], "R5", current=0, two_player_reverse_skips=False)
    play(g, "RR")
    assert (g.seat, g.direction) == (1, -1)


def test_draw_two_makes_the_next_player_draw_two_and_lose_the_turn():
    g = position([["R+2", "B1", "B2"], ["Y1"], ["G1"]], "R5", current=0, draws={1: ["B5", "B6"]})
    events = play(g, "R+2")
    assert of(events, "draw") == [{"e": "draw", "seat": 1, "cards": ["B5", "B6"], "reason": "penalty"}]
    assert hand(g, 1) == ["Y1", "B5", "B6"]
    assert g.seat == 2


def test_last_card_draw_two_still_makes_the_next_player_draw_and_counts_in_scoring():
    g = position([["R+2"], ["G1"], ["Y2"]], "R5", current=0, draws={1: ["B9", "B8"]}, rounds=1)
    play(g, "R+2")
    end = of(g.events, "round_end")[0]
    assert end["winner"] == 0
    assert end["points"] == [1 + 9 + 8 + 2, 0, 0]
    assert g.over


def test_wild_draw_four_as_last_card_makes_the_next_player_draw_four():
    g = position([["W+4"], ["G1"], ["Y2"]], "R5", current=0, rounds=1)
    play(g, "W+4", "B")
    assert len(hand(g, 1)) == 5
    assert of(g.events, "round_end")[0]["winner"] == 0
