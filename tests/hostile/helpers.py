"""Play a hostile bot against a plain one and check that nothing of the match is left."""

from __future__ import annotations

import glob
import os
import tempfile
import textwrap
import time
import uuid
from dataclasses import dataclass

from engine.rules import Rules
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match
from sandbox.seat import SEAT_DIR_PREFIX

#: small limits keep the suite short: 0.5 s per decision, 1 s of bank
HOSTILE_LIMITS = Limits(time_per_decision=0.5, time_bank=1.0, start_seconds=10.0)
#: the bound a hostile match must finish within, start and teardown included
MATCH_BOUND_SECONDS = 30.0
OPPONENT_MARKER = "opponent-code-marker-5b1e0c"
OPPONENT_SOURCE = (
    f"# {OPPONENT_MARKER}\n"
    "def agent(observation, configuration):\n"
    "    return observation['legal_actions'][0]\n"
).encode()


@dataclass
class HostileOutcome:
    outcome: object
    match_id: str
    seconds: float

    @property
    def hostile(self):
        return self.outcome.result.players[0]

    @property
    def opponent(self):
        return self.outcome.result.players[1]

    @property
    def log(self) -> str:
        return self.outcome.logs[0]


def leftover_processes(match_id: str) -> list[str]:
    """Command lines of live processes that mention ``match_id`` (every sandbox process does)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if match_id in cmdline and state != b"Z":
            found.append(f"{entry}: {cmdline[:200]}")
    return found


def assert_nothing_left(match_id: str, backend: str) -> None:
    """No process, container or seat directory of the match survives it.

    Warm seats carry the pool's names (``warm-<pid>-<n>``), not the match's:
    after the pool is closed, nothing of the pool may be left either.
    """
    marker = f"warm-{os.getpid()}-" if backend == "docker-warm" else match_id
    deadline = time.monotonic() + 3.0
    while (left := leftover_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"processes left after match {match_id}: {left}"
    left_dirs = glob.glob(os.path.join(tempfile.gettempdir(), f"{SEAT_DIR_PREFIX}{marker}*"))
    assert left_dirs == [], [(d, sorted(os.listdir(d)) if os.path.isdir(d) else None) for d in left_dirs]
    if backend.startswith("docker"):
        from sandbox import docker_backend

        assert docker_backend.match_containers(match_id) == []
        if backend == "docker-warm":
            assert docker_backend.match_containers("warm", mine=True) == []  # other processes' pools aside


def warm_pool_for(limits: Limits):
    """A pool of two warm Docker seats for these limits, both started."""
    from sandbox import docker_backend

    pool = docker_backend.configure_warm_pool(2)
    pool.refill(docker_backend.get_client(), docker_backend.IMAGE, limits)
    deadline = time.monotonic() + 30
    while pool.ready(docker_backend.IMAGE, limits) < 2:
        assert time.monotonic() < deadline, "warm seats did not come up"
        time.sleep(0.05)
    return pool


def play_hostile(source: str, backend: str, limits: Limits = HOSTILE_LIMITS, **rule_changes) -> HostileOutcome:
    """Seat 0: the hostile bot; seat 1: a plain bot in the same backend. Checks cleanup."""
    hostile = BotPackage.from_bytes("hostile.py", textwrap.dedent(source).encode())
    opponent = BotPackage.from_bytes("opponent.py", OPPONENT_SOURCE)
    options = {"players": 2, "rounds": 1, "hand_size": 3} | rule_changes
    rules = Rules.parse([f"{k}={v}" for k, v in options.items()])
    match_id = "hostile" + uuid.uuid4().hex[:10]
    if backend == "docker-warm":
        from sandbox import docker_backend

        pool = warm_pool_for(limits)
        with pool.lock:
            warm_ids = [warm.container.id for group in pool.idle.values() for warm in group]
    try:
        started = time.monotonic()
        outcome = play_sandboxed_match(
            rules, [hostile, opponent], seed=11, backend="docker" if backend == "docker-warm" else backend,
            limits=limits, match_id=match_id, allow_process=True,
        )
        seconds = time.monotonic() - started
        if backend == "docker-warm":
            # Both seats ran in the warm containers, which went with the match.
            client = docker_backend.get_client()
            assert [c.id for c in client.containers.list(all=True, filters={"id": warm_ids})] == []
    finally:
        if backend == "docker-warm":
            docker_backend.configure_warm_pool(0)
    assert seconds < MATCH_BOUND_SECONDS, f"hostile match took {seconds:.1f} s"
    assert_nothing_left(match_id, backend)
    result = HostileOutcome(outcome, match_id, seconds)
    assert result.opponent.forfeit is None, f"opponent harmed: {result.opponent.forfeit}"
    assert result.opponent.faults == (), f"opponent faulted: {result.opponent.faults}"
    assert outcome.result.games == 1
    return result
