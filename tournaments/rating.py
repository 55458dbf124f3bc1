"""Batch ratings: a maximum-a-posteriori Plackett–Luce fit of every result, on the Elo scale.

The model (the study of it: docs/ratings.md, "Batch ratings: the study"): each player ``i`` has a strength
``theta_i`` (in logits); in a result of k seats the winner is chosen from all
seats with probability ``exp(theta_w) / sum exp(theta_j)``, then second place
from the rest, and so on (Plackett–Luce; with two seats this is Bradley–Terry,
``P(a beats b) = 1 / (1 + exp(theta_b - theta_a))``). A weak Gaussian prior
``theta_i ~ N(0, PRIOR_SD_ELO / ELO_PER_LOGIT)`` makes the fit unique and starts
a new player at the mean. Ratings are ``1500 + ELO_PER_LOGIT * (theta_i - mean)``
(400 points = 10:1 odds, as Elo) or relative to a named reference player.

Ties: a group of m players sharing a place counts as the **geometric mean of
the Plackett–Luce likelihood over the m! orders** in which they could have
finished. With two seats a draw is then ``sqrt(p (1 - p))``, half a win and half
a loss (the convention of Elo, BayesElo's draw-free mode and Ordo); with k seats
the tied players beat everyone below them and nobody learns anything about
their order. A forfeiting player counts as a last place (tied with any other
forfeiter), whatever rank the caller gave it.

Uncertainty: the covariance of the strengths is the inverse of the negative
Hessian of the log-posterior at the optimum (the Laplace approximation); a
rating's 95% interval is ``rating +/- 1.96 sd`` and the likelihood of
superiority is ``Phi((theta_a - theta_b) / sqrt(v_a + v_b - 2 cov_ab))``.

Pure: no Django, no I/O. numpy does the linear algebra (a dense Newton step and
the full inverse of a 1,000 x 1,000 Hessian take milliseconds; in pure Python
they take tens of seconds).

>>> results = Results()
>>> for _ in range(3):
...     results.add({"alice": 1, "bob": 2})
>>> results.add({"alice": 2, "bob": 1})
>>> fit = fit_ratings(results)
>>> round(fit.rating("alice")), round(fit.rating("bob"))
(1585, 1415)
>>> round(fit.los("alice", "bob"), 2)
0.82
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

import numpy as np

from engine.rules import BOUNDS

#: rating points per logit of strength: 400 points are a factor 10 in the odds
ELO_PER_LOGIT = 400 / math.log(10)
#: the rating of the population's mean (or of the reference player)
MEAN_RATING = 1500.0
#: standard deviation of the prior on each rating: weak (a new player's interval is +/- 784)
PRIOR_SD_ELO = 400.0
#: two-sided 95% normal quantile
Z95 = 1.959963984540054
#: a Newton step's inverse Hessian serves as the covariance when the strengths moved less than
#: this (logits) since: a term's p (1 - p) changes by at most that share of itself
KEEP_HESSIAN = 0.02
#: informative tables: a candidate this many games (or this share of the mean) above the
#: candidates' mean number of games is drawn only when no one else can sit
FAIR_SLACK = 2
FAIR_SHARE = 0.1
#: informative tables: weight of a result's fall in the variance of its players' difference
#: beside its fall in the chance of a misordered pair of neighbours
VARIANCE_WEIGHT = 0.01
#: a result seats this many players: a game's seat bounds (RULES.md section 2), which the engine owns
MIN_SEATS, MAX_SEATS = BOUNDS["players"]

PlayerId = Hashable
#: the players of one result (a mapping's key type is fixed: str ids are not Hashable ids)
P = TypeVar("P", bound=Hashable)
#: table size -> (rows of player indexes, one weight per row)
Blocks = dict[int, tuple[np.ndarray, np.ndarray]]


class RatingInputError(ValueError):
    """A result the fit cannot take (too few players, bad ranks, a player twice)."""


def _rank_value(player: PlayerId, rank: object) -> int:
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise RatingInputError(f"rank of {player!r} must be a positive integer, got {rank!r}")
    return rank


class Results:
    """All results of a population, stored compactly for the fit.

    Players get dense indexes in the order first seen. A result is compiled on
    ``add`` into the terms of its log-likelihood: a linear coefficient per
    player and, per table size s, flat rows of s player indexes with a weight
    (each row contributes ``-weight * log(sum of exp(theta) over the row)``).
    A 2-seat result without a tie is one row of 2; a k-seat ranking k - 1 rows.
    The ladder app feeds rows in the order they were rated; ``add`` is
    O(k) per result (O(2^m) for an m-way tie, rare), and the fit turns each size's
    rows into one numpy array.
    """

    def __init__(self) -> None:
        self.ids: list[PlayerId] = []
        self.index: dict[PlayerId, int] = {}
        self.games: list[int] = []  # results per player
        self.points: list[float] = []  # pairwise score per result: (beaten + tied / 2) / (k - 1)
        self.count = 0
        self._linear: list[float] = []
        self._rows: dict[int, list[int]] = {}
        self._weights: dict[int, list[float]] = {}
        self._arrays: Blocks = {}

    def __len__(self) -> int:
        return self.count

    def _player(self, player: PlayerId) -> int:
        i = self.index.get(player)
        if i is None:
            i = self.index[player] = len(self.ids)
            self.ids.append(player)
            self.games.append(0)
            self.points.append(0.0)
            self._linear.append(0.0)
        return i

    def add(
        self,
        ranks: Mapping[P, int] | Iterable[tuple[P, int]],
        forfeits: Iterable[PlayerId] = (),
        weight: float = 1.0,
    ) -> None:
        """Add one result: each player's final rank (1 best, equal ranks tie).

        Every player in ``forfeits`` ranks last, tied with the other forfeiters,
        below every player who did not forfeit. ``weight`` counts the result
        that many times (e.g. 2 for a result seen twice).
        """
        pairs = list(ranks.items()) if isinstance(ranks, Mapping) else list(ranks)
        try:
            players = [p for p, _ in pairs]
            places = {p: _rank_value(p, r) for p, r in pairs}
            hash(tuple(players))
        except (TypeError, ValueError) as exc:
            if isinstance(exc, RatingInputError):
                raise
            raise RatingInputError(f"a result is a mapping of player to rank: {exc}") from None
        if not MIN_SEATS <= len(players) <= MAX_SEATS:
            raise RatingInputError(f"a result needs {MIN_SEATS} to {MAX_SEATS} players, got {len(players)}")
        if len(places) != len(players):
            raise RatingInputError(f"a player appears twice in one result: {players!r}")
        forfeited = set()
        for p in forfeits:
            if p not in places:
                raise RatingInputError(f"forfeit of {p!r}, who is not in the result")
            forfeited.add(p)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not (weight > 0 and math.isfinite(weight)):
            raise RatingInputError(f"weight must be a positive number, got {weight!r}")
        if forfeited:
            last = max((r for p, r in places.items() if p not in forfeited), default=0) + 1
            for p in forfeited:
                places[p] = last
        idx = {p: self._player(p) for p in players}
        k = len(players)
        groups: dict[int, list[int]] = {}
        for p in players:
            groups.setdefault(places[p], []).append(idx[p])
        remaining = set(idx.values())
        below = k
        for rank in sorted(groups):
            group = groups[rank]
            below -= len(group)
            for i in group:
                self.games[i] += 1
                self.points[i] += weight * (below + (len(group) - 1) / 2) / (k - 1)
            self._add_group(group, remaining, weight)
            remaining.difference_update(group)
        self.count += 1

    def _add_group(self, group: list[int], remaining: set[int], weight: float) -> None:
        # The geometric mean over the orders of the tied group: the stage after
        # the first s of them are chosen has the rest of `remaining` to choose
        # from, and a given set of s comes first in a share 1 / C(m, s) of orders.
        m = len(group)
        for i in group:
            self._linear[i] += weight
        for s in range(m):
            share = weight / math.comb(m, s)
            for chosen in combinations(group, s):
                row = sorted(remaining.difference(chosen))
                if len(row) == 1:
                    self._linear[row[0]] -= share  # log(exp(theta)) = theta
                    continue
                self._rows.setdefault(len(row), []).extend(row)
                self._weights.setdefault(len(row), []).append(share)

    def arrays(self) -> Blocks:
        """Per table size s: (rows as an (r, s) int array, weights as an (r,) array).

        Rows added since the last call are converted and appended; the rest is kept.
        """
        for size, flat in self._rows.items():
            have = self._arrays.get(size)
            done = 0 if have is None else len(have[1])
            total = len(self._weights[size])
            if done == total:
                continue
            rows = np.asarray(flat[done * size :], dtype=np.intp).reshape(-1, size)
            weights = np.asarray(self._weights[size][done:], dtype=float)
            if have is not None:
                rows, weights = np.concatenate([have[0], rows]), np.concatenate([have[1], weights])
            self._arrays[size] = (rows, weights)
        return self._arrays

    def linear(self) -> np.ndarray:
        return np.asarray(self._linear, dtype=float)


def _value_grad(
    theta: np.ndarray, linear: np.ndarray, blocks: Blocks, precision: float, n: int
) -> tuple[float, np.ndarray, dict[int, np.ndarray]]:
    """Value and gradient of the log-posterior, and the softmax of every row (for the Hessian)."""
    value = float(linear @ theta) - 0.5 * precision * float(theta @ theta)
    grad = linear - precision * theta
    probs: dict[int, np.ndarray] = {}
    for size, (rows, weights) in blocks.items():
        x = theta[rows]
        top = x.max(axis=1, keepdims=True)
        e = np.exp(x - top)
        z = e.sum(axis=1, keepdims=True)
        p = e / z
        probs[size] = p
        value -= float(weights @ (np.log(z[:, 0]) + top[:, 0]))
        grad -= np.bincount(rows.ravel(), (weights[:, None] * p).ravel(), minlength=n)
    return value, grad, probs


def _neg_hessian(blocks: Blocks, probs: dict[int, np.ndarray], precision: float, n: int) -> np.ndarray:
    """Negative Hessian: sum over rows of weight * (diag(p) - p p') plus the prior's precision."""
    hess = np.zeros((n, n))
    for size, (rows, weights) in blocks.items():
        p = probs[size]
        wp = weights[:, None] * p
        hess.flat[:: n + 1] += np.bincount(rows.ravel(), wp.ravel(), minlength=n)
        pair = (rows[:, :, None] * n + rows[:, None, :]).ravel()
        hess -= np.bincount(pair, (wp[:, :, None] * p[:, None, :]).ravel(), minlength=n * n).reshape(n, n)
    hess.flat[:: n + 1] += precision
    return hess


@dataclass(frozen=True)
class PlayerRating:
    """One player's fitted rating: Elo-scale value, 95% interval, standard deviation, results."""

    rating: float
    low: float
    high: float
    sd: float
    games: int
    score: float  # mean pairwise score per result, 0..1

    @property
    def margin(self) -> float:
        return Z95 * self.sd


class Fit:
    """The optimum of the log-posterior and its covariance, per player id."""

    def __init__(
        self,
        ids: Iterable[PlayerId],
        theta: np.ndarray,
        cov: np.ndarray,
        games: Iterable[int],
        points: Iterable[float],
        anchor: PlayerId | None,
        iterations: int,
        prior_sd: float,
    ) -> None:
        self.ids: tuple[PlayerId, ...] = tuple(ids)
        self.index = {p: i for i, p in enumerate(self.ids)}
        self.theta = theta
        self.cov = cov
        self.anchor = anchor
        self.iterations = iterations
        self.prior_sd = prior_sd
        n = len(self.ids)
        if anchor is None:
            # relative to the mean: a = e_i - 1/n, var = a' C a
            mean_row = cov.mean(axis=1) if n else np.zeros(0)
            self._zero = float(theta.mean()) if n else 0.0
            self._var = np.diag(cov) - 2 * mean_row + float(mean_row.mean()) if n else np.zeros(0)
        else:
            r = self.index[anchor]
            self._zero = float(theta[r])
            self._var = np.diag(cov) - 2 * cov[:, r] + cov[r, r]
        self._var = np.maximum(self._var, 0.0)
        self._games = list(games)
        self._points = list(points)
        #: what a warm start from this fit needs (results, rows per size, precision, Hessian point)
        self._store: tuple[Results, dict[int, int], float, np.ndarray] | None = None
        #: ``_order_information`` of this fit, once computed
        self._order_cache: tuple[np.ndarray, np.ndarray] | None = None
        self._norms_cache: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def __contains__(self, player: PlayerId) -> bool:
        return player in self.index

    def rating(self, player: PlayerId) -> float:
        """Elo-scale rating; a player without results is at the mean (the prior)."""
        i = self.index.get(player)
        if i is None:
            return MEAN_RATING
        return MEAN_RATING + ELO_PER_LOGIT * (float(self.theta[i]) - self._zero)

    def sd(self, player: PlayerId) -> float:
        """Standard deviation of the rating (points), relative to the anchor."""
        i = self.index.get(player)
        if i is None:
            return self.prior_sd
        return ELO_PER_LOGIT * math.sqrt(float(self._var[i]))

    def __getitem__(self, player: PlayerId) -> PlayerRating:
        r, sd = self.rating(player), self.sd(player)
        i = self.index.get(player)
        games = self._games[i] if i is not None else 0
        score = self._points[i] / games if i is not None and games else 0.0
        return PlayerRating(r, r - Z95 * sd, r + Z95 * sd, sd, games, score)

    def _diff(self, a: PlayerId, b: PlayerId) -> tuple[float, float]:
        """Mean and variance (logits) of theta_a - theta_b; unknown players have the prior."""
        prior = (self.prior_sd / ELO_PER_LOGIT) ** 2
        ia, ib = self.index.get(a), self.index.get(b)
        ta = float(self.theta[ia]) if ia is not None else 0.0
        tb = float(self.theta[ib]) if ib is not None else 0.0
        va = float(self.cov[ia, ia]) if ia is not None else prior
        vb = float(self.cov[ib, ib]) if ib is not None else prior
        cab = float(self.cov[ia, ib]) if ia is not None and ib is not None and a != b else 0.0
        if a == b:
            return 0.0, 0.0
        return ta - tb, max(va + vb - 2 * cab, 0.0)

    def los(self, a: PlayerId, b: PlayerId) -> float:
        """Likelihood of superiority: the posterior probability that a is stronger than b."""
        mean, var = self._diff(a, b)
        if var <= 0:
            return 0.5 if mean == 0 else float(mean > 0)
        return 0.5 * math.erfc(-mean / math.sqrt(2 * var))

    def expected(self, a: PlayerId, b: PlayerId) -> float:
        """Probability that a finishes ahead of b in a 2-seat result, at the fitted strengths."""
        mean, _ = self._diff(a, b)
        return 1 / (1 + math.exp(-mean))

    def ranking(self) -> list[PlayerId]:
        """Player ids, best rating first (ties by first appearance)."""
        return sorted(self.ids, key=lambda p: -self.theta[self.index[p]])

    def ratings(self) -> dict[PlayerId, PlayerRating]:
        return {p: self[p] for p in self.ids}


def fit_ratings(
    results: Results,
    *,
    prior_sd: float = PRIOR_SD_ELO,
    start: Fit | Mapping[PlayerId, float] | None = None,
    anchor: PlayerId | None = None,
    tol: float = 1e-7,
    max_iter: int = 100,
) -> Fit:
    """The maximum-a-posteriori ratings of ``results`` and their covariance.

    Newton's method with a backtracking line search on the (strictly concave)
    log-posterior, from ``start`` (a previous Fit or {player: rating}; new
    players start at the mean), until no strength moves by more than ``tol``
    logits. ``anchor`` names the reference player rated MEAN_RATING; by default
    the mean of all players is.
    """
    if not (prior_sd > 0 and math.isfinite(prior_sd)):
        raise ValueError(f"prior_sd must be a positive number of rating points, got {prior_sd!r}")
    n = len(results.ids)
    if anchor is not None and anchor not in results.index:
        raise ValueError(f"the anchor {anchor!r} has no results")
    precision = (ELO_PER_LOGIT / prior_sd) ** 2
    theta = np.zeros(n)
    if isinstance(start, Fit):
        for p, i in results.index.items():
            j = start.index.get(p)
            if j is not None:
                theta[i] = start.theta[j]
    elif start is not None:
        for p, i in results.index.items():
            if p in start:
                theta[i] = (float(start[p]) - MEAN_RATING) / ELO_PER_LOGIT
    linear, blocks = results.linear(), results.arrays()
    if n == 0:
        return Fit(results.ids, theta, np.zeros((0, 0)), results.games, results.points, anchor, 0, prior_sd)
    value, grad, probs = _value_grad(theta, linear, blocks, precision, n)
    # Newton's method, reusing each inverse Hessian for a few steps while they
    # shrink fast. A warm start from a fit of the same store (rows only added
    # since) updates that fit's inverse Hessian by the new rows (Woodbury)
    # instead of building and inverting a new one.
    cov, at = _updated_inverse(start, results, blocks, precision) if isinstance(start, Fit) else (None, None)
    iterations, previous = 0, math.inf
    while iterations < max_iter:
        if cov is None:
            cov, at, previous = np.linalg.inv(_neg_hessian(blocks, probs, precision, n)), theta.copy(), math.inf
        step = cov @ grad
        size = 1.0
        while True:
            trial = theta + size * step
            new_value, new_grad, new_probs = _value_grad(trial, linear, blocks, precision, n)
            if new_value >= value - 1e-12 * abs(value) or size < 1e-6:
                break
            size /= 2
        iterations += 1
        theta, value, grad, probs = trial, new_value, new_grad, new_probs
        change = float(np.max(np.abs(size * step)))
        if change < tol:
            break
        if size < 1 or change > 0.25 * previous:
            cov = None  # slow progress: a fresh Hessian
        previous = change
    if cov is None or at is None or float(np.max(np.abs(theta - at))) > KEEP_HESSIAN:
        # the covariance at the optimum
        cov, at = np.linalg.inv(_neg_hessian(blocks, probs, precision, n)), theta.copy()
    fit = Fit(results.ids, theta, cov, results.games, results.points, anchor, iterations, prior_sd)
    # what a later warm start needs to update this inverse instead of rebuilding it
    fit._store = (results, {size: len(w) for size, (_, w) in blocks.items()}, precision, at)
    return fit


def _updated_inverse(
    start: Fit, results: Results, blocks: Blocks, precision: float
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """The inverse negative Hessian of ``results`` at ``start``'s Hessian point, from ``start``'s.

    Only when ``start`` was fitted on this very store with the same prior and
    rows were only appended since: new players get the prior's block, new rows
    A = sum w (diag(p) - p p') on the players S they touch, and
    (H + P A P')^-1 = C - C P A (I + P' C P A)^-1 P' C. Otherwise (None, None).
    """
    store = start._store
    if store is None or store[0] is not results or store[2] != precision:
        return None, None
    _, counts, _, old_at = store
    n, m = len(results.ids), len(start.ids)
    if any(counts.get(size, 0) > len(w) for size, (_, w) in blocks.items()) or set(counts) - set(blocks):
        return None, None
    cov = np.zeros((n, n))
    cov[:m, :m] = start.cov
    cov.flat[m * (n + 1) :: n + 1] = 1 / precision
    at = np.zeros(n)
    at[:m] = old_at
    touched: dict[int, int] = {}
    parts = []
    for size, (rows, weights) in blocks.items():
        new_rows, new_weights = rows[counts.get(size, 0) :], weights[counts.get(size, 0) :]
        if len(new_weights):
            parts.append((new_rows, new_weights))
            for i in new_rows.ravel():
                touched.setdefault(int(i), len(touched))
    if not touched:
        return cov, at
    if len(touched) > 200:  # many new rows: building the Hessian is as cheap
        return None, None
    players = np.fromiter(touched, dtype=np.intp)
    a = np.zeros((len(players), len(players)))
    for rows, weights in parts:
        x = at[rows]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        local = np.vectorize(touched.__getitem__, otypes=[np.intp])(rows)
        for r in range(len(weights)):
            idx = local[r]
            a[np.ix_(idx, idx)] += weights[r] * (np.diag(p[r]) - np.outer(p[r], p[r]))
    cs = cov[:, players]
    k = cs @ a
    cov = cov - k @ np.linalg.solve(np.eye(len(players)) + cs[players, :] @ a, cs.T)
    return cov, at


def _order_information(fit: Fit) -> tuple[np.ndarray, np.ndarray]:
    """What the table choice needs from a fit, computed once per fit.

    For each pair of neighbours (k, k+1) of the fitted order, ``weight`` is the
    derivative of the probability that they are misordered, Phi(-|mu| / s),
    with respect to the variance s^2 of their difference; ``rows`` holds
    (e_k - e_{k+1})' Sigma, so that a result between a and b (information
    h = p (1 - p) along u = e_a - e_b) lowers that variance by
    h ((e_k - e_{k+1})' Sigma u)^2 / (1 + h u' Sigma u).
    """
    cached = fit._order_cache
    if cached is not None:
        return cached
    order = np.argsort(-fit.theta, kind="stable")
    hi, lo = order[:-1], order[1:]
    cov = fit.cov
    var = np.maximum(cov[hi, hi] + cov[lo, lo] - 2 * cov[hi, lo], 1e-12)
    z = np.abs(fit.theta[hi] - fit.theta[lo]) / np.sqrt(var)
    weight = np.exp(-z * z / 2) * z / (2 * var) / math.sqrt(2 * math.pi)
    rows = cov[hi, :] - cov[lo, :]
    fit._order_cache = (weight, rows)
    return weight, rows


def table_information(a: PlayerId, b: PlayerId, fit: Fit) -> float:
    """The information-seeking score of a result between a and b (both may be unknown to the fit).

    The expected fall, from one more result between them, of the summed
    probabilities that neighbours of the fitted order are misordered (see
    ``_order_information``), plus VARIANCE_WEIGHT times the fall of the variance
    of their difference, h v^2 / (1 + h v) (large for a new or provisional
    player, negligible for settled ones).
    """
    return float(information_against(a, [b], fit)[0])


def information_against(a: PlayerId, others: Sequence[PlayerId], fit: Fit) -> np.ndarray:
    """``table_information(a, o, fit)`` for every ``o`` of ``others`` at once: one numpy
    expression over the pool rather than a Python call per pair (the one place of the score).

    The order part, sum_k w_k (R[k, a] - R[k, o])^2, is expanded as
    q_a - 2 (w * R[:, a]) . R[:, o] + q_o with q = sum_k w_k R[k, :]^2 (``_order_norms``).
    """
    m = len(others)
    idx = np.fromiter((fit.index.get(o, -1) for o in others), dtype=np.intp, count=m)
    known = idx >= 0
    safe = np.where(known, idx, 0)
    prior = (fit.prior_sd / ELO_PER_LOGIT) ** 2
    ia = fit.index.get(a)
    n = len(fit.ids)
    tb = np.where(known, fit.theta[safe], 0.0) if n else np.zeros(m)
    vb = np.where(known, fit.cov[safe, safe], prior) if n else np.full(m, prior)
    ta = float(fit.theta[ia]) if ia is not None else 0.0
    va = float(fit.cov[ia, ia]) if ia is not None else prior
    cab = np.where(known, fit.cov[ia, safe], 0.0) if ia is not None else np.zeros(m)
    same = np.fromiter((o == a for o in others), dtype=bool, count=m)
    mean = np.where(same, 0.0, ta - tb)
    var = np.where(same, 0.0, np.maximum(va + vb - 2 * cab, 0.0))
    p = 1 / (1 + np.exp(-mean))
    h = p * (1 - p)
    score = VARIANCE_WEIGHT * h * var * var / (1 + h * var)
    if n >= 2:
        weight, rows, q = _order_norms(fit)
        if ia is not None:
            cross = ((weight * rows[:, ia]) @ rows)[safe]
            vv = np.where(known, q[ia] - 2 * cross + q[safe], q[ia])
        else:
            vv = np.where(known, q[safe], 0.0)
        vv = np.where(same, 0.0, np.maximum(vv, 0.0))
        score = score + h * vv / (1 + h * var)
    return score


def _order_norms(fit: Fit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_order_information`` with q_j = sum_k weight_k rows[k, j]^2, computed once per fit."""
    cached = fit._norms_cache
    if cached is None:
        weight, rows = _order_information(fit)
        cached = fit._norms_cache = (weight, rows, weight @ (rows * rows))
    return cached


def pick_table_informative(
    anchor: P,
    others: Sequence[P],
    seats: int,
    fit: Fit,
    rng: random.Random,
    games: Callable[[P], int] | None = None,
    owner: Callable[[P], Hashable] | None = None,
) -> list[P] | None:
    """A table for ``anchor`` (the player who waited longest) chosen for information, fairly.

    Each further seat goes to a candidate drawn with probability proportional
    to the square of its ``table_information`` with the players already seated
    (summed over them): results that would most lower the chance that the
    fitted order of neighbours is wrong, and results of new or uncertain
    players, are drawn most; drawing rather than taking the best keeps a
    spread of opponents. A fairness factor ``1 / (1 + max(0, games - mean
    games))`` (``games(x)``: results so far; nearly 0 beyond FAIR_SLACK games
    or FAIR_SHARE of the mean above it) keeps anyone from being drawn beyond
    their share. With ``owner``, no two seats share an owner; None when no
    table can be filled. The table comes back in random seat order. The scores
    of a seated player against the whole pool are one ``information_against``.
    """
    if seats < 2:
        raise ValueError(f"a table needs at least 2 seats, got {seats}")
    table = [anchor]
    pool = [o for o in others if o != anchor]
    if games is not None and pool:
        counts = np.array([games(o) for o in pool], dtype=float)
        mean = float(counts.mean())
        slack = max(FAIR_SLACK, FAIR_SHARE * mean)
        # beyond the slack a candidate sits only when no one else can
        fair = 1 / (1 + np.maximum(0.0, counts - mean)) * np.where(counts - mean <= slack, 1.0, 1e-9)
    else:
        fair = np.ones(len(pool))
    open_ = np.ones(len(pool), dtype=bool)  # not seated, not of a seated owner
    owners = [owner(o) for o in pool] if owner is not None else []
    info = np.zeros(len(pool))

    def seat(player: P) -> None:
        nonlocal info
        info = info + information_against(player, pool, fit)
        if owner is not None:
            mine = owner(player)
            open_[[i for i, o in enumerate(owners) if o == mine]] = False

    seat(anchor)
    while len(table) < seats:
        weights = fair * (info * info + 1e-30)
        live = np.flatnonzero(open_ & (weights > 0))
        if not len(live):
            return None
        i = int(rng.choices(live.tolist(), weights=weights[live].tolist())[0])
        open_[i] = False
        table.append(pool[i])
        seat(pool[i])
    rng.shuffle(table)
    return table
