"""Tables, rounds and results: the plain data the pairing code exchanges.

Entries are identified by any hashable id (a database pk, a name). Nothing here
imports Django or does I/O; ``tournaments_app.models`` maps rows to these values.

>>> table_sizes(7, 3)
(4, 3)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from engine.rules import BOUNDS

EntryId = Hashable

#: a game seats this many players (RULES.md section 2); the engine owns the bounds
MIN_SEATS, MAX_SEATS = BOUNDS["players"]


@dataclass(frozen=True)
class Table:
    """One match of a round: the entries in seat order (seat 0 first)."""

    seats: tuple[EntryId, ...]


@dataclass(frozen=True)
class PairedRound:
    """A tournament round as the pairing code returns it: its tables, the entries with a bye, and why
    it looks so. Not a round of UNO (the glossary's "round"); the app stores it as a ``TournamentRound``."""

    number: int
    tables: tuple[Table, ...]
    byes: tuple[EntryId, ...] = ()
    explanation: tuple[str, ...] = ()

    def entries(self) -> list[EntryId]:
        """Every entry of the round (seated or bye), in table order."""
        return [e for t in self.tables for e in t.seats] + list(self.byes)


@dataclass(frozen=True)
class TableResult:
    """A played table: seat order, final rank per seat (1 best, ties share), game points.

    ``game_points`` are the match's game points per seat, higher better (a
    caller using penalty scoring passes them negated); empty means unknown.
    """

    round: int
    seats: tuple[EntryId, ...]
    ranks: tuple[int, ...]
    game_points: tuple[int | float, ...] = ()

    def __post_init__(self) -> None:
        check_round(self.round)
        try:
            object.__setattr__(self, "seats", tuple(self.seats))
            object.__setattr__(self, "ranks", tuple(self.ranks))
            object.__setattr__(self, "game_points", tuple(self.game_points))
            distinct = len(set(self.seats))
        except TypeError as exc:
            raise ValueError(f"round {self.round}: malformed table result: {exc}") from None
        k = len(self.seats)
        if not MIN_SEATS <= k <= MAX_SEATS:
            raise ValueError(f"a table seats {MIN_SEATS}..{MAX_SEATS} entries, got {k}: {self.seats!r}")
        if distinct != k:
            raise ValueError(f"an entry sits twice at one table: {self.seats!r}")
        if len(self.ranks) != k:
            raise ValueError(f"{k} seats need {k} ranks, got {self.ranks!r}")
        if any(isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= k for r in self.ranks):
            raise ValueError(f"ranks must be integers 1..{k}, got {self.ranks!r}")
        if self.game_points and len(self.game_points) != k:
            raise ValueError(f"{k} seats need {k} game points, got {self.game_points!r}")
        for g in self.game_points:
            if isinstance(g, bool) or not isinstance(g, int | float | Decimal | Fraction) or not math.isfinite(g):
                raise ValueError(f"game points must be finite numbers, got {self.game_points!r}")


@dataclass(frozen=True)
class Bye:
    """An entry that sat out a round; it scores as a win."""

    round: int
    entry: EntryId

    def __post_init__(self) -> None:
        check_round(self.round)
        try:
            hash(self.entry)
        except TypeError:
            raise ValueError(f"round {self.round}: entry ids must be hashable, got {self.entry!r}") from None


def check_round(number: int) -> None:
    """Raise ValueError unless ``number`` is a round number (1, 2, ...)."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"a round number is a positive integer, got {number!r}")


def check_table_size(k: int) -> None:
    """Raise ValueError unless ``k`` seats make a legal game."""
    if isinstance(k, bool) or not isinstance(k, int) or not MIN_SEATS <= k <= MAX_SEATS:
        raise ValueError(f"seats per table must be an integer {MIN_SEATS}..{MAX_SEATS}, got {k!r}")


def check_entries(entries: Sequence[EntryId]) -> list[EntryId]:
    """The entries as a list; raise ValueError on duplicates or unhashable ids."""
    entries = list(entries)
    try:
        distinct = len(set(entries))
    except TypeError as exc:
        raise ValueError(f"entry ids must be hashable: {exc}") from None
    if distinct != len(entries):
        seen: set[EntryId] = set()
        dupes = []
        for e in entries:
            if e in seen:
                dupes.append(e)
            seen.add(e)
        raise ValueError(f"duplicate entries: {dupes!r}")
    return entries


def table_size_bounds(k: int) -> tuple[int, int]:
    """The smallest and largest table an event of ``k``-seat tables plays: one seat fewer or more
    (within 2..10), except that a 2-seat event keeps 2-seat games (a third player would change
    the game).

    >>> table_size_bounds(2), table_size_bounds(4), table_size_bounds(10)
    ((2, 2), (3, 5), (9, 10))
    """
    if k == MIN_SEATS:
        return k, k
    return max(k - 1, MIN_SEATS), min(k + 1, MAX_SEATS)


def table_sizes(n: int, k: int) -> tuple[int, ...]:
    """How ``n`` entries sit at tables of ``k``: sizes largest first; byes are the rest.

    Tables of k-1 or k+1 (within 2..10) replace byes when they can. Preference:
    fewest byes, then fewest tables off size k, then more (smaller) tables.

    >>> table_sizes(10, 4), table_sizes(5, 2)
    ((4, 3, 3), (2, 2))
    """
    check_table_size(k)
    if isinstance(n, bool) or not isinstance(n, int) or n < MIN_SEATS:
        raise ValueError(f"need at least {MIN_SEATS} entries to pair, got {n!r}")
    lo, hi = table_size_bounds(k)
    best: tuple[tuple[int, int, int], int, int] | None = None
    for tables in range(1, n // lo + 1):
        seated = min(n, tables * hi)
        off = abs(seated - tables * k)  # each off-size table differs from k by one
        key = (n - seated, off, -tables)
        if best is None or key < best[0]:
            best = (key, tables, seated)
    if best is None:
        raise ValueError(f"{n} entries cannot fill one table of {k} (tables of {lo}..{hi} allowed)")
    _, tables, seated = best
    base, extra = divmod(seated, tables)
    return tuple([base + 1] * extra + [base] * (tables - extra))


#: entry -> its owner (any hashable); entries of one owner are kept apart where a caller passes it
Groups = Mapping[EntryId, Hashable]


def shared_tables(tables: Sequence[Sequence[EntryId]], groups: Groups) -> list[str]:
    """Tables that seat two entries of one owner, as text ("owner o: a, b"); empty when none does."""
    out = []
    for seats in tables:
        seen: dict[Hashable, list[EntryId]] = {}
        for e in seats:
            if e in groups:
                seen.setdefault(groups[e], []).append(e)
        out += [f"owner {g}: {', '.join(map(str, es))}" for g, es in seen.items() if len(es) > 1]
    return out


def check_owners_fit(entries: Sequence[EntryId], groups: Groups, tables: int, seats: int) -> None:
    """Raise ValueError naming the owner when its entries cannot sit at different tables of one round.

    At 2 seats an owner may hold at most half the field (one more when a bye is left over);
    at k seats no more entries than there are tables.
    """
    counts: dict[Hashable, list[EntryId]] = {}
    for e in entries:
        if e in groups:
            counts.setdefault(groups[e], []).append(e)
    n = len(entries)
    for owner, mine in counts.items():
        room = tables + (n - 2 * tables if seats == 2 else 0)  # 2 seats: a bye also keeps one apart
        if len(mine) > room:
            raise ValueError(
                f"owner {owner} has {len(mine)} of the {n} entries ({', '.join(map(str, mine))}): "
                f"a round has only {tables} table(s) of {seats}, so two of them would share a table; "
                "allow same-owner tables for this event or withdraw some of them"
            )
