"""Ending a round, scoring, ending a game (RULES.md section 7)."""

from __future__ import annotations

from uno_scenarios import act, of, play, position

from engine.game import Game
from engine.rules import Rules


def test_winner_scoring_gives_the_player_who_went_out_the_points_left_in_other_hands():
    g = position([["R1"], ["G9", "BS", "W"], ["Y+2", "W+4"]], "R5", current=0, rounds=1)
    play(g, "R1")
    end = of(g.events, "round_end")[0]
    assert end == {"e": "round_end", "round": 1, "winner": 0, "reason": "out",
                   "points": [9 + 20 + 50 + 20 + 50, 0, 0], "scores": [149, 0, 0]}
    assert g.over and g.scores == [149, 0, 0]
    assert of(g.events, "game_end")[0]["ranks"] == [1, 2, 2]


def test_penalty_scoring_adds_the_points_left_in_each_own_hand():
    g = position([["R1"], ["G9", "BS"], ["Y2", "W+4"]], "R5", current=0, rounds=1, scoring="penalty")
    play(g, "R1")
    end = of(g.events, "round_end")[0]
    assert end["points"] == [0, 29, 52]
    assert of(g.events, "game_end")[0]["ranks"] == [1, 2, 3]


def test_game_ends_when_a_player_reaches_the_target():
    g = position([["R1"], ["G9"]], "R5", current=0, scores=[491, 0])
    play(g, "R1")
    assert g.over and g.scores == [500, 0]


def test_game_goes_on_with_a_new_deal_below_the_target():
    g = position([["R1"], ["G9"]], "R5", current=0, scores=[490, 0], dealer=0)
    play(g, "R1")
    assert not g.over
    starts = of(g.events, "round_start")
    assert [e["round"] for e in starts] == [1, 2]
    assert starts[1]["dealer"] == 1
    assert [len(h) for h in starts[1]["hands"]] == [7, 7]


def test_penalty_game_ends_when_a_player_reaches_200():
    hands = [["R1"], ["G9", "W", "W", "W+4"]]  # 159 points left
    g = position(hands, "R5", current=0, scoring="penalty", scores=[0, 41])
    play(g, "R1")
    assert g.over and g.scores == [0, 200]
    assert of(g.events, "game_end")[0]["ranks"] == [1, 2]
    g = position(hands, "R5", current=0, scoring="penalty", scores=[0, 40])
    play(g, "R1")
    assert not g.over and g.scores == [0, 199]


def test_fixed_rounds_ignore_the_target():
    g = position([["R1"], ["G9"]], "R5", current=0, scores=[600, 0], rounds=2)
    play(g, "R1")
    assert not g.over and g.round == 2


def test_fixed_rounds_end_the_game_after_that_many_rounds():
    g = Game(Rules(players=3, rounds=2), seed=5)
    while not g.over:
        g.apply_fallback()
    assert [e["round"] for e in of(g.events, "round_end")] == [1, 2]


def test_round_past_max_turns_ends_with_no_score():
    g = position([["B1", "B2"], ["G1", "G2"]], "R5", current=0, max_turns=3, rounds=1, scores=[5, 7])
    for _ in range(3):
        act(g, {"type": "draw"})
        if g.decision == "play_drawn":
            act(g, {"type": "pass"})
    end = of(g.events, "round_end")[0]
    assert end["reason"] == "max_turns" and end["winner"] is None
    assert end["points"] == [0, 0] and g.scores == [5, 7]


def test_later_rounds_of_a_set_up_game_are_dealt_and_drawn_from_its_seed():
    def second_round(draws):
        g = position([["R1"], ["G9", "G8"]], "R5", current=0, draws=draws, seed=3, rounds=2)
        play(g, "R1")
        start = len(g.events)
        while not g.over:
            g.apply_fallback()
        return g.events[start:]

    plain = second_round(None)
    fixed = second_round({1: ["B9", "B8", "B7"]})  # never drawn in round 1
    assert any(e["e"] == "draw" and e["seat"] == 1 for e in plain)
    assert plain == fixed


def _play_out(g: Game, draw_only: bool = False) -> None:
    while not g.over:
        if draw_only:
            kinds = {a["type"] for a in g.legal_actions()}
            g.apply({"type": "draw"} if "draw" in kinds else {"type": "pass"} if "pass" in kinds else g.legal_actions()[0])
        else:
            g.apply(g.legal_actions()[0])


def test_a_fixed_number_of_rounds_is_played_in_full_even_past_a_hundred():
    # one card each: every round ends on its first plays, so 150 rounds are quick
    g = Game(Rules(players=2, hand_size=1, rounds=150), seed=4)
    _play_out(g)
    ends = of(g.events, "round_end")
    assert len(ends) == 150 and ends[-1]["round"] == 150
    assert sum(e["reason"] == "out" for e in ends) > 100


def test_a_game_to_a_target_goes_on_while_rounds_are_won():
    g = Game(Rules(players=2, hand_size=1, target=3000), seed=8)
    _play_out(g)
    ends = of(g.events, "round_end")
    assert len(ends) > 100 and max(g.scores) >= 3000


def test_a_game_of_bots_that_never_go_out_ends_after_a_hundred_stalled_rounds():
    from engine.game import MAX_STALLED_ROUNDS

    g = Game(Rules(players=2, max_turns=4), seed=2)
    _play_out(g, draw_only=True)
    ends = of(g.events, "round_end")
    assert MAX_STALLED_ROUNDS == 100
    assert len(ends) == 100 and all(e["reason"] == "max_turns" for e in ends)
    assert g.scores == [0, 0] and of(g.events, "game_end")[0]["ranks"] == [1, 1]
