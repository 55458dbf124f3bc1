"""Optional house rules: seven_zero and jump_in (RULES.md section 6)."""

from __future__ import annotations

from uno_scenarios import act, hand, of, play, position

PASS = {"type": "pass"}


def test_seven_zero_zero_passes_every_hand_one_seat_in_the_direction_of_play():
    g = position([["R0", "B1", "B2"], ["Y1"], ["G1", "G2"]], "R5", current=0, seven_zero=True)
    events = play(g, "R0")
    assert of(events, "pass_hands") == [{"e": "pass_hands", "direction": 1}]
    assert [hand(g, s) for s in range(3)] == [["G1", "G2"], ["B1", "B2"], ["Y1"]]
    assert g.seat == 1


def test_seven_zero_zero_passes_counter_clockwise_after_a_reverse():
    g = position([["RR", "B1", "B2"], ["Y1", "R0", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True)
    play(g, "RR")
    assert g.seat == 2
    act(g, {"type": "draw"})  # seat 2 cannot play
    if g.decision == "play_drawn":
        act(g, PASS)
    assert g.seat == 1
    play(g, "R0")
    # counter-clockwise: seat 1's hand goes to seat 0, seat 0's to seat 2
    assert hand(g, 0) == ["Y1", "Y3"]
    assert hand(g, 2) == ["B1", "B2"]


def test_seven_zero_seven_lets_its_player_swap_hands_with_a_chosen_player():
    g = position([["R7", "B1", "B2"], ["Y1"], ["G1", "G2", "G3"]], "R5", current=0, seven_zero=True)
    play(g, "R7")
    assert (g.seat, g.decision) == (0, "swap_target")
    assert g.legal_actions() == [{"type": "swap", "target": 1}, {"type": "swap", "target": 2}]
    events = act(g, {"type": "swap", "target": 2})
    assert of(events, "swap") == [{"e": "swap", "seat": 0, "target": 2}]
    assert hand(g, 0) == ["G1", "G2", "G3"] and hand(g, 2) == ["B1", "B2"]
    assert g.seat == 1


def test_no_uno_penalty_for_a_one_card_hand_that_arrives_by_a_swap():
    g = position([["R7", "B1", "B2"], ["Y1", "Y2"], ["G1"]], "R5", current=0, seven_zero=True)
    play(g, "R7")
    events = act(g, {"type": "swap", "target": 2})
    assert hand(g, 0) == ["G1"]
    assert not of(g.events, "uno_caught") and not of(events, "draw")


def test_seven_is_an_ordinary_card_without_seven_zero():
    g = position([["R7", "B1", "B2"], ["Y1"], ["G1"]], "R5", current=0)
    play(g, "R7")
    assert (g.seat, g.decision) == (1, "play")


def test_jump_in_asks_a_player_holding_the_identical_card_out_of_turn():
    g = position([["R3", "B1", "B2"], ["Y1", "G1"], ["R3", "G2", "G3"]], "R5", current=0, jump_in=True)
    play(g, "R3")
    assert (g.seat, g.decision) == (2, "jump_in")
    assert g.legal_actions() == [{"type": "play", "card": "R3"}, PASS]
    obs = g.observation()
    assert obs["current"] == 0 and obs["seat"] == 2


def test_jump_in_accepted_play_continues_after_the_jumper():
    g = position([["R3", "B1", "B2"], ["Y1", "G1"], ["R3", "G2", "G3"]], "R5", current=0, jump_in=True)
    play(g, "R3")
    events = play(g, "R3")
    assert events[1] == {"e": "play", "seat": 2, "card": "R3", "color": "R", "jump_in": True}
    assert hand(g, 2) == ["G2", "G3"]
    assert (g.seat, g.decision) == (0, "play")


def test_jump_in_declined_play_goes_on_normally():
    g = position([["R3", "B1", "B2"], ["Y1", "G1"], ["R3", "G2", "G3"]], "R5", current=0, jump_in=True)
    play(g, "R3")
    act(g, PASS)
    assert (g.seat, g.decision) == (1, "play")


def test_jump_in_on_a_draw_two_takes_over_the_penalty():
    g = position([["R+2", "B1", "B2"], ["Y1", "G1"], ["R+2", "G2", "G3"]], "R5", current=0, jump_in=True)
    play(g, "R+2")
    play(g, "R+2")
    # the player after the jumper (seat 0) draws, seat 1 does not
    assert len(hand(g, 0)) == 4
    assert len(hand(g, 1)) == 2
    assert g.seat == 1


def test_jump_in_needs_an_identical_card_not_just_the_same_rank():
    g = position([["R3", "B1", "B2"], ["G3", "G1"], ["Y3", "G2"]], "R5", current=0, jump_in=True)
    play(g, "R3")
    assert (g.seat, g.decision) == (1, "play")


def test_no_jump_in_on_a_wild():
    g = position([["W", "B1", "B2"], ["W", "G1"], ["Y3", "G2"]], "R5", current=0, jump_in=True)
    play(g, "W", "B")
    assert (g.seat, g.decision) == (1, "play")


def test_no_jump_in_on_the_starting_card():
    g = position([["B1"], ["R5", "G1"], ["Y3"]], "R5", dealer=2, first_card_effect=True, jump_in=True)
    assert (g.seat, g.decision) == (0, "play")


def test_jump_in_is_off_by_default():
    g = position([["R3", "B1", "B2"], ["Y1", "G1"], ["R3", "G2", "G3"]], "R5", current=0)
    play(g, "R3")
    assert (g.seat, g.decision) == (1, "play")


def test_jump_in_on_a_skip_skips_the_seat_after_the_jumper():
    g = position([["RS", "B1", "B2"], ["Y1", "G1"], ["RS", "G2", "G3"], ["Y2", "Y3"]], "R5", current=0,
                 jump_in=True)
    play(g, "RS")
    events = play(g, "RS")
    assert of(events, "skip") == [{"e": "skip", "seat": 3}]
    assert g.seat == 0


def test_jump_in_on_a_reverse_flips_the_direction_once_per_reverse():
    g = position([["RR", "B1", "B2"], ["Y1", "G1"], ["RR", "G2", "G3"], ["Y2", "Y3"]], "R5", current=0,
                 jump_in=True)
    play(g, "RR")
    assert g.direction == -1 and g.seat == 2 and g.decision == "jump_in"
    play(g, "RR")
    # both Reverses count: clockwise again, play goes on after the jumper
    assert g.direction == 1
    assert (g.seat, g.decision) == (3, "play")
