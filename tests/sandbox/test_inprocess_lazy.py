"""``InProcessSeat(..., lazy_observation=True)``: trusted callables may take snapshots; uploaded bots never do."""

from __future__ import annotations

import json

import pytest

from engine.bots import REFERENCE_BOTS
from engine.match import play_match
from engine.rules import Rules
from engine.snapshot import Snapshot
from sandbox.backends import process
from sandbox.backends.inprocess import InProcessSeat
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match
from sandbox.seat import SandboxSeat

RULES = Rules.parse(["players=2", "rounds=2", "hand_size=5"])
#: an uploaded bot that refuses anything but plain JSON: a dict of lists and dicts
STRICT = BotPackage.from_bytes(
    "strict.py",
    b"def agent(observation, configuration):\n"
    b"    assert type(observation) is dict, type(observation)\n"
    b"    assert all(type(observation[k]) is list for k in ('hand', 'discard', 'legal_actions'))\n"
    b"    assert all(type(a) is dict for a in observation['legal_actions'])\n"
    b"    return observation['legal_actions'][0]\n",
)


def watching(name: str, seen: list[type]):
    def agent(observation, configuration):
        seen.append(Snapshot if isinstance(observation, Snapshot) else type(observation))  # the engine's own type on the core
        return REFERENCE_BOTS[name](observation, configuration)
    return agent


def test_an_opted_in_seat_gets_snapshots_and_plays_the_same_match():
    seen: list[type] = []
    lazy = [InProcessSeat(watching(n, seen), Limits(), n, lazy_observation=True) for n in ("expert", "greedy")]
    plain = [InProcessSeat(REFERENCE_BOTS[n], Limits(), n) for n in ("expert", "greedy")]
    a = play_match(RULES, lazy, seed=4, deals=2, duplicate=True)
    b = play_match(RULES, plain, seed=4, deals=2, duplicate=True)
    assert set(seen) == {Snapshot} and len(seen) > 20
    assert json.dumps(a.replay) == json.dumps(b.replay) and a.players == b.players
    assert all(not seat.faults for seat in lazy)


def test_a_json_copying_seat_cannot_opt_in_and_package_seats_never_do():
    with pytest.raises(ValueError, match="plain JSON"):
        InProcessSeat(REFERENCE_BOTS["first"], Limits(), "first", copy_json=True, lazy_observation=True)
    with pytest.raises(TypeError, match="lazy_observation"):
        InProcessSeat(REFERENCE_BOTS["first"], Limits(), "first", lazy_observation=1)  # type: ignore[arg-type]
    # an uploaded bot run in-process (arena play) sees what the sandbox shows it
    result = play_sandboxed_match(RULES, [STRICT, "first"], backend="inprocess", seed=2)
    assert all(not p.faults for p in result.result.players), result.logs


def test_a_sandboxed_bot_gets_plain_json_beside_an_opted_in_seat():
    limits = Limits(memory_bytes=300 * 1024 * 1024, processes=20, file_bytes=1024 * 1024)
    sandboxed = SandboxSeat(process.start_seat(STRICT, limits, label="strict"), limits, "strict")
    seen: list[type] = []
    try:
        sandboxed.wait_ready()
        trusted = InProcessSeat(watching("first", seen), limits, "first", lazy_observation=True)
        result = play_match(RULES, [sandboxed, trusted], seed=1, deals=2, duplicate=True)
    finally:
        sandboxed.stop()
    assert set(seen) == {Snapshot}
    assert all(not p.faults for p in result.players), [p.faults for p in result.players]
