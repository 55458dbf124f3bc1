"""Wild Draw Four modes, stacking and UNO (RULES.md sections 4 and 5)."""

from __future__ import annotations

from uno_scenarios import act, hand, of, play, position

ACCEPT = {"type": "accept"}
CHALLENGE = {"type": "challenge"}
DRAW = {"type": "draw"}


def wd4_game(hand0, **options):
    return position([hand0, ["Y1", "Y2"], ["G1", "G2"]], "R5", current=0, **options)


def test_wild_draw_four_lets_the_next_player_accept_or_challenge():
    g = wd4_game(["W+4", "B1", "B2"])
    play(g, "W+4", "G")
    assert (g.seat, g.decision) == (1, "challenge")
    assert g.legal_actions() == [ACCEPT, CHALLENGE]
    assert g.observation()["pending_draw"] == 4


def test_wild_draw_four_accepted_next_player_draws_four_and_loses_the_turn():
    g = wd4_game(["W+4", "B1", "B2"])
    play(g, "W+4", "G")
    act(g, ACCEPT)
    assert len(hand(g, 1)) == 6
    assert (g.seat, g.decision, g.state()["color"]) == (2, "play", "G")


def test_wild_draw_four_challenge_innocent_player_makes_challenger_draw_six():
    g = wd4_game(["W+4", "B1", "Y5"])
    play(g, "W+4", "G")
    events = act(g, CHALLENGE)
    assert of(events, "challenge") == [{"e": "challenge", "seat": 1, "target": 0, "honest": True}]
    assert len(hand(g, 1)) == 8
    assert len(hand(g, 0)) == 2
    assert g.seat == 2


def test_wild_draw_four_challenge_guilty_player_draws_four():
    g = wd4_game(["W+4", "R1", "B2"])
    play(g, "W+4", "G")
    events = act(g, CHALLENGE)
    assert of(events, "challenge")[0]["honest"] is False
    assert len(hand(g, 0)) == 6
    assert len(hand(g, 1)) == 2
    # the challenger then takes a normal turn under the named colour
    assert (g.seat, g.decision, g.state()["color"]) == (1, "play", "G")


def test_wild_draw_four_honesty_ignores_cards_matching_only_by_number_or_wilds():
    g = wd4_game(["W+4", "B5", "W"])  # B5 matches the R5 only by number
    play(g, "W+4", "G")
    act(g, CHALLENGE)
    assert len(hand(g, 1)) == 8


def test_wild_draw_four_enforced_is_only_offered_when_honest():
    g = wd4_game(["W+4", "R1", "B2"], wd4="enforced")
    assert all(a.get("card") != "W+4" for a in g.legal_actions())
    g = wd4_game(["W+4", "B1", "B2"], wd4="enforced")
    assert {"type": "play", "card": "W+4", "color": "G"} in g.legal_actions()


def test_wild_draw_four_enforced_or_free_has_no_challenge():
    for mode in ("enforced", "free"):
        g = wd4_game(["W+4", "B1", "B2"], wd4=mode)
        play(g, "W+4", "G")
        assert len(hand(g, 1)) == 6
        assert (g.seat, g.decision) == (2, "play")


def test_wild_draw_four_free_is_playable_while_holding_the_active_colour():
    g = wd4_game(["W+4", "R1", "B2"], wd4="free")
    assert {"type": "play", "card": "W+4", "color": "B"} in g.legal_actions()


def stacking_game(hands, stacking, draws=None):
    return position(hands, "R5", current=0, wd4="free", stacking=stacking, draws=draws)


def test_deflect_answers_a_draw_two_with_any_draw_two():
    g = stacking_game([["R+2", "B1", "B2"], ["B+2", "G1", "G2"], ["Y1"]], "deflect")
    play(g, "R+2")
    assert (g.seat, g.decision) == (1, "stack")
    assert g.legal_actions() == [{"type": "play", "card": "B+2"}, ACCEPT]
    assert g.observation()["pending_draw"] == 2
    play(g, "B+2")
    # seat 2 cannot answer: a plain Draw Two, not cumulative
    assert len(hand(g, 2)) == 3
    assert g.seat == 0


def test_deflect_answers_a_wild_draw_four_only_with_a_draw_two_of_the_named_colour():
    g = stacking_game([["W+4", "B1", "B2"], ["G+2", "B+2", "W+4", "Y3"], ["Y1"]], "deflect")
    play(g, "W+4", "G")
    assert g.legal_actions() == [{"type": "play", "card": "G+2"}, ACCEPT]
    play(g, "G+2")
    assert len(hand(g, 2)) == 3


def test_player_without_an_answer_draws_at_once_under_stacking():
    g = stacking_game([["R+2", "B1", "B2"], ["G1"], ["Y1"]], "stack")
    play(g, "R+2")
    assert len(hand(g, 1)) == 3
    assert g.seat == 2


def test_stack_accumulates_draw_twos():
    g = stacking_game([["R+2", "B1", "B2"], ["B+2", "G1", "G2"], ["Y1"]], "stack")
    play(g, "R+2")
    play(g, "B+2")
    assert len(hand(g, 2)) == 5
    assert g.seat == 0


def test_stack_accumulates_wild_draw_fours_and_the_last_one_names_the_colour():
    g = stacking_game([["W+4", "B1", "B2"], ["W+4", "G1", "G2"], ["Y1"]], "stack")
    play(g, "W+4", "G")
    assert {"type": "play", "card": "W+4", "color": "Y"} in g.legal_actions()
    assert g.observation()["pending_draw"] == 4
    play(g, "W+4", "Y")
    assert len(hand(g, 2)) == 9
    assert g.state()["color"] == "Y"


def test_stack_mixes_a_draw_two_onto_a_wild_draw_four_of_the_named_colour():
    g = stacking_game([["W+4", "B1", "B2"], ["G+2", "G1", "G2"], ["Y1"]], "stack")
    play(g, "W+4", "G")
    play(g, "G+2")
    assert len(hand(g, 2)) == 7


def test_stack_accept_draws_the_whole_pending_total():
    g = stacking_game([["R+2", "B1", "B2"], ["B+2", "G1", "G2"], ["Y+2", "Y1"]], "stack")
    play(g, "R+2")
    play(g, "B+2")
    assert g.observation()["pending_draw"] == 4
    act(g, ACCEPT)
    assert len(hand(g, 2)) == 6
    assert g.seat == 0


def test_uno_declared_on_the_play_is_shown_to_everyone():
    g = position([["R1", "B7"], ["R2", "G1"]], "R5", current=0)
    events = play(g, "R1", uno=True)
    assert events[0] == {"e": "play", "seat": 0, "card": "R1", "color": "R", "uno": True}
    assert g.observation()["uno"] == [True, False]
    assert not of(events, "uno_caught")


def test_missing_uno_on_a_play_leaving_one_card_draws_the_penalty_at_once():
    g = position([["R1", "B7"], ["R2", "G1"]], "R5", current=0, draws={0: ["Y3", "Y4"]})
    events = play(g, "R1")
    assert of(events, "uno_caught") == [{"e": "uno_caught", "seat": 0}]
    assert of(events, "draw") == [{"e": "draw", "seat": 0, "cards": ["Y3", "Y4"], "reason": "uno"}]
    assert hand(g, 0) == ["B7", "Y3", "Y4"]


def test_uno_penalty_option_sets_the_number_of_cards():
    g = position([["R1", "B7"], ["R2", "G1"]], "R5", current=0, uno_penalty=4)
    play(g, "R1")
    assert len(hand(g, 0)) == 5


def test_uno_declared_on_a_play_not_leaving_one_card_is_ignored():
    g = position([["R1", "B7", "B8"], ["R2", "G1"]], "R5", current=0)
    events = play(g, "R1", uno=True)
    assert "uno" not in events[0]
    assert g.observation()["uno"] == [False, False]
    assert len(hand(g, 0)) == 2


def test_uno_key_on_a_draw_is_ignored():
    g = position([["R1", "B7"], ["R2", "G1"]], "R5", current=0)
    act(g, {"type": "draw", "uno": True})
    assert len(hand(g, 0)) == 3


def test_uno_flag_clears_when_the_seat_draws():
    g = position([["R1", "B7"], ["R2", "G1"]], "R5", current=0)
    play(g, "R1", uno=True)
    play(g, "R2", uno=True)
    act(g, DRAW)
    assert g.state()["uno"][0] is False
