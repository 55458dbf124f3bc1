"""Setting up a round: the starting card (RULES.md section 2)."""

from __future__ import annotations

import pytest
from uno_scenarios import act, hand, of, position

from engine.cards import KIND_RANK, kind_of
from engine.game import Game
from engine.rules import Rules

HANDS = [["B1", "B2"], ["G1", "G2"], ["Y1", "Y2"]]


def start(top, **options):
    return position(HANDS, top, dealer=0, first_card_effect=True, **options)


def test_number_card_starts_play_with_the_player_left_of_the_dealer():
    g = start("R5")
    assert (g.seat, g.decision, g.direction, g.state()["color"]) == (1, "play", 1, "R")


def test_starting_skip_skips_the_first_player():
    g = start("RS")
    assert of(g.events, "skip") == [{"e": "skip", "seat": 1}]
    assert g.seat == 2


def test_starting_reverse_turns_play_counter_clockwise_and_the_dealer_starts():
    g = start("RR")
    assert g.direction == -1
    assert g.seat == 0


def test_starting_draw_two_makes_the_first_player_draw_two_and_skips_them():
    g = start("R+2")
    assert len(hand(g, 1)) == 4
    assert of(g.events, "draw")[0]["seat"] == 1
    assert g.seat == 2


def test_starting_wild_lets_the_first_player_name_the_colour_then_play():
    g = start("W")
    assert (g.seat, g.decision) == (1, "choose_color")
    assert g.observation()["color"] is None
    assert g.legal_actions() == [{"type": "color", "color": c} for c in "RYGB"]
    act(g, {"type": "color", "color": "G"})
    assert (g.seat, g.decision, g.state()["color"]) == (1, "play", "G")
    assert {"type": "play", "card": "G1", "uno": True} in g.legal_actions()


def test_starting_wild_draw_four_goes_back_and_a_new_card_is_turned():
    g = start("W+4")
    start_event = of(g.events, "round_start")[0]
    assert start_event["returned"][0] == "W+4"
    assert start_event["top"] != "W+4"
    assert g.state()["discard"] == [start_event["top"]]


@pytest.mark.parametrize("top", ["RS", "Y+2", "W", "W+4", "BR"])
def test_number_only_turns_cards_until_a_number_card_starts(top):
    g = start(top, first_card="number_only")
    start_event = of(g.events, "round_start")[0]
    assert start_event["returned"][0] == top
    assert KIND_RANK[kind_of(start_event["top"])] <= 9
    assert g.seat == 1 and g.decision == "play"


@pytest.mark.parametrize("seed", range(30))
def test_number_only_never_starts_with_an_action_card(seed):
    g = Game(Rules(first_card="number_only", players=3), seed)
    assert KIND_RANK[kind_of(g.state()["discard"][0])] <= 9


def test_deal_gives_hand_size_cards_each_and_the_rest_is_the_draw_pile():
    g = Game(Rules(players=5, hand_size=9), 11)
    state = g.state()
    assert [len(h) for h in of(g.events, "round_start")[0]["hands"]] == [9] * 5
    assert of(g.events, "round_start")[0]["draw_pile"] == 108 - 45 - 1
    assert sum(len(h) for h in state["hands"]) + state["draw_pile"] + len(state["discard"]) == 108


def test_dealer_passes_clockwise_each_round():
    g = Game(Rules(players=3, rounds=3, max_turns=1), 4)
    dealers = [e["dealer"] for e in of(g.events, "round_start")]
    while not g.over:
        g.apply_fallback()
        dealers = [e["dealer"] for e in of(g.events, "round_start")]
    assert dealers == [dealers[0], (dealers[0] + 1) % 3, (dealers[0] + 2) % 3]
