"""Reference bots: always a legal action, in every decision kind and rule set."""

from __future__ import annotations

import ast
import copy
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from uno_scenarios import rule_sets

import engine.bots
from engine.bots import REFERENCE_BOTS, UnknownBotError, get
from engine.game import Game
from engine.match import AgentSeat, play_match
from engine.rules import Rules

DECISIONS = {"play", "play_drawn", "choose_color", "challenge", "stack", "jump_in", "swap_target"}


class CheckingSeat:
    """Asks every reference bot about each observation, then plays as ``bot``."""

    def __init__(self, bot: str, seen: set, problems: list):
        self.bot = bot
        self.seen = seen
        self.problems = problems

    def decide(self, observation: dict, configuration: dict) -> dict:
        self.seen.add(observation["decision"])
        frozen = json.dumps(observation, sort_keys=True)
        for name, agent in REFERENCE_BOTS.items():
            action = agent(copy.deepcopy(observation), configuration)
            if action not in observation["legal_actions"]:
                self.problems.append((name, observation["decision"], action, observation["legal_actions"]))
            # deterministic: the same observation gives the same action
            if agent(copy.deepcopy(observation), configuration) != action:
                self.problems.append((name, "not deterministic", action, None))
        action = REFERENCE_BOTS[self.bot](observation, configuration)
        if json.dumps(observation, sort_keys=True) != frozen:
            self.problems.append((self.bot, "mutated the observation", action, None))
        return action


def play_checked(rules: Rules, seed: int, seen: set, problems: list) -> None:
    bots = list(REFERENCE_BOTS)
    seats = [CheckingSeat(bots[i % len(bots)], seen, problems) for i in range(rules.players)]
    result = play_match(rules, seats, seed=seed)
    assert all(p.forfeit is None and p.strikes == 0 for p in result.players), result.players


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(max_hand_size=10, rounds=st.just(1), max_turns=st.just(300)), seed=st.integers(0, 2**31))
def test_every_bot_returns_a_listed_action_under_any_rules(rules, seed):
    problems: list = []
    play_checked(rules, seed, set(), problems)
    assert problems == []


@pytest.mark.slow
def test_fixed_house_rule_games_reach_every_decision_kind():
    # Guards the property test above: these rule sets do offer every decision kind.
    seen: set = set()
    problems: list = []
    house = [
        Rules(players=4, seven_zero=True, jump_in=True, rounds=1),
        Rules(players=3, wd4="free", stacking="stack", rounds=1),
        Rules(players=2, wd4="enforced", stacking="deflect", draw="until_playable", rounds=1),
    ]
    for rules in house:
        for seed in range(12):
            play_checked(rules, seed, seen, problems)
    # choose_color comes only from a starting Wild (4 cards in 108): look for one
    for seed in range(300):
        if "choose_color" in seen:
            break
        play_checked(Rules(players=5, rounds=1), seed, seen, problems)
    assert problems == []
    assert seen == DECISIONS


def test_registry_lists_bots_weakest_first():
    assert list(REFERENCE_BOTS) == ["random", "first", "greedy", "expert"]
    assert get("expert") is REFERENCE_BOTS["expert"]


def test_unknown_bot_error_lists_the_names():
    with pytest.raises(UnknownBotError) as caught:
        get("alphazero")
    assert str(caught.value) == "unknown reference bot: 'alphazero' (known: random, first, greedy, expert)"


def test_random_bot_is_uniform_over_many_situations():
    agent = get("random")
    counts = [0, 0, 0, 0]
    legal = [{"type": "play", "card": c} for c in ("R1", "R2", "G1")] + [{"type": "draw"}]
    for pile in range(4000):
        observation = {
            "seat": pile % 3, "round": 1 + pile % 5, "decision": "play", "draw_pile": pile,
            "discard": ["R1"] * (1 + pile % 7), "top_card": "R1", "color": "R",
            "hand_sizes": [3, 7, pile % 11], "hand": ["R1", "R2", "G1"], "scores": [0, 0, 0],
            "dealer": 0, "legal_actions": legal,
        }
        counts[legal.index(agent(observation, {}))] += 1
    # chi-square with 3 degrees of freedom; 16.27 is the 0.001 critical value
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts)
    assert chi2 < 16.27, counts


def test_random_bot_replays_identically():
    rules = Rules(players=3, rounds=2)
    seats = [AgentSeat(get("random"), "random") for _ in range(3)]
    a = play_match(rules, seats, seed=9).replay
    b = play_match(rules, seats, seed=9).replay
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_bots_import_only_the_standard_library_engine_cards_and_each_other():
    # The demo uploads greedy/expert as a zip of engine/cards.py and engine/bots/*.py.
    allowed_first_party = {"engine.cards", "engine.bots"}
    for path in Path(engine.bots.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top == "engine":
                    assert name in allowed_first_party or name.startswith("engine.bots."), (path.name, name)
                else:
                    assert top in sys.stdlib_module_names or top == "__future__", (path.name, name)


def _expert_two_seat_choice(discard_below: list[str]) -> str:
    """expert's card at two seats holding R7 R8 B3 on a red 3, the opponent holding 5 cards."""
    game = Game.setup(Rules(players=2), [["R7", "R8", "B3"], ["G1", "G2", "Y4", "Y5", "G6"]], "R3", current=0)
    observation = game.observation()
    observation["discard"] = [*discard_below, "R3"]
    observation["draw_pile"] -= len(discard_below)
    return get("expert")(observation, {"rules": Rules(players=2).to_dict()})["card"]


def test_expert_at_two_seats_plays_the_card_the_opponent_is_least_likely_to_answer():
    # Nothing seen but the red 3: staying in red (two reds held) is the colour-control play.
    assert _expert_two_seat_choice([]) in ("R7", "R8")
    # Every other blue card is on the discard pile: the opponent can hardly follow a blue 3.
    blues = ["B0", *(f"B{r}" for r in (1, 2, 4, 5, 6, 7, 8, 9, "S", "R", "+2") for _ in range(2))]
    assert _expert_two_seat_choice(blues) == "B3"
