"""``arena bench --paired``: CPU-time chunks, paired ratios, nothing faked."""

from __future__ import annotations

import importlib.util
import json

import pytest

from arena_cli import bench
from arena_cli.main import main


def test_paired_report_times_every_kernel_the_lazy_observation_included(monkeypatch, capsys):
    monkeypatch.setattr(bench, "PAIRED_CHUNK_SECONDS", 0.02)
    assert main(["bench", "--paired", "--repeat", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [row["players"] for row in report["results"]] == [2, 4]
    has_rlcard = importlib.util.find_spec("rlcard") is not None
    for row in report["results"]:
        rates = row["games_per_cpu_second"]
        for name in ("rules", "int_actions", "contract", "lazy_observation"):
            assert rates[name] > 0 and row["decisions_per_cpu_second"][name] > 10 * rates[name]
        if has_rlcard:
            assert row["ratios"]["lazy_observation/rlcard_raw"]["median"] > 0
            r = row["ratios"]["contract/rlcard_raw"]
            assert r["min"] <= r["median"] <= r["max"]
            assert r["median"] == pytest.approx(
                sorted([r["min"], r["median"], r["max"]])[1]
            )


def test_chunk_spends_at_least_the_cpu_time_asked():
    calls = []

    def game(seed):
        calls.append(seed)
        sum(range(20_000))
        return 3

    games, cpu, steps = bench._chunk(game, 0.05, seed=100)
    assert cpu >= 0.05 and games == len(calls) and steps == 3 * games
    assert calls == list(range(100, 100 + games))  # a fresh seed per game


def test_median_of_paired_ratios():
    assert bench._median([3.0, 1.0, 2.0]) == 2.0
    assert bench._median([4.0, 1.0, 2.0, 3.0]) == 2.5


def test_lazy_observation_kernel_plays_the_contract_games_on_snapshots(monkeypatch):
    """The lazy row is the contract row's games, decision for decision, only on snapshots."""
    from engine import match
    from engine.snapshot import Snapshot

    seen = []
    real = match.AgentSeat.decide

    def decide(self, observation, configuration):
        seen.append((self.lazy_observation, Snapshot if isinstance(observation, Snapshot) else type(observation)))
        return real(self, observation, configuration)

    monkeypatch.setattr(match.AgentSeat, "decide", decide)
    kernels = bench.paired_kernels(4)
    seen.clear()  # the player-alone rows' games, recorded as the kernels are made
    contract = [kernels["contract"](seed) for seed in range(5)]
    asked = len(seen)
    lazy = [kernels["lazy_observation"](seed) for seed in range(5)]
    assert contract == lazy and sum(lazy) == asked == len(seen) - asked
    assert set(seen[:asked]) == {(False, dict)} and set(seen[asked:]) == {(True, Snapshot)}


@pytest.mark.parametrize("players", [2, 4])
def test_the_cheap_player_chooses_among_what_the_random_player_chooses_among(players):
    """CheapPlayer and the cheap int agent keep RandomPlayer's policy: the plays when there are any,
    else every legal action (what they slice off is exactly the one action that is not a play)."""
    from engine.compiled import new_game
    from engine.rules import Rules

    plays_ids = bench._play_ids()
    decisions = 0
    for seed in range(40):
        game = new_game(Rules(players=players, rounds=1), seed)
        while not game.over:
            legal = game.legal_actions()
            ids = game.legal_action_ids()
            plays = [a for a in legal if a["type"] == "play"]
            n = len(legal)
            if n > 1 and legal[0]["type"] == "play" and legal[-1]["type"] != "play":
                n -= 1
            assert legal[:n] == (plays or legal)
            assert ids[:n] == ([i for i in ids if i in plays_ids] or ids)
            game.step(ids[decisions % n])
            decisions += 1
    assert decisions > 1000
    player = bench.CheapPlayer(1)
    chosen = {player({"legal_actions": [{"type": "play", "card": c} for c in ("R1", "R2")] + [{"type": "draw"}]}, {})["card"]
              for _ in range(50)}
    assert chosen == {"R1", "R2"} and player.decisions == 50


@pytest.mark.parametrize("players", [2, 4])
def test_the_pettingzoo_row_plays_the_int_action_rows_games(players):
    """The env's loop hands the agent the ids of info["legal_action_ids"]: the same choices, so the same
    games, as the int-action loop with the same agent (each row's own agent, seeded alike)."""
    if importlib.util.find_spec("pettingzoo") is None:
        pytest.skip("the optional extra rl is not installed")
    env_row, int_row = bench.paired_kernels(players)["pettingzoo_env"], bench.paired_kernels(players)["int_actions"]
    assert env_row is not None and int_row is not None
    decisions = [env_row(seed) for seed in range(30)]
    assert decisions == [int_row(seed) for seed in range(30)] and sum(decisions) > 1000



@pytest.mark.parametrize("players", [2, 4])
def test_the_rules_in_c_row_plays_whole_games_choosing_the_first_listed_action(players):
    # no Python a decision, yet the same games as a Python loop choosing ids[0], a play when there is one
    from engine.compiled import new_game
    from engine.rules import Rules

    rules = Rules(players=players, rounds=1)
    plays = bench._play_ids()
    row = bench.paired_kernels(players)["rules_in_c"]
    assert row is not None
    for seed in range(20):
        g, n = new_game(rules, seed), 0
        while not g.over:
            ids = list(g.legal_action_ids())
            assert ids[0] in plays or not plays.intersection(ids)  # the first listed is a play if any is
            g.step(ids[0])
            n += 1
        assert row(seed) == n > 0


@pytest.mark.parametrize("players", [2, 4])
def test_the_agent_alone_rows_replay_real_games_legal_ids_a_decision_each(players, monkeypatch):
    # the int-action rows' ceiling: the engine's real legal ids, recorded, handed to the agent in turn
    from engine.compiled import new_game
    from engine.rules import Rules

    rules = Rules(players=players, rounds=1)
    games = bench.record_games(rules, 4, lambda ids: ids[-1])
    for seed, (lists, chosen) in enumerate(games):
        g = new_game(rules, seed)
        for ids, action in zip(lists, chosen, strict=True):
            assert list(g.legal_action_ids()) == ids
            g.step(action)
        assert g.over
    monkeypatch.setattr(bench, "RECORDED_GAMES", 8)
    kernels = bench.paired_kernels(players)
    for name in ("agent_alone", "cheap_agent_alone"):
        decisions = [kernels[name](seed) for seed in range(16)]
        assert decisions[:8] == decisions[8:]  # seeds cycle over the recorded games
        assert min(decisions) >= 1 and len(set(decisions)) > 1


@pytest.mark.parametrize("players", [2, 4])
def test_the_player_alone_rows_replay_the_contracts_plain_observations(players, monkeypatch):
    # the contract and lazy rows' ceiling: the observations a seat is really handed, a decision each
    from engine.match import AgentSeat, play_match
    from engine.rules import Rules

    rules = Rules(players=players, rounds=1)
    games = bench.record_observations(rules, 3)
    handed: list[dict] = []

    def first(observation, configuration):
        handed.append(dict(observation))
        return observation["legal_actions"][0]

    for seed, game in enumerate(games):
        play_match(rules, [AgentSeat(first, "first") for _ in range(players)], seed=seed, deals=1)
        # the same deal (the players' choices part the games after the first decision)
        assert game[0][0] == handed[0]
        handed.clear()
        assert all(type(o) is dict and "legal_actions" in o and c["rules"]["players"] == players for o, c in game)
    monkeypatch.setattr(bench, "RECORDED_OBSERVATION_GAMES", 3)
    kernels = bench.paired_kernels(players)
    for name in ("player_alone", "cheap_player_alone"):
        assert [kernels[name](seed) for seed in range(6)] == [len(g) for g in games] * 2
