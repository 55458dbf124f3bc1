"""``arena play``'s verdict: win rates and mean scores with 95% intervals, and the paired test of two bots."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from arena_cli.main import main
from arena_cli.verdict import mean_interval, t_central, t_quantile, wilson


def play(capsys, *argv: str) -> dict:
    assert main(["play", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_wilson_interval_matches_the_textbook_values():
    # Wilson (1927) / Newcombe (1998) table: 81 of 263 -> 0.2553 to 0.3662; 0 of 10 -> 0 to 0.2775
    assert wilson(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)


@pytest.mark.parametrize(
    ("df", "quantile"), [(1, 12.7062), (2, 4.3027), (5, 2.5706), (10, 2.2281), (30, 2.0423), (120, 1.9799)]
)
def test_t_quantiles_are_the_tables(df, quantile):
    assert t_quantile(df) == pytest.approx(quantile, abs=1e-4)
    assert t_central(quantile, df) == pytest.approx(0.95, abs=1e-5)


def test_mean_interval_is_the_t_interval_and_its_p_value():
    values = [3.0, 5.0, 4.0, 8.0, 6.0, 2.0]
    test = mean_interval(values)
    half = 2.5706 * statistics.stdev(values) / math.sqrt(len(values))
    assert test["mean"] == pytest.approx(4.6667, abs=1e-4)
    assert (test["low"], test["high"]) == pytest.approx((4.6667 - half, 4.6667 + half), abs=1e-3)
    # t = 4.6667 / (2.1602 / sqrt 6) = 5.2915 with 5 degrees of freedom: two-sided p = 0.00322
    assert test["p"] == pytest.approx(0.00322, abs=2e-5)
    assert mean_interval([7.0]) == {"mean": 7.0, "low": None, "high": None, "p": None}
    assert mean_interval([0.0, 0.0])["p"] == 1.0 and mean_interval([2.0, 2.0])["p"] == 0.0


def test_the_verdict_holds_each_bots_rate_and_score_with_intervals_that_contain_them(capsys):
    doc = play(capsys, "greedy", "random", "--deals", "12", "--seed", "3")
    verdict = doc["verdict"]
    assert (verdict["level"], verdict["unit"], verdict["units"]) == (0.95, "game", 12)
    for player, summary in zip(verdict["players"], doc["players"], strict=True):
        assert player["bot"] == summary["bot"] and player["wins"] == summary["wins"]
        assert player["win_rate"] == summary["wins"] / 12
        assert player["win_rate_low"] <= player["win_rate"] <= player["win_rate_high"]
        assert player["mean_score"] == pytest.approx(summary["score"] / 12)
        assert player["mean_score_low"] < player["mean_score"] < player["mean_score_high"]


def test_a_lopsided_match_is_significant_and_self_play_is_not(capsys):
    # one round a game keeps it quick; a game's score is then that round's points
    lopsided = play(capsys, "expert", "random", "--deals", "16", "--rules", "rounds=1", "--seed", "2")
    lopsided = lopsided["verdict"]["difference"]
    assert lopsided["bots"] == ["expert", "random"]
    assert lopsided["score"]["significant"] and lopsided["score"]["p"] < 0.001
    assert lopsided["score"]["low"] > 0 and lopsided["wins"]["significant"]

    # a fixed seed: at the 5% level one self-play in twenty is "significant" by chance (seed 2 is 3-13)
    same = play(capsys, "random", "random", "--deals", "16", "--rules", "rounds=1", "--seed", "1")["verdict"]
    for key in ("score", "wins"):
        test = same["difference"][key]
        assert not test["significant"] and test["low"] < 0 < test["high"] and test["p"] > 0.05


def test_with_duplicate_the_deal_is_the_unit_and_mirrored_self_play_differs_by_nothing(capsys):
    # the same bot in both seats of a deal plays the same game mirrored: every deal's difference is 0
    same = play(capsys, "greedy", "greedy", "--deals", "5", "--duplicate", "--rules", "rounds=1")["verdict"]
    assert (same["unit"], same["units"]) == ("deal", 5)
    assert same["players"][0]["games"] == 10
    for key in ("score", "wins"):
        assert same["difference"][key] == {"mean": 0.0, "low": 0.0, "high": 0.0, "p": 1.0, "significant": False}


def test_the_text_ends_with_the_verdict(capsys):
    assert main(["play", "expert", "random", "--deals", "6", "--duplicate", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    verdict = out[out.index("verdict"):].splitlines()
    assert verdict[0] == "verdict, 95% intervals over 6 deals (each deal's seatings together):"
    assert verdict[1].split()[:4] == ["expert", "win", "rate", "100.0%"]
    assert verdict[3].startswith("  expert - random, score: +") and verdict[3].endswith(": significant (paired t test)")
    assert verdict[4].startswith("  expert - random, win rate: +100.0 percentage points")


def test_more_than_two_bots_get_intervals_but_no_pairwise_test(capsys):
    verdict = play(capsys, "first", "greedy", "random", "--deals", "3")["verdict"]
    assert verdict["difference"] is None and len(verdict["players"]) == 3
