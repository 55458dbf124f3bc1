"""The compiled turn loop builds each observation in the objects of the one before when nothing
else can see them (engine/_core.c, "The turn loop's observation, recycled"; docs/engine.md,
"The observation dict"). A seat sees exactly what it saw before: the pure engine's observation,
plain dicts and lists it may keep or change, and nothing it kept is ever written again.

Each test plays the same match with the pure engine and with the core's C loop, the seats'
replies a function of what they were handed, and compares what the seats were handed (deep
copies taken when handed, before a seat changes anything).
"""

from __future__ import annotations

import copy
import json
import random
import sys
from typing import Any

import pytest
from testsupport import stdout_on_the_core

import engine.compiled
from engine.match import AgentSeat, play_match
from engine.rules import Rules

RULE_SETS = [
    Rules(players=2, rounds=2, wd4="free", stacking="stack", seven_zero=True),
    Rules(players=3, rounds=2, jump_in=True, seven_zero=True, draw="until_playable"),
    Rules(players=4, rounds=1, wd4="challenge", uno_penalty=4),
]


#: every test here needs the compiled core (tests/conftest.py: core_built)
pytestmark = pytest.mark.usefixtures("core_built")


def _exact(value: Any) -> str:
    """``value`` with its types (True and 1, a list and a tuple differ) and its keys' order."""
    return repr(value)


class Bot:
    """Plays a reply drawn from what it was handed; records a deep copy of each observation."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.handed: list[dict[str, Any]] = []

    def __call__(self, observation: dict[str, Any], configuration: dict[str, Any]) -> Any:
        assert type(observation) is dict and type(observation["legal_actions"]) is list
        self.handed.append(copy.deepcopy(observation))
        legal = observation["legal_actions"]
        reply = legal[self.rng.randrange(len(legal))]
        self.after(observation, reply)
        return reply

    def after(self, observation: dict[str, Any], reply: dict[str, Any]) -> None:
        """What the bot does with the observation once it has chosen ``reply`` (here: nothing)."""


def _play(monkeypatch, engine_name: str, rules: Rules, make_bot) -> tuple[list[Bot], str]:
    """The match's bots (one per seat) and replay, played by ``engine_name`` ("pure" or "core")."""
    monkeypatch.setattr(engine.compiled, "COMPILED", engine_name == "core")
    bots = [make_bot(i) for i in range(rules.players)]
    seats = [AgentSeat(bot, f"bot{i}") for i, bot in enumerate(bots)]
    result = play_match(rules, seats, seed=7, deals=2)
    return bots, json.dumps(result.replay)


def _both(monkeypatch, rules: Rules, make_bot) -> list[Bot]:
    """Play in both engines; assert each seat was handed the same observations; the core's bots."""
    pure, pure_replay = _play(monkeypatch, "pure", rules, make_bot)
    core, core_replay = _play(monkeypatch, "core", rules, make_bot)
    assert core_replay == pure_replay
    for p, c in zip(pure, core, strict=True):
        assert len(c.handed) == len(p.handed) > 10
        for i, (got, expected) in enumerate(zip(c.handed, p.handed, strict=True)):
            assert list(got) == list(expected), f"decision {i}: keys"
            assert _exact(got) == _exact(expected), f"decision {i}"
    return core


def test_the_loop_recycles_observations_on_the_pythons_whose_layout_it_knows():
    expected = 1 if sys.version_info[:2] in ((3, 11), (3, 12)) else 0
    assert engine.compiled._core.OBSERVATION_RECYCLED == expected


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_a_seat_that_keeps_nothing_is_handed_the_pure_engines_observations(monkeypatch, rules):
    _both(monkeypatch, rules, lambda i: Bot(i))


class Keeper(Bot):
    """Keeps every observation it is handed."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.kept: list[dict[str, Any]] = []

    def after(self, observation, reply):
        self.kept.append(observation)


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_observations_a_seat_keeps_still_hold_what_it_was_handed(monkeypatch, rules):
    for bot in _both(monkeypatch, rules, Keeper):
        assert [_exact(o) for o in bot.kept] == [_exact(o) for o in bot.handed]
        held = [id(x) for o in bot.kept for x in (o, o["hand"], o["discard"], o["legal_actions"], *o["legal_actions"])]
        assert len(held) == len(set(held)), "an object handed out twice"


class PartKeeper(Bot):
    """Keeps one part of each observation (a list or a listed action) and drops the rest."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.kept: list[tuple[Any, str]] = []

    def after(self, observation, reply):
        key = self.rng.choice(["hand", "discard", "scores", "uno", "legal_actions", "action", "reply", None])
        if key == "action":
            part = observation["legal_actions"][self.rng.randrange(len(observation["legal_actions"]))]
        elif key == "reply":
            part = reply
        elif key is not None:
            part = observation[key]
        if key is not None:
            self.kept.append((part, _exact(part)))


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_lists_and_action_dicts_a_seat_keeps_are_never_written_again(monkeypatch, rules):
    for bot in _both(monkeypatch, rules, PartKeeper):
        assert [_exact(part) for part, _ in bot.kept] == [as_handed for _, as_handed in bot.kept]


def _mutate(rng: random.Random, observation: dict[str, Any], reply: dict[str, Any]) -> None:
    """One change of the kinds a bot may make to what it was handed (and then drop)."""
    legal = observation["legal_actions"]
    others = [a for a in legal if a is not reply]
    how = rng.randrange(17)
    if how == 0:
        del observation[rng.choice(list(observation))]
    elif how == 1:
        observation["mine"] = [observation]  # a cycle, for the cyclic GC
    elif how == 2:
        observation["hand"].append("R1")
    elif how == 3:
        observation["discard"].pop()
    elif how == 4:
        observation["scores"][0] = 999
    elif how == 5:
        legal.clear()
    elif how == 6:
        legal.reverse()
    elif how == 7 and others:
        rng.choice(others)["card"] = "XX"
    elif how == 8 and others:
        rng.choice(others)["extra"] = 1
    elif how == 9 and others:
        a = rng.choice(others)
        a.pop("type")
        a["type"] = "draw"  # the same content, changed and restored
    elif how == 10 and others:
        a = rng.choice(others)
        items = list(a.items())
        a.clear()
        a.update((key.upper(), value) for key, value in items)  # as many keys, other ones
    elif how == 11:
        saved = dict(observation)
        observation.clear()
        observation.update(saved)  # the same keys, values and order again
    elif how == 12:
        observation["hand"] = list(observation["hand"])
    elif how == 13:
        observation["seat"] = observation.pop("seat")  # last now
    elif how == 14:
        saved = dict(observation)
        observation.clear()
        observation.update(reversed(saved.items()))  # the same keys, the other way round
    elif how == 15:
        legal.append(legal[0])
        legal.append({"type": "pass"})
    else:
        observation["hand"].sort()
        observation["uno"].extend([True] * 20)


class Mutator(Bot):
    """Changes what it was handed after choosing its reply, one change at a time, then drops it."""

    def after(self, observation, reply):
        _mutate(self.rng, observation, reply)


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_a_seat_that_changes_what_it_was_handed_is_handed_correct_observations_after(monkeypatch, rules):
    _both(monkeypatch, rules, Mutator)


class Mixed(Bot):
    """Now keeps, now changes, now drops; keeps the part it changed or not (checked at the end)."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.kept: list[tuple[Any, str]] = []

    def after(self, observation, reply):
        x = self.rng.random()
        if x < 0.3:
            _mutate(self.rng, observation, reply)
        if 0.2 < x < 0.4:
            self.kept.append((observation, _exact(observation)))
        elif 0.4 < x < 0.5:
            part = observation.get("legal_actions") or [reply]
            self.kept.append((part[-1], _exact(part[-1])))


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_a_seat_that_keeps_and_changes_at_random_is_handed_correct_observations(monkeypatch, rules):
    for bot in _both(monkeypatch, rules, Mixed):
        assert [_exact(part) for part, _ in bot.kept] == [as_handed for _, as_handed in bot.kept]


class LazyBot(Bot):
    """A seat handed snapshots: records the plain dict of each."""

    def __call__(self, observation, configuration):
        plain = observation.to_dict()
        self.handed.append(plain)
        legal = observation["legal_actions"]
        return legal[self.rng.randrange(len(legal))]


def test_observations_and_snapshots_for_seats_of_both_kinds_in_one_match(monkeypatch):
    """Snapshot seats between plain ones: the plain seats' observations are still the pure ones."""
    rules = RULE_SETS[2]

    def match(engine_name: str) -> tuple[list[list[dict]], str]:
        monkeypatch.setattr(engine.compiled, "COMPILED", engine_name == "core")
        bots = [Mixed(0), LazyBot(1), Mutator(2), LazyBot(3)]
        seats = [AgentSeat(bot, f"b{i}", lazy_observation=type(bot) is LazyBot) for i, bot in enumerate(bots)]
        result = play_match(rules, seats, seed=3, deals=2, duplicate=True)
        return [b.handed for b in bots], json.dumps(result.replay)

    pure, core = match("pure"), match("core")
    assert core[1] == pure[1]
    assert [[_exact(o) for o in h] for h in core[0]] == [[_exact(o) for o in h] for h in pure[0]]


FINALIZER_CLEARS_WHAT_IT_WAS_PUT_IN = """
import gc, sys
from engine.match import AgentSeat, play_match
from engine.rules import Rules

class ClearsItsList:
    # on being freed, clears the list it was put in, reached without a reference (gc.get_objects)
    def __init__(self, target):
        self.target = id(target)

    def __del__(self):
        for o in gc.get_objects():
            if id(o) == self.target:
                o.clear()

def agent(observation, configuration):
    legal = observation["legal_actions"]
    reply = legal[0] if legal else {"type": "draw"}
    listed = observation[sys.argv[1]]
    listed.append(ClearsItsList(listed))
    return reply

result = play_match(Rules(players=2), [AgentSeat(agent, "a"), AgentSeat(agent, "b")], seed=1)
print(result.games)
"""


@pytest.mark.parametrize("key", ["hand", "discard", "scores", "hand_sizes", "uno", "legal_actions"])
def test_a_finalizer_run_while_a_list_is_refilled_cannot_break_the_loop(key):
    """A seat's own object put into a list it was handed is freed when the list is refilled; its
    finalizer (Python code that may reach and clear the list) runs only once the observation is
    whole, never under the loop's pointers (it used to crash the process)."""
    assert stdout_on_the_core(FINALIZER_CLEARS_WHAT_IT_WAS_PUT_IN, key).strip() == "1"
