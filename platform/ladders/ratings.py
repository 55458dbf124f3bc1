"""Elo ratings for ladders: one update per match, exact and reproducible.

All arithmetic is ``decimal.Decimal`` in a fixed context, so a rating
recomputed from the match history on any machine equals the stored one to the
cent. Pure: no Django, no I/O (the ``ladders`` app stores what this returns).
Formulas and constants: docs/ratings.md.

>>> a, b = rate_match({"a": Rating(), "b": Rating()}, [("a", 1), ("b", 2)]).values()
>>> a.value, b.value
(Decimal('1516.00'), Decimal('1484.00'))
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Context, Decimal, localcontext

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


def pick_table(anchor, others: Sequence, seats: int, rating: Callable[..., Rating], rng: random.Random) -> list:
    """Matchmaking's table: ``anchor`` and the ``seats - 1`` of ``others`` closest to it in rating.

    Each distance gets a random spread of up to max(MIN_SPREAD, the anchor's
    margin): wider for uncertain ratings, so new bots meet a variety and settle
    fast. The table comes back in random seat order. ``rating(x)`` is x's Rating.
    """
    mine = rating(anchor)
    spread = max(MIN_SPREAD, mine.margin)
    with localcontext(CONTEXT):
        distance = [abs(rating(o).value - mine.value) + Decimal(rng.random()) * spread for o in others]
    nearest = sorted(range(len(others)), key=distance.__getitem__)[: seats - 1]
    table = [anchor, *(others[i] for i in nearest)]
    rng.shuffle(table)
    return table
