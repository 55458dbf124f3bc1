"""Seat order at k-seat tables: who sits directly after whom, balanced over an event's rounds.

At a table of k the engine's rotations move every entry through every seat, but
the cyclic order stays: A sits directly after B in every rotation. Over the
rounds of an event each entry should follow each of its table-mates about as
often as the others: of the tables two entries share, A follows B at about
1/(k-1) of them. ``Seating`` keeps those counts and picks each table's order.

Pure: no Django, no I/O; deterministic from its inputs.

>>> s = Seating()
>>> s.record(("a", "b", "c"))
>>> s.order(["a", "b", "c"], key=str)   # b followed a last time, so a now follows b
('b', 'a', 'c')
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import permutations
from typing import Any, Generic, TypeVar

from tournaments.tables import EntryId

#: what a table seats: an entry id, or an index into a list of entries
E = TypeVar("E", bound=Hashable)

#: up to this many seats every order is tried; above, a greedy order improved by pairwise exchanges
ALL_ORDERS_UP_TO = 6
#: weight of one first seat against the neighbour balance: the first seat is balanced first
FIRST_SEAT_WEIGHT = 1000.0


class Seating(Generic[E]):
    """Counts over the tables seated so far: first seats, and how often A sat directly after B."""

    def __init__(self) -> None:
        self.first: Counter[E] = Counter()
        self.after: Counter[tuple[E, E]] = Counter()  # (b, a): a sat directly after b (around the table)
        self.expected: defaultdict[tuple[E, E], float] = defaultdict(float)  # (b, a): tables shared / (size - 1)

    def record(self, seats: Sequence[E]) -> None:
        """Count a table as seated (seat 0 first)."""
        k = len(seats)
        if k < 2:
            return
        self.first[seats[0]] += 1
        for i, a in enumerate(seats):
            self.after[(seats[i - 1], a)] += 1
        share = 1.0 / (k - 1)
        for b in seats:
            for a in seats:
                if a != b:
                    self.expected[(b, a)] += share

    def cost(self, order: Sequence[E]) -> float:
        """How far this order would leave the counts from even (lower is better; the table not yet recorded).

        Each neighbour pair it seats adds after - expected (both counted with this table), the
        change of the sum of squared deviations up to a constant; the first seat's count weighs most.
        """
        k = len(order)
        share = 1.0 / (k - 1)
        total = FIRST_SEAT_WEIGHT * self.first[order[0]]
        for i, a in enumerate(order):
            pair = (order[i - 1], a)
            total += self.after[pair] - self.expected[pair] - share
        return total

    def order(self, table: Iterable[E], key: Callable[[E], Any] | None = None) -> tuple[E, ...]:
        """The best seat order of ``table`` (ties: the first found, members sorted by first seats and ``key``)."""
        members = sorted(table, key=lambda e: (self.first[e], key(e) if key else 0))
        if len(members) <= 2:
            return tuple(members)
        if len(members) <= ALL_ORDERS_UP_TO:
            best = min(permutations(members), key=self.cost)  # min keeps the first of equal costs
            return tuple(best)
        order = [members[0]]
        rest = members[1:]
        while rest:  # greedy: the next seat is whoever is least often after the last one
            last = order[-1]
            nxt = min(rest, key=lambda a: self.after[(last, a)] - self.expected[(last, a)])
            rest.remove(nxt)
            order.append(nxt)
        current = self.cost(order)
        improved = True
        while improved:
            improved = False
            for i in range(1, len(order)):
                for j in range(i + 1, len(order)):
                    order[i], order[j] = order[j], order[i]
                    c = self.cost(order)
                    if c < current - 1e-9:
                        current, improved = c, True
                    else:
                        order[i], order[j] = order[j], order[i]
        return tuple(order)

    def seat(self, table: Iterable[E], key: Callable[[E], Any] | None = None) -> tuple[E, ...]:
        """``order`` the table and record it."""
        seats = self.order(table, key)
        self.record(seats)
        return seats


def neighbour_spread(tables: Iterable[Sequence[EntryId]]) -> float:
    """The largest |after - expected| over ordered pairs of table-mates: 0 is perfectly even."""
    s: Seating[EntryId] = Seating()
    for seats in tables:
        s.record(seats)
    return max((abs(s.after[p] - e) for p, e in s.expected.items()), default=0.0)
