"""SPRT on game pairs (tournaments.sprt): the pentanomial GSPRT's LLR, Wald's bounds, the Elo estimate."""

from __future__ import annotations

import math
import random

import pytest

from tournaments.sprt import (
    H0,
    H1,
    PAIR_SCORES,
    Sprt,
    elo_estimate,
    llr,
    logistic_score,
    pair_cell,
    score_elo,
    wald_bounds,
)


def test_llr_against_a_hand_computed_example():
    """Counts [1, 3, 7, 6, 3] (N = 20 pairs), elo0 = 0, elo1 = 20.

    p = [0.05, 0.15, 0.35, 0.30, 0.15]; a = [0, 1/4, 1/2, 3/4, 1]; mean 0.5875.
    s0 = L(0) = 0.5; s1 = L(20) = 1 / (1 + 10^(-0.05)) = 0.528751.
    H0: x0 = 1.099352 solves sum p_i (a_i - s0) / (1 + x0 (a_i - s0)) = 0:
      terms 0.05 * -0.5 / 0.450324 = -0.055516, 0.15 * -0.25 / 0.725162 = -0.051713,
      0, 0.30 * 0.25 / 1.274838 = 0.058831, 0.15 * 0.5 / 1.549676 = 0.048397: sum 0.
      q0 = p / (1 + x0 (a - s0)) = [0.111031, 0.206850, 0.350000, 0.235324, 0.096794].
    H1: x1 = 0.775199, q1 = [0.084730, 0.191348, 0.357978, 0.256079, 0.109865].
    Both sum to 1 and have mean s0, s1.
    LLR = 20 * sum p log(q1 / q0)
        = 20 * (0.05 * -0.270340 + 0.15 * -0.077900 + 0.35 * 0.022538
                + 0.30 * 0.084523 + 0.15 * 0.126667) = 20 * 0.027043 = 0.54085.
    """
    p = [0.05, 0.15, 0.35, 0.30, 0.15]
    for s, x, q in (
        (0.5, 1.099352, [0.111031, 0.206850, 0.350000, 0.235324, 0.096794]),
        (0.528751, 0.775199, [0.084730, 0.191348, 0.357978, 0.256079, 0.109865]),
    ):
        assert logistic_score(0 if s == 0.5 else 20) == pytest.approx(s, abs=1e-6)
        assert [pi / (1 + x * (a - s)) for pi, a in zip(p, PAIR_SCORES, strict=True)] == pytest.approx(q, abs=2e-6)
        assert sum(q) == pytest.approx(1, abs=1e-5)
        assert sum(qi * a for qi, a in zip(q, PAIR_SCORES, strict=True)) == pytest.approx(s, abs=1e-5)
    assert llr([1, 3, 7, 6, 3], 0, 20) == pytest.approx(0.54085, abs=1e-4)


def test_llr_of_all_wins_grows_by_log_s1_over_s0_per_pair():
    # all pairs 2-0: under H0 the nearest distribution is about (1 - s0) at 0 and s0 at 1,
    # so each pair adds about log(s1 / s0)
    per_pair = math.log(logistic_score(10) / logistic_score(0))
    assert llr([0, 0, 0, 0, 100], 0, 10) == pytest.approx(100 * per_pair, rel=0.01)


def test_llr_is_zero_for_symmetric_hypotheses_and_symmetric_results():
    assert llr([2, 5, 9, 5, 2], -10, 10) == pytest.approx(0, abs=1e-9)
    # results that look like H0 give a negative LLR, like H1 a positive one
    assert llr([2, 5, 9, 5, 2], 0, 10) < 0 < llr([2, 5, 9, 5, 2], -10, 0)


def test_wald_bounds():
    lower, upper = wald_bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95)) and upper == pytest.approx(math.log(0.95 / 0.05))
    lower, upper = wald_bounds(0.05, 0.1)
    assert lower == pytest.approx(math.log(0.1 / 0.95)) and upper == pytest.approx(math.log(0.9 / 0.05))
    for bad in (0, 0.5, -1, "x"):
        with pytest.raises(ValueError):
            wald_bounds(bad, 0.05)


def test_elo_estimate_and_interval():
    # mean 0.5875 per game: 400 log10(0.5875 / 0.4125) = 61.43; sd of a pair's score per game
    # sqrt(sum p (a - 0.5875)^2) = 0.26546, half-width 1.96 * 0.26546 / sqrt(20) = 0.11634
    elo, low, high = elo_estimate([1, 3, 7, 6, 3], pseudo=0)
    assert elo == pytest.approx(61.43, abs=0.01)
    assert low == pytest.approx(score_elo(0.5875 - 0.11634), abs=0.05)
    assert high == pytest.approx(score_elo(0.5875 + 0.11634), abs=0.05)
    assert elo_estimate([0, 0, 5, 0, 0]) == (0.0, 0.0, 0.0)
    # the default adds one 1-1 pair: 20 perfect pairs are a mean of 20.5 / 21 = 0.97619 per game,
    # 400 log10(0.97619 / 0.02381) = 645.1, with an interval below it
    elo, low, high = elo_estimate([0, 0, 0, 0, 20])
    assert elo == pytest.approx(400 * math.log10((20.5 / 21) / (0.5 / 21)), abs=0.01)
    assert 0 < low < elo < high


def test_a_test_accepts_h1_for_a_stronger_and_h0_for_an_equal_bot():
    rng = random.Random(1)

    def run(elo):
        test = Sprt(elo0=0, elo1=20)
        p = logistic_score(elo)
        while test.verdict is None:
            test.add(sum(rng.random() < p for _ in range(2)) * 1.0)  # two independent games
        return test

    strong = run(80)
    assert strong.verdict == H1 and strong.llr >= strong.upper and strong.score > 0.5
    equal = run(0)
    assert equal.verdict == H0 and equal.llr <= equal.lower


def test_bad_arguments():
    with pytest.raises(ValueError, match="below"):
        Sprt(elo0=10, elo1=0)
    with pytest.raises(ValueError, match="finite"):
        Sprt(elo0=float("nan"))
    with pytest.raises(ValueError, match="5 counts"):
        llr([1, 2, 3], 0, 10)
    with pytest.raises(ValueError, match="non-negative"):
        llr([1, 2, -3, 0, 0], 0, 10)
    with pytest.raises(ValueError, match="0, 0.5"):
        pair_cell(0.75)
