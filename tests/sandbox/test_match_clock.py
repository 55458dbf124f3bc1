"""The match clock (Limits.time_per_match): every decision's time counts, across all games of a match."""

from __future__ import annotations

import pytest

from engine.faults import SeatFault
from engine.rules import Rules
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match

#: sleeps 0.3 s in each of its first ``SLOW`` decisions of a game (module state lives for one game)
SLOW_BOT = """
import time
calls = 0
def agent(observation, configuration):
    global calls
    calls += 1
    if calls <= SLOW:
        time.sleep(0.3)
    return observation["legal_actions"][0]
"""
PLAIN = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
RULES = Rules.parse(["players=2", "rounds=1", "hand_size=7"])
LIMITS = Limits(time_per_decision=1.0, time_bank=10.0, time_per_match=2.0)
BACKENDS = ["inprocess", "process", pytest.param("docker", marks=pytest.mark.docker)]


def play(backend: str, slow: int, deals: int, request):
    if backend != "inprocess":
        request.getfixturevalue("docker_client" if backend == "docker" else "bwrap_path")
    bot = BotPackage.from_bytes("slow.py", SLOW_BOT.replace("SLOW", str(slow)).encode())
    plain = BotPackage.from_bytes("plain.py", PLAIN)
    return play_sandboxed_match(RULES, [bot, plain], seed=5, deals=deals, backend=backend, limits=LIMITS, allow_process=True)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bot_that_thinks_0_3_s_a_decision_forfeits_on_a_2_s_match_clock(backend, request):
    outcome = play(backend, slow=1000, deals=3, request=request)
    slow, plain = outcome.result.players
    assert str(slow.forfeit) == "match_time: out of match time: used up its 2 s of thinking for the match"
    assert [f.kind for f in slow.faults] == ["match_time"]
    assert plain.forfeit is None and outcome.result.games == 3  # the match completes
    # it thought for its 2 s, no more: the last decision was cut at the clock, not at 1 s + bank
    assert 1.9 <= outcome.result.timings[0]["total_seconds"] <= 2.6


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_match_clock_runs_across_games_not_per_game(backend, request):
    # 0.9 s of thinking per game: never 2 s in one game, but 2 s by the third
    outcome = play(backend, slow=3, deals=4, request=request)
    slow = outcome.result.players[0]
    assert slow.forfeit is not None and str(slow.forfeit).startswith("match_time: out of match time")
    assert slow.faults[0].game == 2  # the third game
    assert not any(f.kind == "timeout" for f in slow.faults)


def test_match_time_is_a_forfeiting_fault_kind():
    assert SeatFault("match_time", "out of match time: x").forfeits
