"""Ratings of ladders: the batch fit as the site stores and shows it, and the old fixed-K Elo.

The site rates a ladder with ``tournaments.rating.fit_ratings`` (a MAP
Bradley–Terry / Plackett–Luce fit of every rated result, one player per bot
version); this module turns a ladder's stored results into that fit's input
(``ladder_results``), a fit into the stored columns (``shown``), the stored
columns into what pages show (``Shown``: whole points, provisional) and into
the fit matchmaking draws tables from (``matchmaking_fit``). Pure: no Django,
no I/O. docs/ratings.md describes the model as the site uses it.

``rate_match`` / ``replay`` / ``pick_table`` are the fixed-K Elo the ladders used
before (kept for the history rows written then and for ``web.scale``'s bulk
seeding); nothing on the site rates with them now. Their arithmetic is
``decimal.Decimal`` in a fixed context.

>>> a, b = rate_match({"a": Rating(), "b": Rating()}, [("a", 1), ("b", 2)]).values()
>>> a.value, b.value
(Decimal('1516.00'), Decimal('1484.00'))
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext

import numpy as np

from tournaments import rating as fit_model

START = Decimal("1500")
#: rating points at stake in a 2-seat match; a k-seat match spreads K over k-1 pairs
K = Decimal("32")
#: Elo's logistic scale: 400 points difference = 10:1 expected odds
SCALE = Decimal("400")
#: below this many rated matches a rating is provisional
PROVISIONAL_MATCHES = 20
#: z for a two-sided 95% interval
Z95 = Decimal("1.96")
#: stored ratings and intervals keep two decimals
CENT = Decimal("0.01")
# Fixed precision and rounding: the same digits on every platform and Python.
CONTEXT = Context(prec=28, rounding=ROUND_HALF_EVEN)

#: a version whose 95% interval is wider than +/- this many points is shown as provisional
#: (the one place that says so; a version with no result has the prior's +/- 784)
PROVISIONAL_MARGIN = 100
#: ``recompute_ratings --check`` accepts stored ratings within this many points of a cold refit
#: (a warm-started refit converges to 1e-7 logits; the columns keep two decimals)
CHECK_TOLERANCE = Decimal("0.05")
#: ... and interval ends within CHECK_TOLERANCE plus this share of the half-width: the fit may keep an
#: inverse Hessian from up to tournaments.rating.KEEP_HESSIAN logits away from the optimum (both the
#: stored and the checking fit), which moves a standard deviation by up to about 1%
CHECK_INTERVAL_SHARE = Decimal("0.02")

#: matchmaking: the least random spread (rating points) added to opponent distances
MIN_SPREAD = Decimal(200)

BotId = Hashable


@dataclass(frozen=True)
class Rating:
    """A bot's stored rating on one ladder and how many rated matches it rests on."""

    value: Decimal = START
    matches: int = 0

    def __post_init__(self) -> None:
        value = self.value
        if isinstance(value, bool) or not isinstance(value, (Decimal, int, float, str)):
            raise ValueError(f"a rating is a number, got {value!r}")
        try:
            # str() first: a float's shortest repr, never its binary expansion.
            value = Decimal(str(value))
        except ArithmeticError:
            raise ValueError(f"a rating is a number, got {self.value!r}") from None
        if not value.is_finite():
            raise ValueError(f"a rating must be finite, got {self.value!r}")
        object.__setattr__(self, "value", value)
        if isinstance(self.matches, bool) or not isinstance(self.matches, int) or self.matches < 0:
            raise ValueError(f"matches must be a non-negative integer, got {self.matches!r}")

    @property
    def provisional(self) -> bool:
        """True while the rating rests on fewer than PROVISIONAL_MATCHES matches."""
        return self.matches < PROVISIONAL_MATCHES

    @property
    def margin(self) -> Decimal:
        """Half-width of the 95% interval: Z95 * 400 / (ln 10 * 0.5 * sqrt(matches + 1))."""
        with localcontext(CONTEXT):
            sigma = SCALE / (Decimal(10).ln() * Decimal("0.5") * Decimal(self.matches + 1).sqrt())
            return (Z95 * sigma).quantize(CENT)

    @property
    def interval(self) -> tuple[Decimal, Decimal]:
        """The 95% interval (low, high) around the rating."""
        return self.value - self.margin, self.value + self.margin


def expected(rating: Decimal, opponent: Decimal) -> Decimal:
    """Expected score of ``rating`` against ``opponent``: 1 / (1 + 10 ** ((opponent - rating) / 400))."""
    with localcontext(CONTEXT):
        return 1 / (1 + Decimal(10) ** ((opponent - rating) / SCALE))


def _as_rank(bot: BotId, rank) -> int:
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"rank of {bot!r} must be a positive integer, got {rank!r}")
    return rank


def rate_match(
    ratings: Mapping[BotId, Rating], ranking: Sequence[tuple[BotId, int]]
) -> dict[BotId, Rating]:
    """New ratings of the bots of one match from their pre-match ratings.

    ``ranking`` pairs each bot with its final rank (1 best, equal ranks are a
    tie). Every pair of bots is one result worth K/(k-1): 1 ahead, 1/2 tied, 0
    behind. All updates use the pre-match ratings. A bot missing from
    ``ratings`` starts at START.
    """
    try:
        ranking = [(bot, _as_rank(bot, rank)) for bot, rank in ranking]
        bots = [bot for bot, _ in ranking]
        distinct = len(set(bots))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a ranking is a list of (bot, rank) pairs: {exc}") from None
    if len(bots) < 2:
        raise ValueError(f"a rated match needs at least 2 bots, got {bots!r}")
    if distinct != len(bots):
        raise ValueError(f"a bot appears twice in one match: {bots!r}")
    before = {bot: ratings.get(bot, Rating()) for bot in bots}
    rank = dict(ranking)
    with localcontext(CONTEXT):
        weight = K / (len(bots) - 1)
        after: dict[BotId, Rating] = {}
        for bot in bots:
            change = Decimal(0)
            for other in bots:
                if other == bot:
                    continue
                score = 1 if rank[bot] < rank[other] else Decimal("0.5") if rank[bot] == rank[other] else 0
                change += weight * (score - expected(before[bot].value, before[other].value))
            value = (before[bot].value + change).quantize(CENT)
            after[bot] = Rating(value, before[bot].matches + 1)
    return after


def replay(matches: Iterable[Sequence[tuple[BotId, int]]]) -> dict[BotId, Rating]:
    """Ratings after rating ``matches`` (rankings, oldest first) from START."""
    ratings: dict[BotId, Rating] = {}
    for ranking in matches:
        ratings.update(rate_match(ratings, ranking))
    return ratings


def pick_table(
    anchor,
    others: Sequence,
    seats: int,
    rating: Callable[..., Rating],
    rng: random.Random,
    owner: Callable[..., Hashable] | None = None,
) -> list | None:
    """Matchmaking's table: ``anchor`` and the ``seats - 1`` of ``others`` closest to it in rating.

    Each distance gets a random spread of up to max(MIN_SPREAD, the anchor's
    margin): wider for uncertain ratings, so new bots meet a variety and settle
    fast. The table comes back in random seat order. ``rating(x)`` is x's Rating.
    With ``owner(x)`` (x's owner), no two seats of the table share an owner: each
    owner's closest candidate may sit, the others are passed over; None when
    fewer than ``seats`` owners are there to fill the table.
    """
    mine = rating(anchor)
    spread = max(MIN_SPREAD, mine.margin)
    with localcontext(CONTEXT):
        distance = [abs(rating(o).value - mine.value) + Decimal(rng.random()) * spread for o in others]
    nearest = []
    taken = {owner(anchor)} if owner is not None else set()
    for i in sorted(range(len(others)), key=distance.__getitem__):
        if len(nearest) == seats - 1:
            break
        if owner is not None:
            if owner(others[i]) in taken:
                continue
            taken.add(owner(others[i]))
        nearest.append(i)
    if len(nearest) < seats - 1:
        return None
    table = [anchor, *(others[i] for i in nearest)]
    rng.shuffle(table)
    return table


# --- the batch fit as the site uses it ------------------------------------------------------------


def _cents(value: float) -> Decimal:
    return Decimal(repr(float(value))).quantize(CENT, rounding=ROUND_HALF_EVEN)


#: the stored columns of a version without any result: the prior, at the mean
PRIOR_LOW = _cents(fit_model.MEAN_RATING - fit_model.Z95 * fit_model.PRIOR_SD_ELO)
PRIOR_HIGH = _cents(fit_model.MEAN_RATING + fit_model.Z95 * fit_model.PRIOR_SD_ELO)


def ladder_results(rows: Iterable[tuple[int, int, int, bool]]) -> fit_model.Results:
    """The fit's input from stored rows ``(match id, version id, rank, forfeited)`` in rating order.

    Rows of one match are consecutive (they are written together); each match
    with at least two rated seats is one result; a forfeiting seat ranks last.
    """
    results = fit_model.Results()
    current, ranks, forfeits = None, {}, []

    def flush():
        if len(ranks) >= 2:
            results.add(ranks, forfeits=forfeits)

    for match_id, version_id, rank, forfeited in rows:
        if match_id != current:
            flush()
            current, ranks, forfeits = match_id, {}, []
        ranks[version_id] = rank
        if forfeited:
            forfeits.append(version_id)
    flush()
    return results


@dataclass(frozen=True)
class Columns:
    """What a refit stores for one version: rating and 95% interval in cents, and its rated results."""

    rating: Decimal
    low: Decimal
    high: Decimal
    version_matches: int


def shown(fit: fit_model.Fit, version_id) -> Columns:
    """The stored columns of ``version_id`` from ``fit`` (the prior for a version it does not know)."""
    if version_id not in fit:
        return Columns(START, PRIOR_LOW, PRIOR_HIGH, 0)
    r = fit[version_id]
    return Columns(_cents(r.rating), _cents(r.low), _cents(r.high), r.games)


@dataclass(frozen=True)
class Shown:
    """A rating as pages and the API show it: whole points, +/- the 95% half-width, provisional."""

    rating: Decimal
    low: Decimal
    high: Decimal

    @property
    def value(self) -> int:
        return int(self.rating.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))

    @property
    def margin(self) -> int:
        return int(((self.high - self.low) / 2).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))

    @property
    def low_points(self) -> int:
        return int(self.low.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))

    @property
    def high_points(self) -> int:
        return int(self.high.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))

    @property
    def interval(self) -> tuple[int, int]:
        """The 95% interval in whole points."""
        return self.low_points, self.high_points

    @property
    def provisional(self) -> bool:
        """True while the 95% interval is wider than +/- PROVISIONAL_MARGIN."""
        return (self.high - self.low) / 2 > PROVISIONAL_MARGIN


def matchmaking_fit(players: Mapping[Hashable, tuple[Decimal, Decimal, Decimal]]) -> fit_model.Fit:
    """A Fit built from stored columns {player: (rating, low, high)}, for ``pick_table_informative``.

    The strengths are the stored ratings and the covariance is diagonal, each
    variance the stored interval's ((high - low) / (2 * 1.96))^2: matchmaking
    reads columns (no refit, no Hessian on the page or under a lock); the
    covariances between players that a full fit has are left out. A player not
    in ``players`` is unknown to the fit and has the prior.
    """
    ids = list(players)
    theta = np.array([(float(players[p][0]) - fit_model.MEAN_RATING) / fit_model.ELO_PER_LOGIT for p in ids])
    sd = np.array(
        [float(players[p][2] - players[p][1]) / (2 * fit_model.Z95) / fit_model.ELO_PER_LOGIT for p in ids]
    )
    cov = np.diag(np.maximum(sd, 1e-6) ** 2) if ids else np.zeros((0, 0))
    return fit_model.Fit(
        ids, theta if ids else np.zeros(0), cov, [0] * len(ids), [0.0] * len(ids), None, 0, fit_model.PRIOR_SD_ELO
    )


def los_percent(los: float | None) -> int | None:
    """A likelihood of superiority as a whole percent (None stays None)."""
    return None if los is None or not math.isfinite(los) else round(100 * los)
