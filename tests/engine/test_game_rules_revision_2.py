"""What RULES.md revision 2 decided: a last 7 or 0, the UNO check of a 7 or 0,
jump-in under stacking, the stalled-game end and sole winners (sections 6 and 7).

The deal bound of section 2 is in test_ruleset.py.
"""

from __future__ import annotations

from uno_scenarios import act, hand, of, play, position

from engine.game import MAX_STALLED_ROUNDS, Game
from engine.match import AgentSeat, play_match
from engine.rules import Rules

SWAP_TO_1 = {"type": "swap", "target": 1}


def _kinds(events):
    return [e["e"] for e in events]


# ------------------------------------------------ a last 7 or 0 goes out at once


def test_a_last_seven_goes_out_at_once_without_a_swap():
    g = position([["R7"], ["Y1", "Y2"], ["G1"]], "R5", current=0, seven_zero=True, rounds=1)
    events = play(g, "R7")
    assert g.over and g.decision is None
    assert not of(events, "swap")
    assert of(events, "round_end")[0]["winner"] == 0
    assert of(events, "round_end")[0]["points"] == [4, 0, 0]  # Y1 + Y2 + G1 were not swapped away


def test_a_last_zero_goes_out_at_once_without_passing_the_hands():
    g = position([["R0"], ["Y1", "Y2"], ["G1"]], "R5", current=0, seven_zero=True, rounds=1)
    events = play(g, "R0")
    assert not of(events, "pass_hands")
    end = of(events, "round_end")[0]
    assert end["winner"] == 0 and end["points"] == [4, 0, 0]


def test_a_last_seven_jumped_in_also_goes_out_at_once():
    g = position([["R7", "B1", "B2"], ["Y1", "G1"], ["R7"]], "R5", current=0, seven_zero=True, jump_in=True,
                 rounds=1)
    play(g, "R7")
    assert (g.seat, g.decision) == (0, "swap_target")
    act(g, {"type": "swap", "target": 1})
    assert (g.seat, g.decision) == (2, "jump_in")
    events = play(g, "R7")
    assert not of(events, "swap") and of(events, "round_end")[0]["winner"] == 2


# ---------------------------------------- the UNO penalty of a 7 or 0 (section 6)


def test_missed_uno_on_a_seven_is_drawn_after_the_swap_into_the_hand_taken():
    g = position([["R7", "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True,
                 draws={0: ["G5", "G6"]})
    events = play(g, "R7")  # no "uno": caught now, pays after the swap
    assert _kinds(events) == ["play", "uno_caught"]
    assert (g.seat, g.decision) == (0, "swap_target")
    assert hand(g, 0) == ["B1"]
    events = act(g, SWAP_TO_1)
    assert _kinds(events)[:2] == ["swap", "draw"]
    assert events[1] == {"e": "draw", "seat": 0, "cards": ["G5", "G6"], "reason": "uno"}
    assert hand(g, 0) == ["Y1", "Y2", "Y3", "G5", "G6"]
    assert hand(g, 1) == ["B1"]  # the one-card hand that arrived by the swap owes nothing
    assert g.seat == 1


def test_missed_uno_on_a_zero_is_drawn_after_the_pass_into_the_hand_received():
    g = position([["R0", "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True,
                 draws={0: ["G5", "G6"]})
    events = play(g, "R0")
    assert _kinds(events)[:4] == ["play", "uno_caught", "pass_hands", "draw"]
    assert events[3] == {"e": "draw", "seat": 0, "cards": ["G5", "G6"], "reason": "uno"}
    # clockwise: seat 0 now holds seat 2's hand plus its penalty, seat 1 the one card
    assert hand(g, 0) == ["G1", "G2", "G5", "G6"]
    assert hand(g, 1) == ["B1"]
    assert hand(g, 2) == ["Y1", "Y2", "Y3"]


def test_declared_uno_on_a_seven_or_zero_costs_nothing():
    for card, then in (("R7", SWAP_TO_1), ("R0", None)):
        g = position([[card, "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True)
        events = play(g, card, uno=True)
        if then is not None:
            events += act(g, then)
        assert not of(events, "uno_caught") and not of(events, "draw")
        assert hand(g, 1) == ["B1"]  # the swap or the pass moved the one card on, nothing added


def test_missed_uno_on_a_seven_whose_player_loses_the_swap_decision_is_drawn_into_its_own_hand():
    g = position([["R7", "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True,
                 draws={0: ["G5", "G6", "G7", "G8"]})
    play(g, "R7")
    start = len(g.events)
    g.fault("timeout", "too slow", strikes=1)  # a strike on swap_target: swaps with nobody
    draws = of(g.events[start:], "draw")
    assert [d["reason"] for d in draws] == ["strike", "uno"]
    assert not of(g.events[start:], "swap")
    assert hand(g, 0) == ["B1", "G5", "G6", "G7", "G8"]
    assert g.seat == 1


def test_uno_penalty_of_other_cards_is_still_drawn_at_once():
    g = position([["R3", "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0, seven_zero=True)
    events = play(g, "R3")
    assert _kinds(events)[:3] == ["play", "uno_caught", "draw"]


def test_uno_penalty_of_a_seven_without_seven_zero_is_drawn_at_once():
    g = position([["R7", "B1"], ["Y1", "Y2", "Y3"], ["G1", "G2"]], "R5", current=0)
    events = play(g, "R7")
    assert _kinds(events)[:3] == ["play", "uno_caught", "draw"]
    assert len(hand(g, 0)) == 3


# ------------------------------------------- jump-in on a Draw Two (section 6)


def _jump_game(stacking, **options):
    return position([["R+2", "B1", "B2"], ["Y1", "G1"], ["R+2", "G2", "G3"]], "R5", current=0, jump_in=True,
                    wd4="free", stacking=stacking, **options)


def test_jump_in_draw_two_under_stack_adds_to_the_pending_penalty():
    g = _jump_game("stack")
    play(g, "R+2")
    assert (g.seat, g.decision) == (2, "jump_in")
    events = play(g, "R+2")
    # +2 on +2 makes 4, for the seat after the jumper; the seat skipped over draws nothing
    assert [(d["seat"], len(d["cards"]), d["reason"]) for d in of(events, "draw")] == [(0, 4, "penalty")]
    assert len(hand(g, 0)) == 6 and len(hand(g, 1)) == 2
    assert g.seat == 1


def test_jump_in_draw_two_under_stack_adds_to_a_stacked_total():
    # seat 0's G+2 hits seat 1, who stacks R+2 (4 pending); seat 3 jumps in with the other R+2: 6
    g = position([["G+2", "B1", "B2"], ["R+2", "Y1"], ["Y2", "Y3"], ["R+2", "G2", "G3"]], "R5", color="G",
                 current=0, jump_in=True, wd4="free", stacking="stack")
    play(g, "G+2")
    assert (g.seat, g.decision) == (1, "stack") and g.observation()["pending_draw"] == 2
    play(g, "R+2")
    assert (g.seat, g.decision) == (3, "jump_in")
    events = play(g, "R+2")
    assert [(d["seat"], len(d["cards"])) for d in of(events, "draw")] == [(0, 6)]


def test_jump_in_draw_two_under_stack_can_be_answered_with_the_total_pending():
    g = position([["R+2", "B1", "B2"], ["Y1", "G1"], ["R+2", "G2", "G3"], ["B+2", "Y5"]], "R5", current=0,
                 jump_in=True, wd4="free", stacking="stack")
    play(g, "R+2")
    assert g.seat == 2
    play(g, "R+2")
    assert (g.seat, g.decision) == (3, "stack")
    assert g.observation()["pending_draw"] == 4


def test_jump_in_draw_two_under_deflect_or_off_replaces_the_pending_penalty():
    for stacking in ("deflect", "off"):
        options = {} if stacking == "off" else {"stacking": stacking, "wd4": "free"}
        g = position([["R+2", "B1", "B2"], ["Y1", "G1"], ["R+2", "G2", "G3"]], "R5", current=0, jump_in=True,
                     **options)
        play(g, "R+2")
        events = play(g, "R+2")
        assert [(d["seat"], len(d["cards"])) for d in of(events, "draw")] == [(0, 2)], stacking


def test_jump_in_with_a_last_draw_two_under_stack_makes_the_next_seat_draw_the_sum():
    g = position([["R+2", "B1", "B2"], ["Y1", "G1"], ["R+2"]], "R5", current=0, jump_in=True, wd4="free",
                 stacking="stack", rounds=1)
    play(g, "R+2")
    events = play(g, "R+2")
    assert [(d["seat"], len(d["cards"])) for d in of(events, "draw")] == [(0, 4)]
    assert of(events, "round_end")[0]["winner"] == 2


# ------------------------------------------- stalled games and sole winners (section 7)


def _draw_only(g: Game) -> None:
    while not g.over:
        kinds = {a["type"] for a in g.legal_actions()}
        g.apply({"type": "draw"} if "draw" in kinds else {"type": "pass"} if "pass" in kinds
                else g.legal_actions()[0])


def test_a_stalled_game_ends_ranked_by_the_totals_as_they_stand():
    for scoring, scores, ranks in (("winner", [30, 0, 30], [1, 3, 1]), ("penalty", [30, 0, 30], [2, 1, 2])):
        g = position([["R1", "B1"], ["Y1", "G1"], ["Y2", "G2"]], "R5", current=0, scores=scores, max_turns=3,
                     scoring=scoring)
        _draw_only(g)
        ends = of(g.events, "round_end")
        assert len(ends) == MAX_STALLED_ROUNDS and all(e["reason"] == "max_turns" for e in ends)
        assert g.scores == scores
        assert of(g.events, "game_end")[0] == {"e": "game_end", "scores": scores, "ranks": ranks}


def _drawer(observation, configuration):
    legal = observation["legal_actions"]
    return next((a for a in legal if a["type"] in ("draw", "pass")), legal[0])


def test_a_game_tied_for_first_is_won_by_nobody():
    # every round stalls: 0 points each, everybody ranks first, nobody wins the game
    result = play_match(Rules(players=3, max_turns=3), [AgentSeat(_drawer, "d")] * 3, seed=4, deals=2)
    for record in result.replay["games"]:
        assert record["ranks"] == [1, 1, 1]
    assert [p.wins for p in result.players] == [0, 0, 0]
    assert result.replay["result"]["wins"] == [0, 0, 0]
    assert [p.rank for p in result.players] == [1, 1, 1]


def test_a_sole_first_place_wins_the_game_for_the_bot_at_that_seat():
    def first(observation, configuration):
        return observation["legal_actions"][0]

    result = play_match(Rules(players=3, rounds=1), [AgentSeat(first, f"f{i}") for i in range(3)], seed=4, deals=6,
                        duplicate=True)
    expected = [0, 0, 0]
    sole = 0
    for record in result.replay["games"]:
        if record["ranks"].count(1) == 1:
            sole += 1
            expected[record["seats"][record["ranks"].index(1)]] += 1
    assert sole > 0
    assert [p.wins for p in result.players] == expected
