"""``arena bench``: engine games per second, against rlcard's UnoGame when installed.

One game is one round (rules ``rounds=1``) with random bots in-process, full
official rules, replay recording on (the referee always records). rlcard
(optional extra ``bench``) is timed in the same run on its raw ``UnoGame``
loop with random legal actions.

Like with like: rlcard offers "draw" only when no card fits and plays a drawn
card that fits by itself, so its random player always plays when it can. The
engine's seats here do the same (the ``random`` bot choosing among the plays
when there are any); a bot drawing at random instead makes games about 20
times longer, which would measure the bot, not the engine (docs/performance.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

from arena_cli.errors import CommandError, FailureError
from arena_cli.progress import Progress
from engine.bots.random_bot import pick
from engine.compiled import new_game
from engine.faults import InfrastructureError
from engine.match import AgentSeat, play_match
from engine.rules import Rules
from sandbox import bench as sandbox_bench

SEATS = (2, 4)
#: games per measurement unless ``--games`` says otherwise
DEFAULT_GAMES = 1000
#: measurements per seat count unless ``--repeat`` says otherwise; the best is kept
DEFAULT_REPEAT = 3
#: what ``--sandbox`` measures unless ``--backend`` narrows it
SANDBOX_BACKENDS = ("process", "docker")
#: games played per referee call: keeps the replay held in memory small
CHUNK = 100
#: untimed games first, so imports and caches do not count
WARMUP = 20
#: games whose decisions the floor measurement replays (their observations are kept in memory)
FLOOR_GAMES = 200


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
    if getattr(args, "paired", False):
        repeats = PAIRED_REPEATS if args.repeat is None else args.repeat
        report = {"machine": machine(), "rlcard": _rlcard_version() if importlib.util.find_spec("rlcard") else None,
                  "results": [run_paired(players, repeats) for players in SEATS]}
        print(json.dumps(report) if args.json else format_paired(report))
        return 0
    games = DEFAULT_GAMES if args.games is None else args.games
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
                engine_runs.append(bench_engine(players, games, seed=repeat * 1_000_003))
                floor_runs.append(bench_floor(players, min(games, FLOOR_GAMES), seed=repeat * 1_000_003))
                if has_rlcard:
                    rlcard_runs.append(bench_rlcard(players, games, seed=repeat))
                progress.update(len(rows) * repeats + repeat + 1)
            row: dict[str, Any] = {"players": players, "games": games, "repeat": repeats}
            row["engine_games_per_second"], row["engine_decisions_per_second"] = max(engine_runs)
            row["floor_games_per_second"] = max(floor_runs)
            row["rlcard_games_per_second"] = row["rlcard_steps_per_second"] = None
            row["ratio"] = row["floor_ratio"] = None
            if has_rlcard:
                row["rlcard_games_per_second"], row["rlcard_steps_per_second"] = max(rlcard_runs)
                row["ratio"] = row["engine_games_per_second"] / row["rlcard_games_per_second"]
                row["floor_ratio"] = row["floor_games_per_second"] / row["rlcard_games_per_second"]
            rows.append(row)
    finally:
        progress.close()
    report = {"machine": machine(), "rlcard": _rlcard_version() if has_rlcard else None, "results": rows}
    print(json.dumps(report) if args.json else format_report(report))
    return 0


class RandomPlayer:
    """The ``random`` bot restricted to plays when any exist: rlcard's random player.

    It reads the observation without copying it (``random_bot.pick`` on the
    plays), so it costs the same on a plain observation and on a snapshot.
    """

    def __init__(self) -> None:
        self.decisions = 0

    def __call__(self, observation: Mapping[str, Any], configuration: dict) -> Any:
        self.decisions += 1
        legal = observation["legal_actions"]
        plays = [a for a in legal if a["type"] == "play"]
        return pick(observation, plays if plays else legal)


class CheapPlayer:
    """``RandomPlayer``'s policy (uniform among the plays when there are any, else among all
    legal actions) at about the least a Python agent costs: no list built, one ``random()``.

    The engine lists a decision's plays first and its one other choice (draw, pass or
    accept) last, so the plays are the listing without its last entry when the first is a
    play and the last is not (tests/cli/test_arena_bench_paired.py checks it against the
    filter). Reads two keys of each listed action at most, like any reader of a snapshot.
    """

    def __init__(self, seed: int = 0) -> None:
        self.decisions = 0
        self.random = random.Random(seed).random

    def __call__(self, observation: Mapping[str, Any], configuration: dict) -> Any:
        self.decisions += 1
        legal = observation["legal_actions"]
        n = len(legal)
        if n > 1 and legal[0]["type"] == "play" and legal[-1]["type"] != "play":
            n -= 1
        return legal[int(self.random() * n)]


def bench_engine(players: int, games: int, seed: int = 0) -> tuple[float, float]:
    """(games, decisions) per second of ``engine.match.play_match`` with random players."""
    rules = Rules(players=players, rounds=1)
    agent = RandomPlayer()
    seats = [AgentSeat(agent, "random") for _ in range(players)]
    play_match(rules, seats, seed=seed - 1, deals=WARMUP)
    agent.decisions = 0
    played = 0
    chunk = 0
    started = time.perf_counter()
    while played < games:
        size = min(CHUNK, games - played)
        result = play_match(rules, seats, seed=seed + chunk, deals=size)
        played += result.rounds
        chunk += 1
    seconds = time.perf_counter() - started
    return played / seconds, agent.decisions / seconds


def bench_floor(players: int, games: int, seed: int = 0, agent: Callable[[dict, dict], Any] | None = None) -> float:
    """Games per second of a Python copy of each observation and the seat: the withdrawn "floor".

    Whatever an in-process engine does, for every decision it must hand the
    seat a fresh observation (BOT_CONTRACT.md: 17 keys, the bot's own lists
    and action dicts, since a bot may keep or change what it is given) and
    call the seat. This plays ``games`` real games, keeps their observations,
    then times only that for each of their decisions, the copy made as
    cheaply as Python can (one dict copy, six list copies, the action dicts).
    It was meant as a bound no engine exceeds; it is not one (docs/performance.md,
    "The contract's floor"): the compiled core builds the observation in C for less
    than this copy and can play faster. ``agent`` is the seat timed (default: the
    bench's ``RandomPlayer``).
    """
    rules = Rules(players=players, rounds=1)
    player = RandomPlayer()
    seen: list[tuple[dict, dict]] = []

    def keep(observation: dict, configuration: dict) -> dict:
        seen.append((observation, configuration))
        return player(observation, configuration)

    play_match(rules, [AgentSeat(keep, "random") for _ in range(players)], seed=seed, deals=games)
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
    return games / (time.perf_counter() - started)


def rlcard_game(game, choose) -> int:
    """One game (one round) of rlcard's raw ``UnoGame`` loop with ``choose`` picking among its legal actions: its steps."""
    game.init_game()
    steps = 0
    while not game.is_over():
        game.step(choose(game.get_legal_actions()))
        steps += 1
    return steps


def bench_rlcard(players: int, games: int, seed: int = 0) -> tuple[float, float]:
    """(games, steps) per second of rlcard's raw ``UnoGame`` loop, random legal actions."""
    import numpy as np
    from rlcard.games.uno.game import UnoGame

    game = UnoGame(num_players=players)
    game.np_random = np.random.RandomState(seed)
    choose = random.Random(seed).choice

    for _ in range(WARMUP):
        rlcard_game(game, choose)
    started = time.perf_counter()
    steps = sum(rlcard_game(game, choose) for _ in range(games))
    seconds = time.perf_counter() - started
    return games / seconds, steps / seconds


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
        "seats  games  engine games/s  (decisions/s)  rlcard games/s  (steps/s)  ours/rlcard"
        "  floor games/s  floor/rlcard",
    ]
    for row in report["results"]:
        rl = row["rlcard_games_per_second"]
        lines.append(
            f"{row['players']:>5}  {row['games']:>5}  {row['engine_games_per_second']:>14.0f}  "
            f"{row['engine_decisions_per_second']:>13.0f}  "
            + (
                f"{rl:>14.0f}  {row['rlcard_steps_per_second']:>9.0f}  {row['ratio']:>10.2f}x"
                if rl
                else f"{'-':>14}  {'-':>9}  {'-':>11}"
            )
            + f"  {row['floor_games_per_second']:>13.0f}"
            + (f"  {row['floor_ratio']:>11.2f}x" if rl else f"  {'-':>12}")
        )
    lines.append(
        "floor: the same games with only a Python copy of each observation and the seat timed "
        "(withdrawn as a bound: docs/performance.md)"
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


# ------------------------------------------------------------- paired, CPU time
#: CPU seconds of work per timed chunk (``--paired``)
PAIRED_CHUNK_SECONDS = 0.5
#: games whose legal ids the agent-alone rows replay (recorded once, before any timing)
RECORDED_GAMES = 256
#: games whose observations the player-alone rows replay (kept in memory: a few MB)
RECORDED_OBSERVATION_GAMES = 64
#: paired repeats per seat count unless ``--repeat`` says otherwise
PAIRED_REPEATS = 5
#: the ``rules_in_c`` row's policy: the first listed action id, a play when there is one, chosen in C
first_listed = itemgetter(0)
#: what ``--paired`` times, ours against which rlcard loop
PAIRED = (
    ("rules", "rlcard_raw"),
    ("int_actions", "rlcard_raw"),
    ("contract", "rlcard_raw"),
    ("lazy_observation", "rlcard_raw"),
    ("int_actions_cheap", "rlcard_raw"),
    ("contract_cheap", "rlcard_raw"),
    ("lazy_observation_cheap", "rlcard_raw"),
    ("play_ids_cheap", "rlcard_raw"),
    ("rules_in_c", "rlcard_raw"),
    ("agent_alone", "rlcard_raw"),
    ("cheap_agent_alone", "rlcard_raw"),
    ("player_alone", "rlcard_raw"),
    ("cheap_player_alone", "rlcard_raw"),
    ("pettingzoo_env", "rlcard_env"),
    ("rlcard_env", "rlcard_raw"),
)
#: one repeat's chunks: each baseline before and after the ones timed against it
PAIRED_ORDER = ("rlcard_raw", "rules", "int_actions", "contract", "lazy_observation", "rlcard_raw",
                "int_actions_cheap", "contract_cheap", "lazy_observation_cheap", "play_ids_cheap", "rules_in_c", "rlcard_raw",
                "agent_alone", "cheap_agent_alone", "player_alone", "cheap_player_alone", "rlcard_raw",
                "rlcard_env", "pettingzoo_env", "rlcard_env")


def _chunk(play: Callable[[int], int], seconds: float, seed: int) -> tuple[int, float, int]:
    """Play games until ``seconds`` of this thread's CPU time: (games, CPU seconds, steps)."""
    games = steps = 0
    started = time.thread_time()
    while True:
        steps += play(seed + games)
        games += 1
        spent = time.thread_time() - started
        if spent >= seconds:
            return games, spent, steps


def _play_ids() -> frozenset[int]:
    from engine.game import ACTIONS, PLAY

    return frozenset(i for i, a in enumerate(ACTIONS) if a[0] == PLAY)


def record_games(rules: Rules, games: int, choose: Callable[[list[int]], int]) -> list[tuple[list[list[int]], list[int]]]:
    """Games of seeds 0 .. ``games``-1 through the int-action API, ``choose`` picking: per game the
    legal ids at each decision and the ids chosen."""
    out = []
    for seed in range(games):
        g, lists, chosen = new_game(rules, seed), [], []
        while not g.over:
            ids = list(g.legal_action_ids())
            lists.append(ids)
            chosen.append(choose(ids))
            g.step(chosen[-1])
        out.append((lists, chosen))
    return out


def record_observations(rules: Rules, games: int) -> list[list[tuple[dict, dict]]]:
    """The plain observations, with their configurations, that every seat is handed in one-game
    matches of seeds 0 .. ``games``-1, the bench's ``RandomPlayer`` in every seat: per game, in order."""
    player = RandomPlayer()
    out: list[list[tuple[dict, dict]]] = []
    for seed in range(games):
        seen: list[tuple[dict, dict]] = []

        def keep(observation: dict, configuration: dict, seen: list = seen) -> Any:
            seen.append((observation, configuration))  # kept: the referee builds the next one anew
            return player(observation, configuration)

        play_match(rules, [AgentSeat(keep, "random") for _ in range(rules.players)], seed=seed, deals=1)
        out.append(seen)
    return out


def paired_kernels(players: int) -> dict[str, Callable[[int], int] | None]:
    """name -> one game played from a seed (returns its decisions), None when not available."""

    rules = Rules(players=players, rounds=1)
    plays = _play_ids()
    rng = random.Random(players)
    choice = rng.choice

    def rules_alone(seed: int) -> int:
        g = new_game(rules, seed)
        n = 0
        while not g.over:
            ids = g.legal_action_ids()
            p = [i for i in ids if i in plays]
            g.step(choice(p or ids))
            n += 1
        return n

    def plays_first(choose: Callable[[list[int]], int]) -> Callable[[list[int]], int]:
        """The bench's int-action policy: ``choose`` among the plays when there are any, else among all."""

        def agent(ids: list[int]) -> int:
            p = [i for i in ids if i in plays]
            return choose(p or ids)

        return agent

    agent = plays_first(choice)

    def int_action_loop(pick: Callable[[list[int]], int]) -> Callable[[int], int]:
        """One game through the int-action API, ``pick`` choosing each action id."""

        def play(seed: int) -> int:
            g = new_game(rules, seed)
            n = 0
            while not g.over:
                g.step(pick(g.legal_action_ids()))
                n += 1
            return n

        return play

    # the same policy at the least a Python agent costs (CheapPlayer): what the engine and its
    # API cost beside an agent that costs next to nothing
    rand = random.Random(players).random

    def cheap_agent(ids: list[int]) -> int:
        n = len(ids)
        if n > 1 and ids[0] in plays and ids[-1] not in plays:
            n -= 1
        return ids[int(rand() * n)]

    def play_ids(pick: Callable[[list[int]], int]) -> Callable[[int], int]:
        """``int_action_loop`` with its loop in the engine (``Game.play_ids``, C on the core)."""

        def play(seed: int) -> int:
            return new_game(rules, seed).play_ids(pick)

        return play

    # The rules alone with no Python a decision (the independent study's "rules alone", issue 21):
    # ``play_ids`` with a policy that is a C callable, the first listed action, a play when there
    # is one (the engine lists the plays first): what the engine's own rules and seeding cost.
    def rules_in_c(seed: int) -> int:
        return new_game(rules, seed).play_ids(first_listed)

    # The int-action rows' ceiling: the same agents on the legal ids of games recorded beforehand,
    # with no engine at all (one C call a decision where the engine would be). No engine, however
    # fast, makes its int-action row beat its agent's row here (docs/performance.md, session 19).
    # (the policy on a stream of its own: the other rows' games stay as they were)
    recorded = [lists for lists, _ in record_games(rules, RECORDED_GAMES, plays_first(random.Random(-players).choice))]

    def alone(pick: Callable[[list[int]], int]) -> Callable[[int], int]:
        sink: list[int] = []
        keep = sink.append

        def play(seed: int) -> int:
            lists = recorded[seed % RECORDED_GAMES]
            sink.clear()
            for ids in lists:
                keep(pick(ids))
            return len(lists)

        return play

    def referee(player: RandomPlayer | CheapPlayer, lazy: bool) -> Callable[[int], int]:
        seats = [AgentSeat(player, "random", lazy_observation=lazy) for _ in range(players)]

        def match(seed: int) -> int:
            before = player.decisions
            play_match(rules, seats, seed=seed, deals=1)
            return player.decisions - before

        return match

    # The contract and lazy rows' ceiling: their players on the plain observations of real games
    # recorded beforehand, with no engine and no referee: a dict already built is the cheapest
    # observation a player can read (docs/performance.md, session 19).
    observed = record_observations(rules, RECORDED_OBSERVATION_GAMES)

    def player_alone(player: RandomPlayer | CheapPlayer) -> Callable[[int], int]:
        sink: list[Any] = []
        keep = sink.append

        def play(seed: int) -> int:
            game = observed[seed % RECORDED_OBSERVATION_GAMES]
            sink.clear()
            for observation, configuration in game:
                keep(player(observation, configuration))
            return len(game)

        return play

    # the lazy rows: the same player and referee, the seats opting in to Game.snapshot() (issue 21 point 3)
    player, cheap = RandomPlayer(), CheapPlayer(players)
    kernels: dict[str, Callable[[int], int] | None] = {
        "rules": rules_alone, "int_actions": int_action_loop(agent), "contract": referee(player, False),
        "lazy_observation": referee(player, True), "int_actions_cheap": int_action_loop(cheap_agent),
        "contract_cheap": referee(cheap, False), "lazy_observation_cheap": referee(cheap, True),
        "play_ids_cheap": play_ids(cheap_agent), "rules_in_c": rules_in_c, "agent_alone": alone(agent), "cheap_agent_alone": alone(cheap_agent),
        "player_alone": player_alone(RandomPlayer()), "cheap_player_alone": player_alone(CheapPlayer(players)),
        "pettingzoo_env": None, "rlcard_raw": None, "rlcard_env": None,
    }
    if importlib.util.find_spec("pettingzoo") is not None:
        from engine import envs

        pz = envs.env(players=players)

        def pettingzoo_env(seed: int) -> int:
            pz.reset(seed=seed)
            n = 0
            for _ in pz.agent_iter():
                obs, _, terminated, truncated, info = pz.last()
                if terminated or truncated:
                    pz.step(None)
                    continue
                # the legal ids as the info gives them, as rlcard_env reads its state's "legal_actions"
                pz.step(agent(info["legal_action_ids"]))
                n += 1
            return n

        kernels["pettingzoo_env"] = pettingzoo_env
    if importlib.util.find_spec("rlcard") is not None:
        import numpy as np
        import rlcard
        from rlcard.games.uno.game import UnoGame

        game = UnoGame(num_players=players)
        game.np_random = np.random.RandomState(players)

        def rlcard_raw(seed: int) -> int:
            return rlcard_game(game, choice)

        # rlcard's UnoEnv reads game_num_players but its game plays 2 (issue 21): what RL users get
        rl_env = rlcard.make("uno", config={"game_num_players": players, "seed": players})

        def rlcard_env(seed: int) -> int:
            state, _ = rl_env.reset()
            n = 0
            while not rl_env.is_over():
                state, _ = rl_env.step(choice(list(state["legal_actions"])))
                n += 1
            return n

        kernels["rlcard_raw"], kernels["rlcard_env"] = rlcard_raw, rlcard_env
    return kernels


def run_paired(players: int, repeats: int = PAIRED_REPEATS, seconds: float | None = None) -> dict[str, Any]:
    """Interleaved chunks of CPU time (``time.thread_time``); per pair the median ratio and range.

    Each repeat times every baseline before and after ours (its rate the mean
    of the two), so other load drifting during a repeat hits both sides.
    """
    if seconds is None:
        seconds = PAIRED_CHUNK_SECONDS
    kernels = paired_kernels(players)
    for k in kernels.values():  # warm-up: imports and caches do not count
        if k is not None:
            for s in range(3):
                k(s)
    rates: dict[str, list[float]] = {name: [] for name in kernels}
    steps: dict[str, list[float]] = {name: [] for name in kernels}
    ratios: dict[str, list[float]] = {ours: [] for ours, _ in PAIRED}
    for r in range(repeats):
        seed = r * 1_000_003
        got: dict[str, float] = {}
        seen: dict[str, list[float]] = {}
        for name in PAIRED_ORDER:
            k = kernels[name]
            if k is None:
                continue
            games, cpu, n = _chunk(k, seconds, seed)
            seen.setdefault(name, []).append(games / cpu)
            steps[name].append(n / cpu)
        for name, values in seen.items():
            got[name] = sum(values) / len(values)
            rates[name].append(got[name])
        for ours, base in PAIRED:
            if ours in got and base in got:
                ratios[ours].append(got[ours] / got[base])
    out: dict[str, Any] = {"players": players, "repeats": repeats, "chunk_cpu_seconds": seconds, "games_per_cpu_second": {},
                           "decisions_per_cpu_second": {}, "ratios": {}}
    for name in kernels:
        out["games_per_cpu_second"][name] = _median(rates[name]) if rates[name] else None
        out["decisions_per_cpu_second"][name] = _median(steps[name]) if steps[name] else None
    for ours, base in PAIRED:
        values = ratios[ours]
        out["ratios"][f"{ours}/{base}"] = (
            {"median": _median(values), "min": min(values), "max": max(values)} if values else None
        )
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values)


def format_paired(report: dict) -> str:
    lines = [f"CPU time (time.thread_time), chunks of >= {PAIRED_CHUNK_SECONDS} s, interleaved; "
             "median of paired ratios [min-max]"]
    for row in report["results"]:
        lines.append(f"{row['players']} seats, {row['repeats']} repeats:")
        for name, rate in row["games_per_cpu_second"].items():
            lines.append(f"  {name:<18} " + ("not available" if rate is None else f"{rate:>10.0f} games/CPU-s"))
        for pair, r in row["ratios"].items():
            lines.append(f"  {pair:<30} " + ("-" if r is None else f"{r['median']:.2f}x [{r['min']:.2f}-{r['max']:.2f}]"))
    return "\n".join(lines)
