"""Seat start with warm seats against cold, on the real Docker engine (docs/sandbox.md, "Warm seats").

``python -m sandbox.warm_bench [--starts N] [--json]`` starts N seats each way, interleaved
(cold, warm, cold, ...): a start is ``start_seat`` up to the bot imported (``wait_ready``,
what a match waits for). Each start's cycle then makes one decision, stops the seat and, for
a warm one, waits until the pool has started its replacement, so the CPU of a cycle counts
everything a seat costs: this process (all its threads, the pool's too) and the Docker
engine's ``dockerd`` and ``containerd`` (the per-container shims and ``runc`` are not
counted: they exit with their container). Reports the p50 of each.

``--engine-cgroup FOLDER`` (repeatable) counts the CPU of these cgroups instead of the two
processes: with the engine in a cgroup of its own (a systemd ``docker.service`` and
``containerd.service``, or a dockerd started inside one) that is all of it, the shims,
``runc`` and the engine's hooks too (docs/sandbox.md, "What a container costs the engine").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from types import ModuleType
from typing import Any

from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.seat import SandboxSeat

BOT = BotPackage.from_bytes("bench.py", b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n")
OBSERVATION = {"legal_actions": [{"type": "draw"}]}
TICKS = os.sysconf("SC_CLK_TCK")


def _engine_pids() -> list[int]:
    found = subprocess.run(["pgrep", "-x", "dockerd|containerd"], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found]


def process_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) the live processes ``pids`` used so far (gone ones count none)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / TICKS


def cgroup_cpu_seconds(folder: str) -> float:
    """CPU seconds a cgroup's processes used so far, its descendants' too (cgroup v1 ``cpuacct.usage``
    in nanoseconds, or v2 ``cpu.stat``'s ``usage_usec``); ValueError when the folder has neither."""
    try:
        with open(os.path.join(folder, "cpuacct.usage")) as usage:
            return int(usage.read()) / 1e9
    except FileNotFoundError:
        pass
    try:
        with open(os.path.join(folder, "cpu.stat")) as stat:
            for line in stat:
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
    except FileNotFoundError:
        pass
    raise ValueError(f"{folder} is not a cgroup with CPU accounting (no cpuacct.usage, no cpu.stat)")


def _cycle(docker_backend: ModuleType, limits: Limits, index: int, warm: bool, pids: list[int],
           cgroups: list[str]) -> tuple[float, float]:
    """(start wall seconds, cycle CPU seconds) of one seat."""
    pool = docker_backend.warm_pool()
    if warm:
        pool.fill(docker_backend.get_client(), docker_backend.IMAGE, limits)
        assert pool.ready(docker_backend.IMAGE, limits) >= 1, "no warm seat came up"
    before = process_cpu_seconds(pids) + sum(cgroup_cpu_seconds(folder) for folder in cgroups)
    started = time.perf_counter()
    if warm:
        handle = docker_backend.start_seat(BOT, limits, match_id=f"wbench-{os.getpid()}", seat=index)
    else:
        handle = docker_backend.start_seat(BOT, limits, match_id=f"wbench-{os.getpid()}", seat=index,
                                           client=docker_backend.get_client())  # a client given: no pool
    seat = SandboxSeat(handle, limits, "bench")
    seat.wait_ready()
    wall = time.perf_counter() - started
    try:
        assert seat.decide(OBSERVATION, {}) == {"type": "draw"}, seat.fault
    finally:
        seat.stop()
    if warm:
        pool.fill(docker_backend.get_client(), docker_backend.IMAGE, limits)  # its replacement's cost
    return wall, process_cpu_seconds(pids) + sum(cgroup_cpu_seconds(folder) for folder in cgroups) - before


def run(starts: int = 30, engine_cgroups: list[str] | None = None) -> dict[str, Any]:
    """The figures; ``engine_cgroups``: the engine's CPU is these cgroups', not dockerd's and containerd's."""
    from sandbox import docker_backend

    limits = Limits()
    cgroups = list(engine_cgroups or [])
    for folder in cgroups:
        cgroup_cpu_seconds(folder)  # refused now, not after the first cycle
    pids = [os.getpid(), *([] if cgroups else _engine_pids())]
    docker_backend.configure_warm_pool(1)
    samples: dict[str, tuple[list[float], list[float]]] = {"cold": ([], []), "warm": ([], [])}
    try:
        _cycle(docker_backend, limits, 0, True, pids, cgroups)  # untimed: images and imports in the caches
        _cycle(docker_backend, limits, 0, False, pids, cgroups)
        for index in range(starts):
            for name in ("cold", "warm"):
                wall, cpu = _cycle(docker_backend, limits, index, name == "warm", pids, cgroups)
                samples[name][0].append(wall)
                samples[name][1].append(cpu)
    finally:
        docker_backend.configure_warm_pool(0)
    figures: dict[str, Any] = {"starts": starts, "cpus": os.cpu_count(), "load": os.getloadavg()[0],
                               "engine": cgroups or "dockerd + containerd"}
    for name, (walls, cpus) in samples.items():
        figures[name] = {"start_wall_p50_ms": statistics.median(walls) * 1000,
                         "cycle_cpu_p50_ms": statistics.median(cpus) * 1000}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30, help="seats started each way (default 30)")
    parser.add_argument("--engine-cgroup", action="append", default=[], metavar="FOLDER",
                        help="a cgroup folder holding the engine (repeatable): its CPU is the engine's")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    try:
        figures = run(args.starts, args.engine_cgroup)
    except ValueError as exc:
        parser.error(str(exc))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"{args.starts} starts each way, interleaved; {figures['cpus']} cores, load {figures['load']:.1f}")
        for name in ("cold", "warm"):
            row = figures[name]
            print(f"{name:>5}: seat start p50 {row['start_wall_p50_ms']:7.1f} ms wall; "
                  f"cycle CPU p50 {row['cycle_cpu_p50_ms']:6.1f} ms (this process + the engine)")
        print(f"the engine: {' + '.join(args.engine_cgroup) or 'dockerd + containerd'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
