"""``arena bench``: the report's shape, and the random player it times."""

from __future__ import annotations

import importlib.util
import json

import pytest

from arena_cli.bench import RandomPlayer, bench_floor
from arena_cli.main import main

HAS_RLCARD = importlib.util.find_spec("rlcard") is not None


def test_bench_json_reports_two_and_four_seats(capsys):
    assert main(["bench", "--games", "5", "--repeat", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    report = json.loads(out)
    assert [row["players"] for row in report["results"]] == [2, 4]
    assert report["machine"]["cpus"] >= 1 and report["machine"]["python"].startswith("3.")
    for row in report["results"]:
        assert row["games"] == 5 and row["repeat"] == 2
        assert row["engine_games_per_second"] > 0
        # a game is many decisions
        assert row["engine_decisions_per_second"] > 5 * row["engine_games_per_second"]
        # the floor (withdrawn as a bound, docs/performance.md) is timed: a Python copy of each
        # observation and the seat; the compiled core, which builds observations in C and keeps the
        # replay compact until read, can play faster than it
        assert row["floor_games_per_second"] > 0
        if HAS_RLCARD:
            assert row["ratio"] == pytest.approx(
                row["engine_games_per_second"] / row["rlcard_games_per_second"]
            )
            assert row["floor_ratio"] == pytest.approx(
                row["floor_games_per_second"] / row["rlcard_games_per_second"]
            )
        else:
            assert row["rlcard_games_per_second"] is None and row["ratio"] is None
            assert row["floor_ratio"] is None


def test_bench_text_names_the_measurement(capsys):
    assert main(["bench", "--games", "3", "--repeat", "1"]) == 0
    out, _ = capsys.readouterr()
    assert "one round per game" in out
    assert len([line for line in out.splitlines() if line.split()[:1] in (["2"], ["4"])]) == 2


def test_floor_times_the_seat_once_per_decision_on_fresh_observations():
    given, held = [], []

    def seat(observation, configuration):
        given.append(observation)
        held.append(len(observation["hand"]) == observation["hand_sizes"][observation["seat"]] > 0)
        observation["hand"].clear()  # a bot may change what it is given
        observation["legal_actions"][0]["type"] = "changed"
        return observation["legal_actions"][0]

    first = bench_floor(2, 3, seed=11, agent=seat)
    decisions = len(given)
    again = bench_floor(2, 3, seed=11, agent=seat)
    assert first > 0 and again > 0
    # three real games are tens of decisions, and the same seed gives the same games
    assert decisions > 3 * 10 and len(given) == 2 * decisions
    # every call got its own dict and lists: no change made by one reached another
    assert len({id(o) for o in given[:decisions]}) == decisions
    assert all(held)
    assert len({id(o["legal_actions"][0]) for o in given[:decisions]}) == decisions
    for o in given:
        assert set(o) >= {"seat", "players", "decision", "hand", "legal_actions", "discard", "hand_sizes"}


def test_random_player_is_deterministic_given_the_observation():
    first = RandomPlayer()
    second = RandomPlayer()
    observation = {
        "legal_actions": [{"type": "play", "card": "R5"}, {"type": "play", "card": "G5"}, {"type": "draw"}],
        "seat": 0, "round": 1, "decision": "play", "draw_pile": 80, "discard": ["R1"],
        "top_card": "R1", "color": "R", "hand_sizes": [7, 7], "hand": ["R5", "G5"], "scores": [0, 0],
        "dealer": 1,
    }
    assert all(first(observation, {}) == second(observation, {}) for _ in range(5))


def test_random_player_plays_whenever_a_card_fits():
    player = RandomPlayer()
    base = {
        "seat": 0, "round": 1, "decision": "play", "discard": ["R1"], "top_card": "R1",
        "color": "R", "hand_sizes": [3, 7], "scores": [0, 0], "dealer": 1,
    }
    for pile in range(40, 90):
        observation = {
            **base,
            "draw_pile": pile,
            "hand": ["R5", "G1", "B9"],
            "legal_actions": [{"type": "play", "card": "R5"}, {"type": "play", "card": "G1"}, {"type": "draw"}],
        }
        assert player(observation, {})["type"] == "play"
    assert player.decisions == 50


def test_sandbox_bench_measures_the_process_backend(capsys, bwrap_path):
    code = main(["bench", "--sandbox", "--backend", "process", "--decisions", "20", "--starts", "1", "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    figures = json.loads(out)
    assert list(figures["backends"]) == ["process"]
    assert figures["backends"]["process"]["decision_us"] > 0


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["bench", "--backend", "docker"], "--backend"),
        (["bench", "--decisions", "5"], "--decisions"),
        (["bench", "--sandbox", "--games", "5"], "--games"),
        (["bench", "--sandbox", "--repeat", "2"], "--repeat"),
        (["bench", "--sandbox", "--backend", "vm"], "'vm'"),
    ],
)
def test_bench_options_that_do_not_fit_are_refused(capsys, argv, named):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and named in err
