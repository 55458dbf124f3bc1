"""The batch rating fit (tournaments.rating): hand-checked values, an independent optimiser, ties, forfeits."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from tournaments.rating import (
    ELO_PER_LOGIT,
    MEAN_RATING,
    PRIOR_SD_ELO,
    Z95,
    RatingInputError,
    Results,
    fit_ratings,
    pick_table_informative,
)


def test_hand_checked_two_players_three_wins_to_one():
    """a beats b 3 times, b beats a once, prior sd 400 points.

    With d = theta_a - theta_b, symmetry gives theta_a = -theta_b = d / 2; the
    prior's precision in logits is lam = (173.7178 / 400)^2 = 0.188612 and its
    term is -lam (theta_a^2 + theta_b^2) / 2 = -lam d^2 / 4. The log-posterior
    3 log p + log(1 - p) - lam d^2 / 4 with p = 1 / (1 + e^-d) is maximal where
    3 (1 - p) - p = lam d / 2, i.e. 3 - 4p = lam d / 2: d = 0.979040 (p = 0.726910).
    a: 1500 + 173.7178 * 0.489520 = 1585.04, b: 1414.96.
    The negative Hessian is lam I + h [[1, -1], [-1, 1]] with h = 4 p (1 - p) =
    0.794048; the variance of theta_a - mean = (theta_a - theta_b) / 2 is
    1 / (2 (lam + 2h)) = 0.281404, sd 0.530475 logits = 92.153 points.
    Likelihood of superiority: Phi(d / sqrt(2 / (lam + 2h))) = Phi(0.92272) = 0.8219.
    """
    results = Results()
    for _ in range(3):
        results.add({"a": 1, "b": 2})
    results.add({"a": 2, "b": 1})
    fit = fit_ratings(results)
    assert fit.rating("a") == pytest.approx(1585.04, abs=0.01)
    assert fit.rating("b") == pytest.approx(1414.96, abs=0.01)
    assert fit.sd("a") == pytest.approx(92.153, abs=0.01)
    assert fit["a"].low == pytest.approx(1585.04 - 1.96 * 92.153, abs=0.05)
    assert fit.los("a", "b") == pytest.approx(0.8219, abs=1e-4)
    assert fit["a"].games == 4 and fit["a"].score == 0.75


def test_weak_prior_gives_the_maximum_likelihood_gap():
    # without a prior the maximum-likelihood odds are 3:1: a gap of 400 log10(3) = 190.85 points
    results = Results()
    for _ in range(3):
        results.add({"a": 1, "b": 2})
    results.add({"b": 1, "a": 2})
    fit = fit_ratings(results, prior_sd=1e6)
    assert fit.rating("a") - fit.rating("b") == pytest.approx(400 * math.log10(3), abs=1e-3)
    assert fit.rating("a") + fit.rating("b") == pytest.approx(2 * MEAN_RATING)


def test_a_draw_is_half_a_win_and_half_a_loss():
    drawn, halves = Results(), Results()
    for results in (drawn, halves):
        results.add({"a": 1, "b": 2})
    drawn.add({"a": 1, "b": 1})
    halves.add({"a": 1, "b": 2}, weight=0.5)
    halves.add({"a": 2, "b": 1}, weight=0.5)
    one, two = fit_ratings(drawn), fit_ratings(halves)
    assert one.rating("a") == pytest.approx(two.rating("a"), abs=1e-9)
    assert one.sd("a") == pytest.approx(two.sd("a"), abs=1e-9)


def test_forfeit_ranks_last_whatever_the_given_rank():
    given, moved = Results(), Results()
    given.add({"a": 1, "b": 2, "c": 3}, forfeits=["a"])
    moved.add({"b": 1, "c": 2, "a": 3})
    assert fit_ratings(given).rating("a") == pytest.approx(fit_ratings(moved).rating("a"))
    # two forfeiters tie for last
    both, tied = Results(), Results()
    both.add({"a": 1, "b": 2, "c": 3}, forfeits=["a", "c"])
    tied.add({"b": 1, "a": 2, "c": 2})
    assert fit_ratings(both).rating("a") == pytest.approx(fit_ratings(tied).rating("a"))
    assert fit_ratings(both).rating("a") == pytest.approx(fit_ratings(both).rating("c"))


# ---- an independent, slow optimiser from the model's definition -------------------------------


def slow_log_posterior(theta: dict, results: list, prior_sd: float) -> float:
    """Plackett–Luce from its definition; a tie group is the geometric mean over its orders."""
    lam = (ELO_PER_LOGIT / prior_sd) ** 2
    total = -lam / 2 * sum(t * t for t in theta.values())
    for ranks in results:
        places = sorted(set(ranks.values()))
        remaining = list(ranks)
        for place in places:
            group = [p for p in ranks if ranks[p] == place]
            logs = []
            for order in itertools.permutations(group):
                left = list(remaining)
                log_l = 0.0
                for p in order:
                    log_l += theta[p] - math.log(sum(math.exp(theta[q]) for q in left))
                    left.remove(p)
                logs.append(log_l)
            total += sum(logs) / len(logs)
            remaining = [p for p in remaining if p not in group]
    return total


def slow_fit(players, results, prior_sd, sweeps=200):
    """Coordinate-wise Newton steps with finite-difference derivatives (the posterior is concave)."""
    theta = dict.fromkeys(players, 0.0)
    h = 1e-4
    for _ in range(sweeps):
        biggest = 0.0
        for p in players:
            f0 = slow_log_posterior(theta, results, prior_sd)
            theta[p] += h
            f1 = slow_log_posterior(theta, results, prior_sd)
            theta[p] -= 2 * h
            f2 = slow_log_posterior(theta, results, prior_sd)
            theta[p] += h
            d1, d2 = (f1 - f2) / (2 * h), (f1 - 2 * f0 + f2) / (h * h)
            step = -d1 / d2
            theta[p] += step
            biggest = max(biggest, abs(step))
        if biggest < 1e-9:
            break
    return theta


def random_results(rng: random.Random, players: list, count: int) -> list:
    results = []
    for _ in range(count):
        table = rng.sample(players, rng.choice([2, 2, 3, 4]))
        ranks = {p: rng.randint(1, len(table)) for p in table}  # ties of every kind
        results.append(ranks)
    return results


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fit_equals_an_independent_optimiser_on_random_rankings_with_ties(seed):
    rng = random.Random(seed)
    players = ["p0", "p1", "p2", "p3", "p4"]
    data = random_results(rng, players, 25)
    results = Results()
    for ranks in data:
        results.add(ranks)
    prior = 300.0
    fit = fit_ratings(results, prior_sd=prior)
    slow = slow_fit(players, data, prior)
    for p in players:
        assert fit.theta[fit.index[p]] == pytest.approx(slow[p], abs=1e-5)
    # the covariance is the inverse of the slow posterior's negative Hessian (finite differences)
    neg_hessian = np.linalg.inv(fit.cov)
    h = 1e-3
    for a, b in itertools.combinations_with_replacement(players, 2):
        def f(da, db, a=a, b=b):
            t = dict(slow)
            t[a] += da
            t[b] += db
            return slow_log_posterior(t, data, prior)

        second = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
        assert -second == pytest.approx(neg_hessian[fit.index[a], fit.index[b]], abs=1e-4)


def test_new_player_sits_at_the_mean_with_the_prior_interval():
    results = Results()
    results.add({"a": 1, "b": 2})
    fit = fit_ratings(results)
    new = fit["nobody"]
    assert new.rating == MEAN_RATING and new.games == 0
    assert new.high - new.rating == pytest.approx(Z95 * PRIOR_SD_ELO)
    assert fit.los("a", "nobody") > 0.5 > fit.los("b", "nobody")


def test_anchor_names_the_reference_and_keeps_differences():
    rng = random.Random(5)
    results = Results()
    for ranks in random_results(rng, list("abcdef"), 60):
        results.add(ranks)
    mean, anchored = fit_ratings(results), fit_ratings(results, anchor="c")
    assert anchored.rating("c") == MEAN_RATING and anchored.sd("c") == pytest.approx(0, abs=1e-6)
    assert sum(mean.rating(p) for p in "abcdef") / 6 == pytest.approx(MEAN_RATING)
    for p in "abdef":
        assert anchored.rating(p) - anchored.rating("c") == pytest.approx(mean.rating(p) - mean.rating("c"))
        assert anchored.los(p, "c") == pytest.approx(mean.los(p, "c"))
    with pytest.raises(ValueError, match="anchor"):
        fit_ratings(results, anchor="zed")


def test_warm_start_after_one_more_result_equals_a_cold_fit():
    rng = random.Random(9)
    results = Results()
    for ranks in random_results(rng, [f"b{i}" for i in range(20)], 400):
        results.add(ranks)
    before = fit_ratings(results)
    results.add({"b1": 1, "b2": 2, "new": 3})
    warm, cold = fit_ratings(results, start=before), fit_ratings(results)
    for p in results.ids:
        assert warm.rating(p) == pytest.approx(cold.rating(p), abs=1e-4)
        assert warm.sd(p) == pytest.approx(cold.sd(p), rel=0.02)
    assert warm.iterations <= cold.iterations


def test_likelihood_of_superiority_is_a_probability_both_ways():
    rng = random.Random(3)
    results = Results()
    for ranks in random_results(rng, list("abcd"), 40):
        results.add(ranks)
    fit = fit_ratings(results)
    for a, b in itertools.permutations("abcd", 2):
        assert fit.los(a, b) + fit.los(b, a) == pytest.approx(1)
        assert (fit.los(a, b) > 0.5) == (fit.rating(a) > fit.rating(b))


def test_a_strong_player_meeting_only_weak_ones_is_not_inflated():
    # true strengths in points; "s" meets only the two weakest, the others meet each other
    true = {"w1": -300, "w2": -250, "m1": 0, "m2": 50, "m3": 100, "s": 150}
    rng = random.Random(11)
    results = Results()

    def play(a, b):
        p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
        results.add({a: 1, b: 2} if rng.random() < p else {a: 2, b: 1})

    others = [p for p in true if p != "s"]
    for _ in range(3000):
        play(*rng.sample(others, 2))
    for _ in range(1500):
        play("s", rng.choice(["w1", "w2"]))
    fit = fit_ratings(results)
    mean_true = sum(true.values()) / len(true)
    error = fit.rating("s") - (MEAN_RATING + true["s"] - mean_true)
    assert abs(error) < 3 * fit.sd("s")
    assert abs(error) < 60


@pytest.mark.parametrize(
    "ranks, forfeits, message",
    [
        ({"a": 1}, (), "2 to 10 players"),
        ({f"p{i}": 1 for i in range(11)}, (), "2 to 10 players"),
        ({"a": 1, "b": 0}, (), "positive integer"),
        ({"a": 1, "b": True}, (), "positive integer"),
        ({"a": 1, "b": 1.5}, (), "positive integer"),
        ([("a", 1), ("a", 2)], (), "twice"),
        ({"a": 1, "b": 2}, ("c",), "not in the result"),
    ],
)
def test_bad_results_are_refused_and_leave_the_store_unchanged(ranks, forfeits, message):
    results = Results()
    results.add({"x": 1, "y": 2})
    with pytest.raises(RatingInputError, match=message):
        results.add(ranks, forfeits=forfeits)
    assert len(results) == 1 and results.ids == ["x", "y"]


def test_informative_tables_are_fair_and_prefer_the_uncertain():
    rng = random.Random(2)
    results = Results()
    regulars = [f"r{i}" for i in range(8)]
    for ranks in random_results(rng, regulars, 600):
        results.add(ranks)
    fit = fit_ratings(results)
    # at equal games the newcomer (prior variance) is drawn nearly always, against any anchor
    even = dict.fromkeys([*regulars, "new"], 10).__getitem__
    met_new = sum(
        "new" in pick_table_informative(rng.choice(regulars), [*regulars, "new"], 3, fit, rng, games=even)
        for _ in range(200)
    )
    assert met_new > 190
    # over many tables the fairness factor keeps it near its share of seats
    games = dict.fromkeys([*regulars, "new"], 0)
    for _ in range(400):
        anchor = rng.choice(regulars)
        table = pick_table_informative(anchor, [*regulars, "new"], 3, fit, rng, games=games.__getitem__)
        assert len(table) == 3 and len(set(table)) == 3 and anchor in table
        for p in table:
            games[p] += 1
    mean = sum(games[r] for r in regulars) / 8
    assert games["new"] - mean <= max(2, 0.1 * mean) + 3


def test_informative_tables_keep_owners_apart():
    results = Results()
    results.add({"a1": 1, "b1": 2})
    fit = fit_ratings(results)
    owner = {"a1": "a", "a2": "a", "b1": "b", "b2": "b", "c1": "c"}.__getitem__
    rng = random.Random(4)
    for _ in range(50):
        table = pick_table_informative("a1", ["a2", "b1", "b2", "c1"], 3, fit, rng, owner=owner)
        assert sorted(owner(p) for p in table) == ["a", "b", "c"]
    assert pick_table_informative("a1", ["a2", "b1"], 3, fit, rng, owner=owner) is None


def test_study_runs_and_reports_each_length():
    from tournaments.rating_study import run_population, run_weak_opponents, summarize

    runs = [run_population(8, 2, chooser, 0, (10, 40)) for chooser in ("random", "informative")]
    for rows in runs:
        assert [r["length"] for r in rows] == [10, 40]
        for r in rows:
            assert 0 <= r["covered"] <= 8 and r["fewest"] <= 1 <= r["most"] < 1.5
    summary = summarize(runs)
    assert 0 <= summary[1]["order_right"] <= 1 and 0.5 <= summary[1]["coverage"] <= 1
    weak = run_weak_opponents(2, 0, (10, 40))
    assert [r["length"] for r in weak] == [10, 40] and weak[1]["margin"] < weak[0]["margin"]


def test_a_bot_that_always_wins_and_a_ten_way_tie_stay_finite():
    results = Results()
    for _ in range(50):
        results.add({"champ": 1, "a": 2, "b": 3})
    results.add({f"p{i}": 1 for i in range(10)})  # 2^10 - 1 terms, every order equally likely
    fit = fit_ratings(results)
    assert all(math.isfinite(fit.rating(p)) and math.isfinite(fit.sd(p)) for p in results.ids)
    assert fit.rating("champ") > fit.rating("a") > fit.rating("b")
    assert fit.los("champ", "a") > 0.99
    # the tied ten learn nothing about each other: all at the same rating
    assert max(fit.rating(f"p{i}") for i in range(10)) - min(fit.rating(f"p{i}") for i in range(10)) < 1e-6


def test_chained_warm_refits_with_new_players_match_a_cold_fit():
    # each refit updates the previous inverse Hessian by the new rows (Woodbury); 30 in a row,
    # with players arriving, must still agree with a fit from scratch
    rng = random.Random(3)
    players = [f"b{i}" for i in range(40)]
    results = Results()
    for ranks in random_results(rng, players, 1500):
        results.add(ranks)
    fit = fit_ratings(results)
    for step in range(30):
        table = rng.sample([*players, f"new{step % 3}"], 4)
        results.add({p: i + 1 for i, p in enumerate(table)})
        fit = fit_ratings(results, start=fit)
    cold = fit_ratings(results)
    for p in results.ids:
        assert fit.rating(p) == pytest.approx(cold.rating(p), abs=1e-3)
        assert fit.sd(p) == pytest.approx(cold.sd(p), rel=0.01)
    assert float(np.max(np.abs(fit.cov - cold.cov))) < 0.01 * float(np.max(np.abs(cold.cov)))
