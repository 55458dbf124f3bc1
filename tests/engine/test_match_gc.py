"""play_match pauses the cyclic garbage collector while it records, and always restores it."""

from __future__ import annotations

import gc

import pytest

from engine.faults import InfrastructureError
from engine.match import AgentSeat, play_match
from engine.rules import Rules

RULES = Rules(players=2, rounds=1)


def first(observation, configuration):
    return observation["legal_actions"][0]


def test_collector_is_paused_during_a_match_and_enabled_again_after():
    seen = []

    def watching(observation, configuration):
        seen.append(gc.isenabled())
        return observation["legal_actions"][0]

    assert gc.isenabled()
    play_match(RULES, [AgentSeat(watching), AgentSeat(first)], seed=1)
    assert seen and not any(seen)
    assert gc.isenabled()


def test_collector_left_disabled_by_the_caller_stays_disabled():
    gc.disable()
    try:
        play_match(RULES, [AgentSeat(first), AgentSeat(first)], seed=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_is_restored_when_a_seat_raises_an_infrastructure_error():
    class LostSeat:
        name = "lost"

        def decide(self, observation, configuration):
            raise InfrastructureError("docker went away")

    with pytest.raises(InfrastructureError):
        play_match(RULES, [AgentSeat(first), LostSeat()], seed=1)
    assert gc.isenabled()


def test_a_match_inside_a_match_keeps_the_collector_paused_until_the_outer_one_ends():
    inner_after = []

    def nesting(observation, configuration):
        if not inner_after:
            play_match(RULES, [AgentSeat(first), AgentSeat(first)], seed=2)
            inner_after.append(gc.isenabled())
        return observation["legal_actions"][0]

    play_match(RULES, [AgentSeat(nesting), AgentSeat(first)], seed=1)
    assert inner_after == [False]
    assert gc.isenabled()


def _pauses():
    import engine.compiled
    from engine.match import _CyclicGcPaused

    pauses = [pytest.param(_CyclicGcPaused(), id="python")]
    if engine.compiled.GC_PAUSE is not None:
        pauses.append(pytest.param(type(engine.compiled.GC_PAUSE)(), id="core"))
    return pauses


@pytest.mark.parametrize("pause", _pauses())
def test_each_pause_restores_the_collector_as_the_first_user_found_it(pause):
    """The pause play_match takes (``engine.match._CyclicGcPaused``, or its C twin when the core
    is built): nested, only the outermost exit restores; a collector found disabled stays so."""
    assert gc.isenabled()
    with pause:
        assert not gc.isenabled()
        with pause:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with pause:
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(KeyError), pause:
        raise KeyError("a match that failed")
    assert gc.isenabled()
