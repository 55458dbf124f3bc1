"""The compiled turn loop's two shortcuts (engine/_core.c) give what the pure referee gives:

- a reply that is one of the listed action dicts as handed out is taken as that action without
  reading it (``recycled_action``); a listed dict the seat changed before returning it is read;
- a seat's ``agent`` and ``last_decision_seconds`` are read again only when the seat, its class
  or its instance dict changed (``memo_attr``): a seat whose agent swaps it for another, sets,
  changes or deletes its own seconds, or whose class's seconds change, is read afresh; a seat
  given a ``decide`` of its own, or whose class's ``decide`` changes, in the middle of a game is
  asked through that ``decide`` from its next decision on.

Each test plays the same match with the pure engine and with the core, and compares the replay,
the per-decision times and the timings.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

import engine.compiled
from engine.match import AgentSeat, play_match
from engine.rules import Rules

#: every test here needs the compiled core (tests/conftest.py: core_built)
pytestmark = pytest.mark.usefixtures("core_built")

RULE_SETS = [
    Rules(players=2, rounds=2, wd4="free", stacking="stack", seven_zero=True),
    Rules(players=4, rounds=1, wd4="challenge", uno_penalty=4, jump_in=True),
]


def _match(monkeypatch, engine_name: str, rules: Rules, make_seats) -> tuple[str, Any, Any]:
    monkeypatch.setattr(engine.compiled, "COMPILED", engine_name == "core")
    with monkeypatch.context() as m:  # a class attribute a seat may change is restored after each match
        m.setattr(AgentSeat, "last_decision_seconds", None)
        m.setattr(AgentSeat, "decide", AgentSeat.decide)
        result = play_match(rules, make_seats(), seed=11, deals=2, duplicate=True)
    return json.dumps(result.replay), result.decision_ms, result.timings


def _both(monkeypatch, rules: Rules, make_seats) -> None:
    pure = _match(monkeypatch, "pure", rules, make_seats)
    core = _match(monkeypatch, "core", rules, make_seats)
    assert core[0] == pure[0]
    assert core[1:] == pure[1:]


def _changing_seats(rules: Rules) -> list[AgentSeat]:
    """Seats whose agents swap their seat's agent and change the seconds it reports, at random."""
    rng = random.Random(5)
    seats: list[AgentSeat] = []

    def first(observation: dict, configuration: dict) -> Any:
        act(rng.randrange(len(seats)))
        return observation["legal_actions"][0]

    def last(observation: dict, configuration: dict) -> Any:
        act(rng.randrange(len(seats)))
        return observation["legal_actions"][-1]

    def own_decide(observation: dict, configuration: dict) -> Any:
        legal = observation["legal_actions"]
        return legal[len(legal) // 2]

    plain_decide = AgentSeat.decide

    def class_decide(self: AgentSeat, observation: dict, configuration: dict) -> Any:
        return plain_decide(self, {**observation, "legal_actions": observation["legal_actions"][1:] or observation["legal_actions"]}, configuration)

    def act(i: int) -> None:
        seat, x = seats[i], rng.random()
        if x < 0.15:
            seat.agent = last if seat.agent is first else first
        elif x < 0.25:
            seat.last_decision_seconds = rng.choice([0.25, 0.5, None, 1])
        elif x < 0.3 and "last_decision_seconds" in vars(seat):
            del seat.last_decision_seconds
        elif x < 0.35:
            AgentSeat.last_decision_seconds = rng.choice([None, 0.125])  # restored by _match
        elif x < 0.4:
            seat.other = x  # an unrelated change of the instance dict
        elif x < 0.45:
            seat.decide = own_decide  # the seat's own decide: asked through it from now on
        elif x < 0.5 and "decide" in vars(seat):
            del seat.decide
        elif x < 0.55:
            AgentSeat.decide = rng.choice([plain_decide, class_decide])  # restored by _match

    for i in range(rules.players):
        seats.append(AgentSeat(first if i % 2 else last, f"s{i}"))
    return seats


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_seats_whose_agent_and_seconds_change_mid_game_are_read_afresh(monkeypatch, rules):
    _both(monkeypatch, rules, lambda: _changing_seats(rules))


def _changed_replies(rules: Rules) -> list[AgentSeat]:
    """Agents that return a listed dict, now as handed, now changed into another action or a wrong one."""
    rng = random.Random(9)

    def agent(observation: dict, configuration: dict) -> Any:
        legal = observation["legal_actions"]
        reply = legal[rng.randrange(len(legal))]
        x = rng.random()
        if x < 0.2:
            other = legal[rng.randrange(len(legal))]
            reply.clear()
            reply.update(other)  # another listed action, in the dict handed for this one
        elif x < 0.25:
            reply["type"] = "pass"  # now a pass, legal or not
        elif x < 0.3 and reply.get("type") == "play":
            reply["uno"] = not reply.get("uno", False)
        elif x < 0.35:
            reply = dict(reply)  # an equal copy
        return reply

    return [AgentSeat(agent, f"s{i}") for i in range(rules.players)]


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_listed_dicts_changed_before_they_are_returned_are_read(monkeypatch, rules):
    _both(monkeypatch, rules, lambda: _changed_replies(rules))


def test_an_agent_its_seat_dropped_is_freed_as_without_the_memo(monkeypatch):
    """The memo holds no reference: an agent that hands its seat over to another is freed once its
    call returns, before the next decision (as with getattr each time)."""
    import weakref

    monkeypatch.setattr(engine.compiled, "COMPILED", True)
    seats: list[AgentSeat] = []
    gone: list[weakref.ref] = []
    seen: list[bool] = []

    class Agent:
        def __call__(self, observation: dict, configuration: dict) -> Any:
            seen.append(all(ref() is None for ref in gone))
            seat = seats[observation["seat"]]
            if seat.agent is self and len(seen) % 3 == 0:
                gone.append(weakref.ref(self))
                seat.agent = Agent()
            return observation["legal_actions"][0]

    seats.extend(AgentSeat(Agent(), f"s{i}") for i in range(2))
    play_match(Rules(players=2), seats, seed=4, deals=1)
    assert len(gone) > 3 and all(seen)


class _Seconds(float):
    pass


#: the replaced values, kept alive: a stale memo then shows as a wrong time, not a crash
_KEPT: list = []


def _seats_changing_during_lookup(kept: list) -> list[AgentSeat]:
    class Seat(AgentSeat):
        last_decision_seconds = _Seconds(0.25)

    kept.append(Seat.__dict__["last_decision_seconds"])  # alive: a stale memo shows as a wrong time, no crash

    class Probe:  # probed (its __eq__ called) when getattr looks "last_decision_seconds" up in the seat's dict
        calls = 0

        def __hash__(self) -> int:
            return hash("last_decision_seconds")

        def __eq__(self, other: object) -> bool:
            Probe.calls += 1
            if Probe.calls == 1:
                kept.append(Seat.__dict__["last_decision_seconds"])
                Seat.last_decision_seconds = _Seconds(0.5)  # after getattr took the class's value
            return False

    def agent(observation: dict, configuration: dict) -> Any:
        return observation["legal_actions"][0]

    seats = [Seat(agent, f"s{i}") for i in range(2)]
    seats[0].__dict__[Probe()] = 1
    return seats


def _match_changing_during_lookup(monkeypatch, engine_name: str) -> tuple[str, Any, Any]:
    monkeypatch.setattr(engine.compiled, "COMPILED", engine_name == "core")
    result = play_match(Rules(players=2, rounds=2), _seats_changing_during_lookup(_KEPT), seed=11, deals=1)
    return json.dumps(result.replay), result.decision_ms, result.timings


def test_a_class_attribute_replaced_during_the_lookup_is_not_kept(monkeypatch):
    # found by review: the memo kept the value read before a key's __eq__ replaced it (a freed object, a crash)
    assert _match_changing_during_lookup(monkeypatch, "core") == _match_changing_during_lookup(monkeypatch, "pure")


def _seats_losing_their_agent(rules: Rules) -> list[AgentSeat]:
    """At the fifth decision an agent deletes its seat's agent: that seat's later decisions are faults."""
    seats: list[AgentSeat] = []
    decisions = [0]

    def agent(observation: dict, configuration: dict) -> Any:
        decisions[0] += 1
        if decisions[0] == 5:
            del seats[observation["seat"]].agent
        return observation["legal_actions"][0]

    seats.extend(AgentSeat(agent, f"s{i}") for i in range(rules.players))
    return seats


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.players}p")
def test_a_seat_whose_agent_is_gone_is_faulted_as_the_pure_referee_faults_it(monkeypatch, rules):
    # found by review: the core raised the AttributeError out of play_match; AgentSeat.decide books it
    _both(monkeypatch, rules, lambda: _seats_losing_their_agent(rules))
