"""Rule options: defaults, parsing, validation (RULES.md, every option)."""

from __future__ import annotations

import json

import pytest

from engine.rules import MAX_DEAL, OPTIONS, Rules, RulesError

DEFAULTS = {
    "players": 4,
    "hand_size": 7,
    "first_card": "apply",
    "draw": "one",
    "draw_limit": 10,
    "two_player_reverse_skips": True,
    "wd4": "challenge",
    "stacking": "off",
    "uno_penalty": 2,
    "seven_zero": False,
    "jump_in": False,
    "scoring": "winner",
    "target": 500,
    "rounds": None,
    "max_turns": 2000,
    "max_strikes": 3,
}


def test_defaults_are_the_official_rules():
    assert Rules().to_dict() == DEFAULTS


def test_to_dict_lists_every_option_and_is_json():
    d = Rules().to_dict()
    assert tuple(d) == OPTIONS
    assert json.loads(json.dumps(d)) == d


def test_target_defaults_to_200_for_penalty_scoring():
    assert Rules(scoring="penalty").target == 200
    assert Rules.parse(["scoring=penalty"]).target == 200
    assert Rules.parse(["scoring=penalty", "target=300"]).target == 300


@pytest.mark.parametrize(
    "items",
    [
        [],
        ["players=2", "two_player_reverse_skips=off"],
        ["wd4=free", "stacking=stack", "jump_in=on", "seven_zero=1"],
        ["wd4=enforced", "stacking=deflect", "draw=until_playable", "draw_limit=3"],
        ["scoring=penalty", "rounds=5", "max_turns=100", "max_strikes=1", "uno_penalty=0"],
        ["players=10", "hand_size=7", "first_card=number_only"],
        ["players=10", "hand_size=10"],
    ],
)
def test_from_dict_of_to_dict_gives_the_same_rules(items):
    rules = Rules.parse(items)
    again = Rules.from_dict(json.loads(json.dumps(rules.to_dict())))
    assert again == rules
    assert again.to_dict() == rules.to_dict()


@pytest.mark.parametrize("text,value", [("true", True), ("1", True), ("on", True), ("false", False),
                                        ("0", False), ("off", False), ("TRUE", True)])
def test_parse_reads_booleans_in_every_spelling(text, value):
    assert Rules.parse([f"jump_in={text}"]).jump_in is value


def test_parse_reads_integers_and_none_for_rounds():
    rules = Rules.parse(["hand_size=5", "rounds=3", "max_turns=50"])
    assert (rules.hand_size, rules.rounds, rules.max_turns) == (5, 3, 50)
    assert Rules.parse(["rounds=none"]).rounds is None


@pytest.mark.parametrize(
    "items,option,allowed",
    [
        (["wd4=sometimes"], "wd4", "challenge, enforced, free"),
        (["stacking=yes", "wd4=free"], "stacking", "off, deflect, stack"),
        (["first_card=any"], "first_card", "apply, number_only"),
        (["draw=two"], "draw", "one, until_playable"),
        (["scoring=elo"], "scoring", "winner, penalty"),
        (["jump_in=maybe"], "jump_in", "true, false"),
        (["players=11"], "players", "2..10"),
        (["players=1"], "players", "2..10"),
        (["hand_size=0"], "hand_size", "1..20"),
        (["hand_size=seven"], "hand_size", "1..20"),
        (["draw_limit=0"], "draw_limit", "1..108"),
        (["max_strikes=0"], "max_strikes", "1..1000"),
        (["rounds=0"], "rounds", "1..10000"),
        (["target=-5"], "target", "1..1000000"),
        (["players=1_0"], "players", "2..10"),
        (["players=\u0663"], "players", "2..10"),  # an Arabic-Indic 3
        (["hand_size=7.0"], "hand_size", "1..20"),
    ],
)
def test_bad_value_names_the_option_and_what_is_allowed(items, option, allowed):
    with pytest.raises(RulesError) as info:
        Rules.parse(items)
    assert info.value.option == option
    assert allowed in str(info.value)
    assert items[0].split("=", 1)[1] in str(info.value)


def test_unknown_option_is_an_error_naming_it():
    with pytest.raises(RulesError, match="'colour_blind'") as info:
        Rules.parse(["colour_blind=true"])
    assert info.value.option == "colour_blind"
    with pytest.raises(RulesError, match="unknown option"):
        Rules.from_dict({"speed": 3})


def test_an_option_given_twice_is_an_error_naming_both_values():
    with pytest.raises(RulesError, match="given twice") as info:
        Rules.parse(["players=2", "players=3"])
    assert info.value.option == "players" and "'2'" in str(info.value) and "'3'" in str(info.value)
    # even when the last value alone would be valid
    with pytest.raises(RulesError, match="given twice"):
        Rules.parse(["wd4=free", "stacking=stack", "wd4=challenge", "wd4=free"])


@pytest.mark.parametrize(
    ("items", "option"),
    [
        (["rounds=5", "target=100"], "target"),
        (["target=300", "rounds=2", "scoring=penalty"], "target"),
        (["draw_limit=3"], "draw_limit"),
        (["draw=one", "draw_limit=10"], "draw_limit"),
    ],
)
def test_an_option_typed_that_would_have_no_effect_is_an_error(items, option):
    with pytest.raises(RulesError, match="has no effect") as info:
        Rules.parse(items)
    assert info.value.option == option


def test_options_that_take_effect_together_are_accepted():
    assert Rules.parse(["draw=until_playable", "draw_limit=3"]).draw_limit == 3
    assert Rules.parse(["rounds=none", "target=100"]).target == 100
    assert Rules.parse(["rounds=3"]).rounds == 3
    # stored rule sets (every option, defaults included) still load as they are
    assert Rules.from_dict(Rules.parse(["rounds=3"]).to_dict()).rounds == 3


def test_signed_integers_are_read():
    assert Rules.parse(["hand_size=+5"]).hand_size == 5


def test_item_without_equals_sign_is_an_error():
    with pytest.raises(RulesError, match="key=value"):
        Rules.parse(["wd4"])


@pytest.mark.parametrize("stacking", ["deflect", "stack"])
def test_stacking_with_wd4_challenge_is_a_configuration_error(stacking):
    with pytest.raises(RulesError, match="wd4=enforced or wd4=free") as info:
        Rules.parse([f"stacking={stacking}"])
    assert info.value.option == "stacking"
    assert Rules.parse([f"stacking={stacking}", "wd4=enforced"]).stacking == stacking


def test_deal_bound_is_103_cards_with_first_card_apply():
    # RULES.md section 2: a starting card must be left even if all 4 Wild Draw Fours stay in the deck
    assert MAX_DEAL["apply"] == 103
    assert Rules(players=10, hand_size=10).hand_size == 10
    assert Rules(players=5, hand_size=20).hand_size == 20
    with pytest.raises(RulesError, match="too large a deal: at most 103 cards with first_card=apply") as info:
        Rules(players=10, hand_size=11)
    assert info.value.option == "hand_size"
    assert "10 players x 11 cards = 110" in str(info.value)
    assert "at most 10 cards each" in str(info.value)


def test_deal_bound_is_75_cards_with_first_card_number_only():
    # 108 cards hold 76 numbers: 75 dealt leave one even if every non-number card stays in the deck
    assert MAX_DEAL["number_only"] == 75
    assert Rules(players=5, hand_size=15, first_card="number_only").hand_size == 15
    for players, hand_size in ((4, 19), (10, 8), (8, 10)):
        with pytest.raises(RulesError, match="at most 75 cards with first_card=number_only") as info:
            Rules(players=players, hand_size=hand_size, first_card="number_only")
        assert info.value.option == "hand_size"
    # the same deal is fine under apply: the bound follows first_card, never a silent switch
    assert Rules(players=10, hand_size=8).first_card == "apply"
    with pytest.raises(RulesError, match="at most 75"):
        Rules.parse(["players=10", "hand_size=8", "first_card=number_only"])
    with pytest.raises(RulesError, match="at most 75"):
        Rules.from_dict({**Rules(players=10, hand_size=8).to_dict(), "first_card": "number_only"})


def test_deals_at_the_bound_start_on_a_fit_card():
    from engine.game import Game

    for rules in (Rules(players=5, hand_size=15, first_card="number_only"), Rules(players=5, hand_size=20)):
        for seed in range(40):
            start = Game(rules, seed).events[0]
            assert start["e"] == "round_start" and start["draw_pile"] == 108 - rules.players * rules.hand_size - 1
            if rules.first_card == "number_only":
                assert start["top"][1:].isdigit()
            else:
                assert start["top"] != "W+4"


def test_a_set_up_position_with_no_fit_starting_card_is_refused():
    from uno_scenarios import position

    # all 76 number cards in the hands: the draw pile holds only cards that may not start
    hands = [["R0", "Y0", "G0", "B0"] + [f"{c}{r}" for c in "RYGB" for r in "123456789" for _ in (0, 1)][:70],
             [f"{c}{r}" for c in "RYGB" for r in "123456789" for _ in (0, 1)][70:]]
    with pytest.raises(ValueError, match="no card left that may start the pile"):
        position(hands, "RS", dealer=1, first_card_effect=True, first_card="number_only", hand_size=1)



def test_booleans_are_not_accepted_as_integers_and_vice_versa():
    with pytest.raises(RulesError, match="players"):
        Rules(players=True)
    with pytest.raises(RulesError, match="jump_in"):
        Rules(jump_in=1)
    with pytest.raises(RulesError, match="rules"):
        Rules.from_dict(["players", 2])


def test_rules_are_immutable_and_hashable():
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.players = 3
    assert hash(rules) == hash(Rules.from_dict(rules.to_dict()))
