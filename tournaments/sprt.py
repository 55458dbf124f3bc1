"""Sequential probability ratio test on game pairs, with pentanomial statistics (as fishtest).

Two bots play pairs of games: the same deal twice, seats swapped. A pair's
score for NEW is 0, 1/2, 1, 3/2 or 2 points; ``counts`` holds how many pairs
ended with each (the *pentanomial*, worst first). Pairs are independent where
single games of one deal are not, so the pair is the unit of the test.

The test (the generalised SPRT of fishtest, Michel Van den Bergh's
"pentanomial" formulation): H0 says NEW's expected score per game is
``s0 = L(elo0)``, H1 says ``s1 = L(elo1)``, with the logistic Elo curve
``L(e) = 1 / (1 + 10^(-e / 400))``. For each hypothesis the distribution q of
the five pair scores ``a = (0, 1/4, 1/2, 3/4, 1)`` (per game) nearest the
observed frequencies p (maximum likelihood: maximise ``sum p_i log q_i``
subject to ``sum q_i a_i = s``) is, by a Lagrange multiplier,

    q_i = p_i / (1 + x (a_i - s)),  with x the root of  sum p_i (a_i - s) / (1 + x (a_i - s)) = 0

(x is unique in the interval where every ``1 + x (a_i - s)`` is positive: the
sum decreases in x). The log-likelihood ratio after N pairs is

    LLR = N * sum p_i log(q1_i / q0_i)

Empty cells are given a count of 0.001 first (fishtest's regularisation), so
every q is positive. Wald's bounds: accept H1 when ``LLR >= log((1 - beta) / alpha)``,
H0 when ``LLR <= log(beta / (1 - alpha))``; alpha and beta are the rates of the
two errors.

The Elo estimate is ``-400 log10(1 / m - 1)`` of the mean score per game m of
the pairs, its 95% interval that of ``m +/- 1.96 sd / sqrt(N)`` with sd the
standard deviation of a pair's score per game; one pseudo-pair of 1 point is
added first (``PSEUDO_PAIRS``, like BayesElo's virtual draws) so a perfect run
stays finite, and scores are clamped inside (0, 1).

Pure: no Django, no I/O.

>>> round(llr([0, 0, 0, 0, 10], 0, 10), 3)
0.284
>>> wald_bounds(0.05, 0.05)
(-2.9444389791664403, 2.9444389791664403)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: a pair's score per game for each pentanomial cell: 0, 1/2, 1, 3/2, 2 points of 2
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: the count given to an empty cell before the LLR (fishtest's regularisation)
EMPTY_CELL = 1e-3
#: the Elo estimate adds this many pairs of 1 point (one game each way), as BayesElo and
#: Ordo add virtual draws: finite estimates for a perfect score
PSEUDO_PAIRS = 1.0
#: scores for the Elo estimate are kept inside (CLAMP, 1 - CLAMP)
CLAMP = 1e-6
Z95 = 1.959963984540054

H1, H0, INCONCLUSIVE = "H1", "H0", "inconclusive"


def logistic_score(elo: float) -> float:
    """Expected score per game at an Elo difference: 1 / (1 + 10^(-elo / 400))."""
    return 1 / (1 + 10 ** (-elo / 400))


def score_elo(score: float) -> float:
    """The Elo difference of an expected score per game (clamped inside (0, 1))."""
    score = min(max(score, CLAMP), 1 - CLAMP)
    return -400 * math.log10(1 / score - 1)


def wald_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 at or below log(beta / (1 - alpha)), H1 at or above log((1 - beta) / alpha)."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not (isinstance(value, (int, float)) and 0 < value < 0.5):
            raise ValueError(f"{name} must be between 0 and 0.5, got {value!r}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def _check_counts(counts: Sequence[int]) -> list[float]:
    if len(counts) != len(PAIR_SCORES):
        raise ValueError(f"a pentanomial has 5 counts, got {len(counts)}")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not (c >= 0 and math.isfinite(c)):
            raise ValueError(f"counts must be non-negative numbers, got {list(counts)!r}")
    return [float(c) for c in counts]


def _mle(probs: Sequence[float], s: float) -> list[float]:
    """The distribution nearest ``probs`` (maximum likelihood) whose mean pair score is ``s``."""
    shifted = [a - s for a in PAIR_SCORES]
    # 1 + x (a_i - s) > 0 for every cell: x in (-1 / max(a - s), -1 / min(a - s))
    low, high = -1 / max(shifted), -1 / min(shifted)

    def f(x: float) -> float:
        return sum(p * d / (1 + x * d) for p, d in zip(probs, shifted, strict=True))

    lo, hi = low, high
    for _ in range(200):  # bisection: f decreases from +inf to -inf over (low, high)
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2
    return [p / (1 + x * d) for p, d in zip(probs, shifted, strict=True)]


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) for pentanomial ``counts``."""
    cells = [c if c > 0 else EMPTY_CELL for c in _check_counts(counts)]
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, got {elo0!r} and {elo1!r}")
    n = sum(cells)
    probs = [c / n for c in cells]
    q0, q1 = _mle(probs, logistic_score(elo0)), _mle(probs, logistic_score(elo1))
    return n * sum(p * math.log(b / a) for p, a, b in zip(probs, q0, q1, strict=True))


def elo_estimate(counts: Sequence[int], pseudo: float = PSEUDO_PAIRS) -> tuple[float, float, float]:
    """(elo, low, high): the Elo difference of the mean score per game and its 95% interval.

    ``pseudo`` pairs of 1 point (one game each way) are added first, so a
    perfect run gives a large, finite estimate with an interval, not infinity.
    """
    cells = _check_counts(counts)
    cells[2] += pseudo
    n = sum(cells)
    if n == 0:
        return 0.0, score_elo(0), score_elo(1)
    mean = sum(c * a for c, a in zip(cells, PAIR_SCORES, strict=True)) / n
    var = sum(c * (a - mean) ** 2 for c, a in zip(cells, PAIR_SCORES, strict=True)) / n
    half = Z95 * math.sqrt(var / n)
    return score_elo(mean), score_elo(mean - half), score_elo(mean + half)


def pair_cell(points: float) -> int:
    """The pentanomial cell of a pair in which NEW scored ``points`` (0, 0.5, 1, 1.5 or 2)."""
    cell = points * 2
    if cell not in (0, 1, 2, 3, 4):
        raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, got {points!r}")
    return int(cell)


@dataclass
class Sprt:
    """A running test: add pair results, read the LLR and the verdict."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, got {self.elo0!r} and {self.elo1!r}")
        self.lower, self.upper = wald_bounds(self.alpha, self.beta)
        self.counts = [0, 0, 0, 0, 0]

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add(self, points: float) -> None:
        """One pair in which NEW scored ``points`` of 2."""
        self.counts[pair_cell(points)] += 1

    @property
    def llr(self) -> float:
        return llr(self.counts, self.elo0, self.elo1) if self.pairs else 0.0

    @property
    def verdict(self) -> str | None:
        """H1 or H0 once a bound is reached, else None (keep playing)."""
        value = self.llr
        if value >= self.upper:
            return H1
        if value <= self.lower:
            return H0
        return None

    @property
    def score(self) -> float:
        """NEW's mean score per game so far (0.5 before any pair)."""
        if not self.pairs:
            return 0.5
        return sum(c * a for c, a in zip(self.counts, PAIR_SCORES, strict=True)) / self.pairs
