"""Review of 83cd222 (p21-rev1): ways a seat, its class or AgentSeat's decide can change what the pure
referee's ``seat.decide(...)`` calls while the core still takes the seat as plain
(``plain_agent`` in engine/_core.c) and calls its agent itself. Each test plays the
same match with the pure engine and with the core and compares the replay, the per-decision times
and the timings, or the exception raised.

Out of scope: an agent that rewrites the engine's own modules (``engine.match.agent_fault``, say,
which the core reads once at import). In-process agents are trusted code (``AgentSeat``); such a
change is not something a seat does, and uploaded bots run in the sandbox, out of the referee's process."""

from __future__ import annotations

import json
from typing import Any

import pytest

import engine.compiled
import engine.match
from engine.match import AgentSeat, SeatFault, play_match
from engine.rules import Rules

pytestmark = pytest.mark.usefixtures("core_built")

_DECIDE = AgentSeat.__dict__["decide"]
_CODE = _DECIDE.__code__


def _last(observation: Any, configuration: Any) -> Any:
    return observation["legal_actions"][-1]


def _last_method(self: Any, observation: Any, configuration: Any) -> Any:
    return observation["legal_actions"][-1]


def _outcome(monkeypatch, engine_name: str, make_seats) -> tuple:
    monkeypatch.setattr(engine.compiled, "COMPILED", engine_name == "core")
    with monkeypatch.context() as m:  # what a seat changes is restored after each match
        m.setattr(AgentSeat, "decide", _DECIDE)
        m.setattr(_DECIDE, "__code__", _CODE)
        m.setattr(AgentSeat, "__getattribute__", object.__getattribute__)
        try:
            result = play_match(Rules(players=2, rounds=1), make_seats(), seed=11, deals=1)
            return json.dumps(result.replay), result.decision_ms, result.timings
        except Exception as exc:  # noqa: BLE001 - compared between the engines
            return ("raised", type(exc).__name__, str(exc))


def _both(monkeypatch, make_seats) -> None:
    assert _outcome(monkeypatch, "core", make_seats) == _outcome(monkeypatch, "pure", make_seats)


def _seats(on_third, setup=None):
    """Two plain seats whose agent plays the first action and calls ``on_third(seats)`` at the third decision."""

    def make():
        count = [0]
        seats: list[AgentSeat] = []

        def agent(observation: Any, configuration: Any) -> Any:
            count[0] += 1
            if count[0] == 3:
                on_third(seats)
            return observation["legal_actions"][0]

        seats.extend(AgentSeat(agent, f"s{i}") for i in range(2))
        if setup:
            setup(seats)
        return seats

    return make


def test_a_class_descriptor_giving_the_original_decide_on_the_class_only(monkeypatch):  # R1
    class Two:
        def __get__(self, inst, owner=None):
            return _DECIDE if inst is None else _last

    def change(seats):
        AgentSeat.decide = Two()

    _both(monkeypatch, _seats(change))


def test_a_getattribute_given_to_agent_seat(monkeypatch):  # R2
    def ga(self, name):
        return _last if name == "decide" else object.__getattribute__(self, name)

    def change(seats):
        AgentSeat.__getattribute__ = ga

    _both(monkeypatch, _seats(change))


def test_the_code_of_agent_seat_decide_replaced(monkeypatch):  # R3
    def change(seats):
        _DECIDE.__code__ = _last_method.__code__

    _both(monkeypatch, _seats(change))


def test_agent_seat_decide_deleted_while_the_seats_have_their_own(monkeypatch):  # R4
    def change(seats):
        for seat in seats:
            seat.decide = _last
        del AgentSeat.decide

    _both(monkeypatch, _seats(change))


class _FlagKey:
    """A key of the seat's dict probed by a lookup of "decide", equal to it while ``on`` is set."""

    def __init__(self, flag: list) -> None:
        self.flag = flag

    def __hash__(self) -> int:
        return hash("decide")

    def __eq__(self, other: object) -> bool:
        return bool(self.flag[0]) and other == "decide"


def test_a_key_of_the_seat_dict_that_becomes_decide_without_a_change_of_the_dict(monkeypatch):  # R5
    flag = [False]

    def setup(seats):
        flag[0] = False
        for seat in seats:
            seat.__dict__[_FlagKey(flag)] = _last

    def change(seats):
        flag[0] = True

    _both(monkeypatch, _seats(change, setup))


def _probe_seats(during_lookup):
    """Seat 0's dict holds a key whose __eq__, once armed, calls ``during_lookup(seats)`` while a lookup
    of "decide" probes it (in the core: plain_agent's PyDict_Contains, after it compared the class)."""
    armed = [False]

    class Key:
        def __hash__(self):
            return hash("decide")

        def __eq__(self, other):
            if armed[0]:
                armed[0] = False
                during_lookup(seats_box[0])
            return False

    seats_box: list = [None]

    def setup(seats):
        armed[0] = False
        seats_box[0] = seats
        seats[0].__dict__[Key()] = 1

    def change(seats):
        armed[0] = True
        seats[0].other = 1  # the seat's dict changed: the core's memo misses, plain_agent runs

    return _seats(change, setup)


def test_a_seat_fault_raised_by_the_lookup_of_decide(monkeypatch):  # R6
    def fault(seats):
        raise SeatFault("exception", "eq")  # the pure referee books it: its lookup is inside its try

    _both(monkeypatch, _probe_seats(fault))


def test_agent_seat_decide_replaced_while_plain_agent_looks_decide_up(monkeypatch):  # R8
    def replace(seats):
        AgentSeat.decide = _last_method
        _ = AgentSeat.decide  # a lookup: the class has a valid version tag again before the memo is kept

    _both(monkeypatch, _probe_seats(replace))


def test_the_seat_moved_to_a_subclass_while_plain_agent_looks_decide_up(monkeypatch):  # R9
    class Sub(AgentSeat):
        decide = _last_method

    def move(seats):
        seats[0].__class__ = Sub
        _ = Sub.decide  # a lookup: Sub has a valid version tag

    _both(monkeypatch, _probe_seats(move))
