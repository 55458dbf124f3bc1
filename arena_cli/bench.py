"""``arena bench``: engine hands per second, against rlcard's UnoGame when installed.

One hand is one round (rules ``rounds=1``) with random bots in-process, full
official rules, replay recording on (the referee always records). rlcard
(optional extra ``bench``) is timed in the same run on its raw ``UnoGame``
loop with random legal actions.

Like with like: rlcard offers "draw" only when no card fits and plays a drawn
card that fits by itself, so its random player always plays when it can. The
engine's seats here do the same (the ``random`` bot choosing among the plays
when there are any); a bot drawing at random instead makes hands about 20
times longer, which would measure the bot, not the engine (docs/performance.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import time
from collections.abc import Callable
from typing import Any

from arena_cli.errors import CommandError, FailureError
from arena_cli.progress import Progress
from engine.bots import get
from engine.faults import InfrastructureError
from engine.match import AgentSeat, play_match
from engine.rules import Rules
from sandbox import bench as sandbox_bench

SEATS = (2, 4)
#: hands per measurement unless ``--games`` says otherwise
DEFAULT_HANDS = 1000
#: measurements per seat count unless ``--repeat`` says otherwise; the best is kept
DEFAULT_REPEAT = 3
#: what ``--sandbox`` measures unless ``--backend`` narrows it
SANDBOX_BACKENDS = ("process", "docker")
#: games played per referee call: keeps the replay held in memory small
CHUNK = 100
#: untimed hands first, so imports and caches do not count
WARMUP = 20
#: hands whose decisions the floor measurement replays (their observations are kept in memory)
FLOOR_HANDS = 200


def run_bench(args: argparse.Namespace) -> int:
    """Measure, print text or one JSON document; return the exit code."""
    sandbox_only = [f"--{name}" for name in ("backend", "decisions", "starts") if getattr(args, name) is not None]
    if args.sandbox:
        engine_only = [f"--{name}" for name in ("games", "repeat") if getattr(args, name) is not None]
        if engine_only:
            raise CommandError(f"{', '.join(engine_only)}: not used with --sandbox (use --decisions and --starts)")
        return _run_sandbox_bench(args)
    if sandbox_only:
        raise CommandError(f"{', '.join(sandbox_only)}: only used with --sandbox")
    hands = DEFAULT_HANDS if args.games is None else args.games
    repeats = DEFAULT_REPEAT if args.repeat is None else args.repeat
    has_rlcard = importlib.util.find_spec("rlcard") is not None
    steps = len(SEATS) * repeats
    progress = Progress(steps, label="arena bench ")
    rows = []
    try:
        for players in SEATS:
            engine_runs, floor_runs, rlcard_runs = [], [], []
            # Interleaved and best of --repeat: on a shared machine the other
            # load comes and goes, and it should slow both sides alike.
            for repeat in range(repeats):
                engine_runs.append(bench_engine(players, hands, seed=repeat * 1_000_003))
                floor_runs.append(bench_floor(players, min(hands, FLOOR_HANDS), seed=repeat * 1_000_003))
                if has_rlcard:
                    rlcard_runs.append(bench_rlcard(players, hands, seed=repeat))
                progress.update(len(rows) * repeats + repeat + 1)
            row: dict[str, Any] = {"players": players, "hands": hands, "repeat": repeats}
            row["engine_hands_per_second"], row["engine_decisions_per_second"] = max(engine_runs)
            row["floor_hands_per_second"] = max(floor_runs)
            row["rlcard_hands_per_second"] = row["rlcard_steps_per_second"] = None
            row["ratio"] = row["floor_ratio"] = None
            if has_rlcard:
                row["rlcard_hands_per_second"], row["rlcard_steps_per_second"] = max(rlcard_runs)
                row["ratio"] = row["engine_hands_per_second"] / row["rlcard_hands_per_second"]
                row["floor_ratio"] = row["floor_hands_per_second"] / row["rlcard_hands_per_second"]
            rows.append(row)
    finally:
        progress.close()
    report = {"machine": machine(), "rlcard": _rlcard_version() if has_rlcard else None, "results": rows}
    print(json.dumps(report) if args.json else format_report(report))
    return 0


class RandomPlayer:
    """The ``random`` bot restricted to plays when any exist: rlcard's random player."""

    def __init__(self) -> None:
        self.choose = get("random")
        self.decisions = 0

    def __call__(self, observation: dict, configuration: dict) -> dict:
        self.decisions += 1
        legal = observation["legal_actions"]
        plays = [a for a in legal if a["type"] == "play"]
        if plays and len(plays) < len(legal):
            observation = {**observation, "legal_actions": plays}
        return self.choose(observation, configuration)


def bench_engine(players: int, hands: int, seed: int = 0) -> tuple[float, float]:
    """(hands, decisions) per second of ``engine.match.play_match`` with random players."""
    rules = Rules(players=players, rounds=1)
    agent = RandomPlayer()
    seats = [AgentSeat(agent, "random") for _ in range(players)]
    play_match(rules, seats, seed=seed - 1, games=WARMUP)
    agent.decisions = 0
    played = 0
    chunk = 0
    started = time.perf_counter()
    while played < hands:
        games = min(CHUNK, hands - played)
        result = play_match(rules, seats, seed=seed + chunk, games=games)
        played += result.rounds
        chunk += 1
    seconds = time.perf_counter() - started
    return played / seconds, agent.decisions / seconds


def bench_floor(players: int, hands: int, seed: int = 0, agent: Callable[[dict, dict], Any] | None = None) -> float:
    """Hands per second of an engine whose rules cost nothing: the contract's floor.

    Whatever an in-process engine does, for every decision it must hand the
    seat a fresh observation (BOT_CONTRACT.md: 17 keys, the bot's own lists
    and action dicts, since a bot may keep or change what it is given) and
    call the seat. This plays ``hands`` real hands, keeps their observations,
    then times only that for each of their decisions, the copy made as
    cheaply as Python can (one dict copy, six list copies, the action dicts).
    The engine's hands per second can never exceed this figure. ``agent`` is
    the seat timed (default: the bench's ``RandomPlayer``).
    """
    rules = Rules(players=players, rounds=1)
    player = RandomPlayer()
    seen: list[tuple[dict, dict]] = []

    def keep(observation: dict, configuration: dict) -> dict:
        seen.append((observation, configuration))
        return player(observation, configuration)

    play_match(rules, [AgentSeat(keep, "random") for _ in range(players)], seed=seed, games=hands)
    if agent is None:
        agent = RandomPlayer()
    started = time.perf_counter()
    for o, configuration in seen:
        agent(
            {
                **o,
                "hand": o["hand"].copy(),
                "hand_sizes": o["hand_sizes"].copy(),
                "uno": o["uno"].copy(),
                "scores": o["scores"].copy(),
                "discard": o["discard"].copy(),
                "legal_actions": [a.copy() for a in o["legal_actions"]],
            },
            configuration,
        )
    return hands / (time.perf_counter() - started)


def bench_rlcard(players: int, hands: int, seed: int = 0) -> tuple[float, float]:
    """(hands, steps) per second of rlcard's raw ``UnoGame`` loop, random legal actions."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=players)
    game.np_random = np.random.RandomState(seed)
    choose = random.Random(seed).choice

    def hand() -> int:
        game.init_game()
        steps = 0
        while not game.is_over():
            game.step(choose(game.get_legal_actions()))
            steps += 1
        return steps

    for _ in range(WARMUP):
        hand()
    started = time.perf_counter()
    steps = sum(hand() for _ in range(hands))
    seconds = time.perf_counter() - started
    return hands / seconds, steps / seconds


def machine() -> dict:
    """What the figures were measured on."""
    return {
        "cpus": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": f"{platform.system()} {platform.release()}",
    }


def format_report(report: dict) -> str:
    """The bench report as a small text table."""
    m = report["machine"]
    lines = [
        f"engine: random bots, one round per game, replay on, best of {report['results'][0]['repeat']}; "
        f"{m['cpu']}, {m['cpus']} CPUs, Python {m['python']}",
        "seats  hands  engine hands/s  (decisions/s)  rlcard hands/s  (steps/s)  ours/rlcard"
        "  floor hands/s  floor/rlcard",
    ]
    for row in report["results"]:
        rl = row["rlcard_hands_per_second"]
        lines.append(
            f"{row['players']:>5}  {row['hands']:>5}  {row['engine_hands_per_second']:>14.0f}  "
            f"{row['engine_decisions_per_second']:>13.0f}  "
            + (
                f"{rl:>14.0f}  {row['rlcard_steps_per_second']:>9.0f}  {row['ratio']:>10.2f}x"
                if rl
                else f"{'-':>14}  {'-':>9}  {'-':>11}"
            )
            + f"  {row['floor_hands_per_second']:>13.0f}"
            + (f"  {row['floor_ratio']:>11.2f}x" if rl else f"  {'-':>12}")
        )
    lines.append(
        "floor: the same hands with only the contract's fresh observation and the seat timed, "
        "the most any in-process engine could reach"
    )
    if report["rlcard"] is None:
        lines.append("rlcard is not installed: pip install -e '.[bench]' to compare")
    else:
        lines.append(f"rlcard {report['rlcard']}")
    return "\n".join(lines)


def _run_sandbox_bench(args: argparse.Namespace) -> int:
    """``sandbox.bench``: decision round trip and seat start per backend (docs/sandbox.md)."""
    backends = tuple(dict.fromkeys(args.backend or SANDBOX_BACKENDS))
    try:
        counts = {k: getattr(args, k) for k in ("decisions", "starts") if getattr(args, k) is not None}
        figures = sandbox_bench.run(backends=backends, **counts)
    except (InfrastructureError, RuntimeError, OSError) as exc:
        raise FailureError(f"sandbox bench ({', '.join(backends)}): {exc}") from exc
    if args.json:
        print(json.dumps(figures))
    else:
        sandbox_bench.print_table(figures)
    return 0


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _rlcard_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rlcard")
    except PackageNotFoundError:
        return "unknown version"
