"""CPU fairness: between its decisions a sandboxed bot is frozen (SIGSTOP), so an opponent's
threads and processes that keep spinning after ``agent`` returns take no CPU from the deciding seat."""

from __future__ import annotations

import re

import pytest

from engine.rules import Rules
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match

#: spins on the CPU in a thread and two processes from its first decision on, forever; each
#: decision reports how far its thread's counter moved since the last reply, and its rate
BURNER = b"""
import os, subprocess, sys, threading, time
count = [0]
last = None
def spin():
    while True:
        count[0] += 1
def agent(observation, configuration):
    global last
    if last is None:
        threading.Thread(target=spin, daemon=True).start()
        for _ in range(2):
            subprocess.Popen([sys.executable, "-c", "while True: pass", *sys.argv])
    start = count[0]
    time.sleep(0.02)
    rate = (count[0] - start) / 0.02
    if last is not None:
        print(f"BETWEEN {start - last} RATE {rate:.0f}", flush=True)
    last = count[0]
    return observation["legal_actions"][0]
"""
#: two processes spinning on the CPU from its first decision on; each decision reports the
#: CPU time they used since its last reply, and the wall time that passed
WATCHER = b"""
import os, subprocess, sys, time
spinners = []
last = None
def cpu():
    total = 0
    for process in spinners:
        with open(f"/proc/{process.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")
def agent(observation, configuration):
    global last
    now = (cpu(), time.monotonic())
    if last is None:
        for _ in range(2):
            spinners.append(subprocess.Popen([sys.executable, "-c", "while True: pass", *sys.argv]))
    else:
        print(f"CPU {now[0] - last[0]:.3f} WALL {now[1] - last[1]:.3f}", flush=True)
    time.sleep(0.02)
    last = (cpu(), time.monotonic())
    return observation["legal_actions"][0]
"""
#: a fixed amount of CPU work per decision (about 50 ms on this machine when it has a core)
TIMER = b"""
import time
def agent(observation, configuration):
    started = time.thread_time()
    while time.thread_time() - started < 0.05:
        pass
    return observation["legal_actions"][0]
"""
PLAIN = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
RULES = Rules.parse(["players=2", "rounds=1", "hand_size=7"])
LIMITS = Limits(time_per_decision=0.5, time_bank=1.0)
BACKENDS = ["process", pytest.param("docker", marks=pytest.mark.docker)]


def _backend(backend, request):
    request.getfixturevalue("docker_client" if backend == "docker" else "bwrap_path")


def play(backend: str, first: bytes, second: bytes, games: int = 1):
    bots = [BotPackage.from_bytes("first.py", first), BotPackage.from_bytes("second.py", second)]
    return play_sandboxed_match(RULES, bots, seed=9, deals=games, backend=backend, limits=LIMITS, allow_process=True)


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bot_does_not_run_between_its_decisions(backend, request):
    _backend(backend, request)
    outcome = play(backend, WATCHER, TIMER)
    samples = [(float(a), float(b)) for a, b in re.findall(r"CPU (\S+) WALL (\S+)", outcome.logs[0])]
    assert len(samples) >= 5, outcome.logs[0]
    # Between its reply and its next request (the timer's 50 ms of CPU and more), unfrozen the
    # two spinners would burn about a core each (50-200% of the wall time on two cores); frozen
    # they burn only the moments between the reply and the supervisor's SIGSTOP, and between its
    # SIGCONT and the next request (clock ticks: 10 ms). Those moments grow with the machine's
    # load: 12.6% was seen on a loaded 2-core machine, so the bound is 25%, far below unfrozen.
    # the gaps held the timer's thinking: most last its 50 ms (a skip or reverse gives the watcher two
    # turns in a row, a gap of about nothing, so the mean of all gaps sat at the bound: 2.27 s for 46)
    walls = sorted(wall for _, wall in samples)
    assert walls[len(walls) // 2] >= 0.04, walls
    assert sum(cpu for cpu, _ in samples) < 0.25 * sum(wall for _, wall in samples), samples


@pytest.mark.slow  # the opponent burns CPU for seconds
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cpu_burning_opponent_does_not_push_a_timer_bot_over_its_limit(backend, request):
    _backend(backend, request)
    quiet = play(backend, PLAIN, TIMER)
    burned = play(backend, BURNER, TIMER)
    for outcome in (quiet, burned):
        timer = outcome.result.players[1]
        assert timer.faults == () and timer.forfeit is None  # never a timeout at 0.5 s a decision
    quiet_max = quiet.result.timings[1]["max_seconds"]
    burned_max = burned.result.timings[1]["max_seconds"]
    # generous: the machine is shared; unfrozen, the burner's three spinners would take most of it
    assert burned_max < max(3 * quiet_max, 0.2), (quiet_max, burned_max)
