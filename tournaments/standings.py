"""Standings of an event: match points, tie-breaks, the crosstable.

Exact arithmetic (``fractions.Fraction``) so ties are real ties. Pure: no
Django, no I/O. The scoring is documented in docs/tournaments.md.

>>> placement_points((1, 1, 3))
(Fraction(3, 4), Fraction(3, 4), Fraction(0, 1))
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from tournaments.tables import Bye, EntryId, TableResult, check_entries

#: what a bye is worth: a win
BYE_POINTS = Fraction(1)
#: every tie-break this module knows
TIE_BREAKS = ("buchholz", "sonneborn_berger", "head_to_head", "game_points")
DEFAULT_TIE_BREAKS = TIE_BREAKS

ACTIVE, WITHDRAWN, DISQUALIFIED = "active", "withdrawn", "disqualified"

History = Iterable[TableResult | Bye]


def placement_points(ranks: Sequence[int]) -> tuple[Fraction, ...]:
    """Match points per seat: place p of k is worth (k - p) / (k - 1); tied places share the average.

    Two seats give 1 for a win, 1/2 for a draw, 0 for a loss.
    """
    k = len(ranks)
    order = sorted(set(ranks))
    points: dict[int, Fraction] = {}
    position = 0  # 0 = first place
    for rank in order:
        tied = sum(1 for r in ranks if r == rank)
        share = sum((Fraction(k - 1 - p, k - 1) for p in range(position, position + tied)), Fraction(0)) / tied
        points[rank] = share
        position += tied
    return tuple(points[r] for r in ranks)


def pairwise_score(rank_a: int, rank_b: int) -> Fraction:
    """A's score against B at one table: 1 ahead, 1/2 tied, 0 behind."""
    if rank_a < rank_b:
        return Fraction(1)
    return Fraction(1, 2) if rank_a == rank_b else Fraction(0)


@dataclass(frozen=True)
class TournamentStanding:
    """An entry's line in a tournament's standings (match points, tie-breaks); ``rank`` is shared while
    points and tie-breaks are equal. A ladder's line (by rating) is ``ladders.selectors.LadderStanding``."""

    entry: EntryId
    rank: int
    points: Fraction
    tie_breaks: dict[str, Fraction | None]
    played: int
    byes: int
    status: str = ACTIVE


def split_history(
    entries: Sequence[EntryId], history: History
) -> tuple[list[TableResult], list[Bye]]:
    """Tables and byes of ``history``, checked against ``entries``.

    Raises ValueError for an unknown entry or an entry used twice in one round.
    """
    known = set(entries)
    tables: list[TableResult] = []
    byes: list[Bye] = []
    busy: set[tuple[int, EntryId]] = set()
    for item in history:
        if isinstance(item, TableResult):
            tables.append(item)
            seated = item.seats
        elif isinstance(item, Bye):
            byes.append(item)
            seated = (item.entry,)
        else:
            raise ValueError(f"history holds TableResult and Bye values, got {item!r}")
        for e in seated:
            if e not in known:
                raise ValueError(f"round {item.round}: unknown entry {e!r}")
            if (item.round, e) in busy:
                raise ValueError(f"round {item.round}: entry {e!r} is paired twice")
            busy.add((item.round, e))
    return tables, byes


def tie_order(entries: Sequence[EntryId], seed: int | None) -> dict[EntryId, int]:
    """Last resort order for full ties: the entries' own order, or a seeded shuffle of it."""
    order = list(entries)
    if seed is not None:
        random.Random(seed).shuffle(order)
    return {e: i for i, e in enumerate(order)}


def standings(
    entries: Sequence[EntryId],
    history: History,
    *,
    tie_breaks: Sequence[str] = DEFAULT_TIE_BREAKS,
    withdrawn: Iterable[EntryId] = (),
    disqualified: Iterable[EntryId] = (),
    seed: int | None = None,
) -> list[TournamentStanding]:
    """Rank ``entries`` by match points, then ``tie_breaks`` in order, then the tie order.

    Withdrawn entries keep their place; disqualified ones are listed last. Their
    played results stay and count for their opponents.
    """
    entries = check_entries(entries)
    if isinstance(tie_breaks, str):
        raise ValueError(f"tie_breaks is a sequence of names, got the string {tie_breaks!r}")
    unknown_tb = [t for t in tie_breaks if t not in TIE_BREAKS]
    if unknown_tb or len(set(tie_breaks)) != len(tie_breaks):
        raise ValueError(f"tie-breaks must be distinct names from {TIE_BREAKS}, got {tuple(tie_breaks)!r}")
    status = _status(entries, withdrawn, disqualified)
    tables, byes = split_history(entries, history)
    points = {e: Fraction(0) for e in entries}
    played = {e: 0 for e in entries}
    bye_count = {e: 0 for e in entries}
    game_points = {e: Fraction(0) for e in entries}
    for t in tables:
        for e, p in zip(t.seats, placement_points(t.ranks), strict=True):
            points[e] += p
            played[e] += 1
        for e, g in zip(t.seats, t.game_points, strict=False):
            # A float's shortest repr, not its binary expansion: 0.1 stays 1/10.
            game_points[e] += Fraction(str(g)) if isinstance(g, float) else Fraction(g)
    for b in byes:
        points[b.entry] += BYE_POINTS
        bye_count[b.entry] += 1

    def opponent_sum(e: EntryId, weight: Callable[[int, EntryId, int], Fraction | int]) -> Fraction:
        total = Fraction(0)
        for t in tables:
            if e in t.seats:
                mine = t.ranks[t.seats.index(e)]
                share = Fraction(0)
                for o, r in zip(t.seats, t.ranks, strict=True):
                    if o != e:
                        share += weight(mine, o, r)
                total += share / (len(t.seats) - 1)
        return total

    fixed = {
        "buchholz": lambda e: opponent_sum(e, lambda mine, o, r: points[o]),
        "sonneborn_berger": lambda e: opponent_sum(
            e, lambda mine, o, r: pairwise_score(mine, r) * points[o]
        ),
        "game_points": lambda e: game_points[e],
    }
    values: dict[EntryId, dict[str, Fraction | None]] = {
        e: {tb: (fixed[tb](e) if tb in fixed else None) for tb in tie_breaks} for e in entries
    }
    order_of = tie_order(entries, seed)
    lines: list[TournamentStanding] = []
    rank = 1
    for group_status in ((ACTIVE, WITHDRAWN), (DISQUALIFIED,)):
        pool = [e for e in entries if status[e] in group_status]
        groups = _split(pool, lambda e, group: points[e])
        for tb in tie_breaks:
            refined: list[list[EntryId]] = []
            for group in groups:
                if len(group) == 1:
                    refined.append(group)
                    continue
                if tb == "head_to_head":
                    among = _among(set(group))
                    for e in group:
                        values[e][tb] = opponent_sum(e, among)
                refined += _split(group, _tie_break_value(values, tb))
            groups = refined
        for group in groups:
            for e in sorted(group, key=order_of.__getitem__):
                lines.append(
                    TournamentStanding(e, rank, points[e], values[e], played[e], bye_count[e], status[e])
                )
            rank += len(group)
    return lines


def _among(members: set[EntryId]) -> Callable[[int, EntryId, int], Fraction | int]:
    """The head-to-head weight: the pairwise score against opponents in ``members`` only."""
    return lambda mine, o, r: pairwise_score(mine, r) if o in members else 0


def _tie_break_value(
    values: dict[EntryId, dict[str, Fraction | None]], tb: str
) -> Callable[[EntryId, list[EntryId]], Fraction]:
    """Tie-break ``tb`` of an entry; every entry of a group being split has it by then."""
    return lambda e, group: cast(Fraction, values[e][tb])


def _split(
    group: list[EntryId], value: Callable[[EntryId, list[EntryId]], Fraction]
) -> list[list[EntryId]]:
    """``group`` cut into runs of equal ``value``, highest first."""
    keyed = sorted(group, key=lambda e: value(e, group), reverse=True)
    out: list[list[EntryId]] = []
    for e in keyed:
        if out and value(out[-1][0], group) == value(e, group):
            out[-1].append(e)
        else:
            out.append([e])
    return out


def _status(
    entries: Sequence[EntryId], withdrawn: Iterable[EntryId], disqualified: Iterable[EntryId]
) -> dict[EntryId, str]:
    status = {e: ACTIVE for e in entries}
    for label, ids in ((WITHDRAWN, withdrawn), (DISQUALIFIED, disqualified)):
        for e in ids:
            if e not in status:
                raise ValueError(f"{label} entry {e!r} is not an entry of the event")
            status[e] = label
    return status


@dataclass(frozen=True)
class Crosstable:
    """Two-seat results: ``cells[(row, col)]`` holds row's score per game against col."""

    order: tuple[EntryId, ...]
    cells: dict[tuple[EntryId, EntryId], tuple[Fraction, ...]]

    def to_text(self) -> str:
        """A plain-text grid: row, then its scores against each column (``.`` unplayed)."""
        width = max(len(str(e)) for e in self.order)
        head = " " * (width + 4) + " ".join(f"{i + 1:>5}" for i in range(len(self.order)))
        rows = [head]
        for i, row in enumerate(self.order):
            cells = []
            for col in self.order:
                if col == row:
                    cells.append(f"{'x':>5}")
                else:
                    scores = self.cells.get((row, col), ())
                    text = "".join(_score_glyph(s) for s in scores) or "."
                    cells.append(f"{text:>5}")
            rows.append(f"{i + 1:>2} {str(row):<{width}} " + " ".join(cells))
        return "\n".join(rows)


def _score_glyph(score: Fraction) -> str:
    return {Fraction(1): "1", Fraction(1, 2): "=", Fraction(0): "0"}[score]


def crosstable(lines: Sequence[TournamentStanding], history: History) -> Crosstable:
    """The crosstable of a two-seat event, rows in standings order."""
    order = tuple(s.entry for s in lines)
    tables, _ = split_history(order, history)
    cells: dict[tuple[EntryId, EntryId], tuple[Fraction, ...]] = {}
    for t in sorted(tables, key=lambda t: t.round):
        if len(t.seats) != 2:
            raise ValueError(f"a crosstable needs 2-seat tables, round {t.round} has {t.seats!r}")
        a, b = t.seats
        ra, rb = t.ranks
        cells[(a, b)] = cells.get((a, b), ()) + (pairwise_score(ra, rb),)
        cells[(b, a)] = cells.get((b, a), ()) + (pairwise_score(rb, ra),)
    return Crosstable(order, cells)
