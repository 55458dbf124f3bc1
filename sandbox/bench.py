"""Sandbox benchmark: decision round trip, seat start+teardown and a new game's start per backend.

Beside them, in the same run, a plain Unix-socket echo (same frames, a second
process) is the yardstick: targets are Docker decision overhead <= 2x the echo
and seat start plus teardown <= 0.5 s median. ``arena bench --sandbox`` calls
``main(games=N, as_json=...)`` (N decisions per backend); ``python -m
sandbox.bench`` takes the same options on the command line.

>>> figures = run(decisions=200, starts=3, backends=("process",))  # doctest: +SKIP
>>> figures["backends"]["process"]["decision_us"]  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, TextIO

from engine.faults import InfrastructureError
from sandbox.host import encode_frame
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.seat import Channel, SandboxSeat, SeatHandle

TRIVIAL_BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
DOCKER_DECISION_TARGET = 2.0  # x the echo round trip
START_STOP_TARGET = 0.5  # seconds, median
ROUNDS = 10  # decisions are measured in this many interleaved rounds per path

# The echo peer: reads frames, answers each with the same body.
_ECHO = r"""
import socket, struct, sys
sock = socket.socket(fileno=int(sys.argv[1]))
head = struct.Struct(">I")
def exact(n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            sys.exit(0)
        data += chunk
    return data
while True:
    (size,) = head.unpack(exact(4))
    body = exact(size)
    sock.sendall(head.pack(len(body)) + body)
"""


def sample_observation() -> dict[str, Any]:
    """A real observation of a 2-seat game, so frames have a realistic size."""
    from engine.game import Game
    from engine.rules import Rules

    return Game(Rules.parse(["players=2"]), 1).observation()


def _median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def _p95_us(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1e6


class EchoPeer:
    """A second process answering every frame with itself, over a Unix socketpair."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _ECHO, str(theirs.fileno())], pass_fds=(theirs.fileno(),)
        )
        theirs.close()
        self.channel = Channel(ours, 1 << 20)

    def decide(self, message: dict[str, Any]) -> None:
        self.channel.send(message)
        if self.channel.recv(time.monotonic() + 5) is None:
            raise RuntimeError("echo peer did not answer within 5 s")

    def stop(self) -> None:
        self.channel.close()
        self.process.kill()
        self.process.wait()


def _start(backend: str, package: BotPackage, limits: Limits, index: int) -> SandboxSeat:
    if backend == "process":
        from sandbox.backends import process

        handle: SeatHandle = process.start_seat(package, limits, label=f"bench-{os.getpid()}-{index}")
    elif backend in ("docker", "docker-warm"):
        from sandbox import docker_backend

        if backend == "docker-warm":
            _wait_for_warm_seat(docker_backend, limits)
        handle = docker_backend.start_seat(package, limits, match_id=f"bench-{os.getpid()}", seat=index)
    else:
        raise ValueError(f"unknown sandbox backend to benchmark: {backend!r} (process, docker or docker-warm)")
    seat = SandboxSeat(handle, limits, package.short_name)
    seat.wait_ready()
    if seat.fault is not None:
        seat.stop()
        raise RuntimeError(f"benchmark bot failed to start on {backend}: {seat.fault}")
    return seat


def _wait_for_warm_seat(docker_backend: ModuleType, limits: Limits, timeout: float = 30.0) -> None:
    """Untimed: let the pool refill, so a start measures what a match sees when it keeps up."""
    pool = docker_backend.warm_pool()
    pool.refill(docker_backend.get_client(), docker_backend.IMAGE, limits)
    deadline = time.monotonic() + timeout
    while pool.ready(docker_backend.IMAGE, limits) < 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no warm Docker seat came up within {timeout:g} s")
        time.sleep(0.01)


def _decision(seat: SandboxSeat, observation: dict[str, Any], configuration: dict[str, Any]) -> Callable[[], object]:
    return lambda: seat.decide(observation, configuration)


def _timed(call: Callable[[], object], count: int, into: list[float]) -> None:
    for _ in range(count):
        started = time.perf_counter()
        call()
        into.append(time.perf_counter() - started)


def run(decisions: int = 2000, starts: int = 10, backends: tuple[str, ...] = ("process", "docker")) -> dict[str, Any]:
    """Measure everything; returns the figures and whether the targets are met.

    The paths are measured interleaved (ROUNDS rounds of decisions, then the
    starts in turn), so load that comes and goes on a shared machine hits
    them alike.
    """
    observation = sample_observation()
    configuration = {"rules": {}, **Limits().configuration()}
    message = {"op": "decide", "id": 1, "observation": observation, "configuration": configuration}
    package = BotPackage.from_bytes("bench.py", TRIVIAL_BOT)
    limits = Limits()
    figures: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_before": os.getloadavg()[0],
        },
        "decisions": decisions,
        "starts": starts,
        "frame_bytes": len(encode_frame(message)),
        "backends": {},
    }
    warm = "docker-warm" in backends
    if warm:
        from sandbox import docker_backend

        previous_warm = docker_backend.warm_seats()
        docker_backend.configure_warm_pool(1)
    echo = EchoPeer()
    seats: dict[str, SandboxSeat] = {}
    try:
        for backend in backends:
            try:
                seats[backend] = _start(backend, package, limits, 0)
            except (InfrastructureError, RuntimeError) as exc:
                # No Docker here, say: report it beside the other figures.
                figures["backends"][backend] = {"error": str(exc)}
        paths: dict[str, Callable[[], object]] = {"echo": lambda: echo.decide(message)}
        for backend, seat in seats.items():
            paths[backend] = _decision(seat, observation, configuration)
        samples: dict[str, list[float]] = {name: [] for name in paths}
        per_round = max(1, decisions // ROUNDS)
        for _ in range(ROUNDS):
            for name, call in paths.items():
                _timed(call, per_round, samples[name])
        # A new game on a running seat: the previous game's processes killed, a fresh one forked.
        game_starts: dict[str, list[float]] = {backend: [] for backend in seats}
        for seat in seats.values():
            seat.begin_game(0)
        for game in range(1, starts + 1):
            for backend, seat in seats.items():
                started = time.perf_counter()
                seat.begin_game(game)
                seat._await_pending()
                game_starts[backend].append(time.perf_counter() - started)
    finally:
        echo.stop()
        for seat in seats.values():
            seat.stop()
    lifetimes: dict[str, tuple[list[float], list[float]]] = {backend: ([], []) for backend in seats}
    try:
        for index in range(starts):
            for backend, (start_only, start_stop) in lifetimes.items():
                if backend == "docker-warm":
                    _wait_for_warm_seat(docker_backend, limits)
                started = time.perf_counter()
                seat = _start(backend, package, limits, index + 1)
                ready = time.perf_counter()
                seat.stop()
                start_stop.append(time.perf_counter() - started)
                start_only.append(ready - started)
    finally:
        if warm:
            docker_backend.configure_warm_pool(previous_warm)
    figures["machine"]["load_after"] = os.getloadavg()[0]
    figures["echo"] = {"decision_us": _median_us(samples["echo"]), "decision_p95_us": _p95_us(samples["echo"])}
    echo_us = figures["echo"]["decision_us"]
    targets: dict[str, bool] = {}
    for backend, (start_only, start_stop) in lifetimes.items():
        numbers = {
            "decision_us": _median_us(samples[backend]),
            "decision_p95_us": _p95_us(samples[backend]),
            "start_s": statistics.median(start_only),
            "start_stop_s": statistics.median(start_stop),
            "game_start_ms": statistics.median(game_starts[backend]) * 1000,
        }
        numbers["x_echo"] = numbers["decision_us"] / echo_us
        figures["backends"][backend] = numbers
        if backend.startswith("docker"):
            targets[f"{backend}_decision_within_2x_echo"] = numbers["x_echo"] <= DOCKER_DECISION_TARGET
        targets[f"{backend}_start_stop_within_0.5s"] = numbers["start_stop_s"] <= START_STOP_TARGET
    figures["targets"] = targets
    return figures


def print_table(figures: dict[str, Any], out: TextIO | None = None) -> None:
    """The figures as a small text table."""
    out = out or sys.stdout
    echo = figures["echo"]
    machine = figures["machine"]
    print(f"sandbox bench: {figures['decisions']} decisions, {figures['starts']} starts, "
          f"frame {figures['frame_bytes']} bytes, {machine['cpus']} CPUs, {machine['platform']}, "
          f"load {machine['load_before']:.1f} -> {machine['load_after']:.1f}", file=out)
    print(f"{'path':<14}{'decision us':>13}{'p95 us':>10}{'x echo':>9}{'start s':>10}{'start+stop s':>14}{'game ms':>9}", file=out)
    print(f"{'unix echo':<14}{echo['decision_us']:>13.1f}{echo['decision_p95_us']:>10.1f}{1.0:>9.2f}{'-':>10}{'-':>14}{'-':>9}", file=out)
    for backend, n in figures["backends"].items():
        if "error" in n:
            print(f"{backend:<14}not measured: {n['error']}", file=out)
            continue
        print(f"{backend:<14}{n['decision_us']:>13.1f}{n['decision_p95_us']:>10.1f}{n['x_echo']:>9.2f}"
              f"{n['start_s']:>10.3f}{n['start_stop_s']:>14.3f}{n['game_start_ms']:>9.1f}", file=out)
    for name, met in figures["targets"].items():
        print(f"target {name}: {'met' if met else 'NOT met'}", file=out)


def main(argv: list[str] | None = None, *, games: int | None = None, as_json: bool = False) -> int:
    """Command line (``python -m sandbox.bench``) or ``arena bench --sandbox`` (games = decisions)."""
    parser = argparse.ArgumentParser(description="Benchmark the sandbox backends.")
    parser.add_argument("--decisions", type=int, default=games or 2000)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument(
        "--backend", action="append", choices=["process", "docker", "docker-warm"],
        help="repeatable; default process and docker (docker-warm: seats from a pool of pre-started containers)",
    )
    parser.add_argument("--json", action="store_true", default=as_json)
    args = parser.parse_args([] if argv is None and (games is not None or as_json) else argv)
    figures = run(args.decisions, args.starts, tuple(args.backend or ("process", "docker")))
    if args.json:
        print(json.dumps(figures))
    else:
        print_table(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
