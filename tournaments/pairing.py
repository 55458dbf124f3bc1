"""Swiss pairing for 2-seat matches and k-seat tables, with a readable explanation.

Deterministic from the entries' order, the seed and the results so far. Pure:
no Django, no I/O. The method is described in docs/tournaments.md.

>>> rnd = swiss_round(["a", "b", "c"], [], 1)
>>> [t.seats for t in rnd.tables], rnd.byes
([('a', 'b')], ('c',))
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import cast

from tournaments.seating import Seating
from tournaments.standings import (
    ACTIVE,
    DEFAULT_TIE_BREAKS,
    History,
    TournamentStanding,
    split_history,
    standings,
)
from tournaments.tables import (
    EntryId,
    Groups,
    PairedRound,
    Table,
    TableResult,
    check_owners_fit,
    check_round,
    check_table_size,
    shared_tables,
    table_sizes,
)

# Search steps the 2-seat backtracking may spend at one rematch budget before
# it accepts one more rematch; keeps hostile histories from hanging a worker.
MAX_SEARCH_STEPS = 200_000


def default_swiss_rounds(n: int) -> int:
    """ceil(log2 n) rounds, at least 1: enough to separate a single winner with 2 seats."""
    if n < 2:
        raise ValueError(f"a Swiss event needs at least 2 entries, got {n}")
    return max(1, math.ceil(math.log2(n)))


def seeding_order(
    entries: Sequence[EntryId], ratings: Mapping[EntryId, float | None], seed: int | None = None
) -> list[EntryId]:
    """The seeding: rated entries by rating, highest first (equal ratings keep the entries' order), then
    the unrated (missing or None in ``ratings``) in a seeded shuffle (their own order without a seed).

    >>> seeding_order(["a", "b", "c", "d"], {"b": 1510.0, "d": 1620.0, "a": None})
    ['d', 'b', 'a', 'c']
    """
    entries = list(entries)
    for e, r in ratings.items():
        if r is not None and (isinstance(r, bool) or not isinstance(r, int | float) or not math.isfinite(r)):
            raise ValueError(f"the rating of {e!r} must be a finite number or None, got {r!r}")
    rated = [e for e in entries if ratings.get(e) is not None]
    rated.sort(key=lambda e: -cast(float, ratings[e]))  # stable: equal ratings keep the entries' order
    unrated = [e for e in entries if ratings.get(e) is None]
    if seed is not None:
        random.Random(seed).shuffle(unrated)
    return rated + unrated


def swiss_round(
    entries: Sequence[EntryId],
    history: History,
    number: int,
    *,
    seats: int = 2,
    tie_breaks: Sequence[str] = DEFAULT_TIE_BREAKS,
    withdrawn: Iterable[EntryId] = (),
    disqualified: Iterable[EntryId] = (),
    seed: int | None = None,
    ratings: Mapping[EntryId, float | None] | None = None,
    apart: Groups | None = None,
) -> PairedRound:
    """Pair round ``number`` of a Swiss event from the results of the earlier rounds.

    Withdrawn and disqualified entries are not paired; their results stay. With
    ``ratings`` (entry -> rating, None for unrated) the seeding order
    (``seeding_order``) replaces the entries' order and the seeded tie order:
    round 1 pairs by rating, the top half against the bottom half (at k seats one
    entry from each of k rating bands per table), the unrated drawn after the rated.
    ``apart`` (entry -> owner): no table seats two entries of one owner; a ValueError
    names the owner when no pairing can.
    """
    check_table_size(seats)
    check_round(number)
    history = list(history)
    seeded_lines: list[str] = []
    if ratings is not None:
        entries = seeding_order(entries, ratings, seed)
        seed = None
        rated = sum(1 for e in entries if ratings.get(e) is not None)
        seeded_lines.append(
            f"seeding: {rated} entr{'y' if rated == 1 else 'ies'} by ladder rating, highest first"
            + (f", then {len(entries) - rated} unrated in a seeded draw" if rated < len(entries) else "")
        )
    lines = standings(
        entries,
        history,
        tie_breaks=tie_breaks,
        withdrawn=withdrawn,
        disqualified=disqualified,
        seed=seed,
    )
    tables, _ = split_history(entries, history)
    late = sorted({item.round for item in history if item.round >= number})
    if late:
        raise ValueError(f"cannot pair round {number}: the history already has round(s) {late}")
    ranked = [s for s in lines if s.status == ACTIVE]
    if len(ranked) < 2:
        raise ValueError(f"round {number}: need at least 2 active entries, got {len(ranked)}")
    state = _State(ranked, tables, apart or {})
    sizes = table_sizes(len(state.order), seats)
    check_owners_fit(state.order, state.owner, len(sizes), seats)
    header = (
        f"swiss round {number}: {len(ranked)} active entries ranked by points, then "
        + (", ".join(tie_breaks) or "entry order")
    )
    if seats == 2:
        rnd = _pair_two(number, state, header)
    else:
        rnd = _pair_tables(number, state, seats, header, bands=ratings is not None and not tables)
    if seeded_lines:
        rnd = PairedRound(rnd.number, rnd.tables, rnd.byes, (rnd.explanation[0], *seeded_lines, *rnd.explanation[1:]))
    return rnd


class _State:
    """What pairing needs from the past: rank, points, meetings, byes, seats taken."""

    def __init__(self, ranked: list[TournamentStanding], tables: Sequence[TableResult], owner: Groups) -> None:
        self.order = [s.entry for s in ranked]
        self.owner = owner
        self.rank = {e: i for i, e in enumerate(self.order)}
        self.points = {s.entry: s.points for s in ranked}
        self.byes = {s.entry: s.byes for s in ranked}
        self.met: dict[frozenset[EntryId], int] = {}
        self.first = dict.fromkeys(self.order, 0)
        self.last_seat: dict[EntryId, int] = {}
        self.seating: Seating[EntryId] = Seating()  # k seats: first seats and who sat directly after whom
        for t in sorted(tables, key=lambda t: t.round):
            self.seating.record(t.seats)
            for a, b in combinations(t.seats, 2):
                key = frozenset((a, b))
                self.met[key] = self.met.get(key, 0) + 1
            if t.seats[0] in self.first:
                self.first[t.seats[0]] += 1
            for i, e in enumerate(t.seats):
                self.last_seat[e] = i

    def meetings(self, a: EntryId, b: EntryId) -> int:
        return self.met.get(frozenset((a, b)), 0)

    def same_owner(self, a: EntryId, b: EntryId) -> bool:
        return a in self.owner and b in self.owner and self.owner[a] == self.owner[b]

    def bye_choice(self) -> tuple[list[EntryId], str]:
        """Bye candidates, best first: fewest byes so far, then lowest ranked."""
        fewest = min(self.byes.values())
        candidates = [e for e in reversed(self.order) if self.byes[e] == fewest]
        why = "lowest ranked without a bye" if fewest == 0 else f"lowest ranked with the fewest byes ({fewest})"
        return candidates, why

    def seat_order(self, group: Sequence[EntryId]) -> tuple[EntryId, ...]:
        """Fewest first seats goes first; then whoever did not sit first last time; then rank."""
        return tuple(
            sorted(group, key=lambda e: (self.first[e], self.last_seat.get(e, 1) == 0, self.rank[e]))
        )


def _fmt(points: Fraction) -> str:
    return f"{round(float(points), 2):g}"


def _pair_two(number: int, state: _State, header: str) -> PairedRound:
    """Score groups top down, backtracking; rematches only at the smallest possible count."""
    explanation = [header]
    odd = len(state.order) % 2 == 1
    no_bye: list[EntryId] = [None]
    candidates, why = state.bye_choice() if odd else (no_bye, "")
    pairs, bye, budget, gave_up = None, None, 0, False
    while pairs is None and not gave_up:
        for bye in candidates:
            rest = [e for e in state.order if e != bye]
            pairs, gave_up = _search(rest, state, budget)
            if pairs is not None or gave_up:
                break
        else:
            budget += 1
            if budget > len(state.order) // 2 * max(state.met.values(), default=0):
                # more repeats than any pairing can have and still none: the owners block it
                raise ValueError(
                    f"round {number}: no pairing keeps each owner's entries apart "
                    f"({', '.join(sorted({str(o) for o in state.owner.values()}))}); "
                    "allow same-owner tables for this event"
                )
    if pairs is None:
        # The exact search ran out of steps: pair greedily, fresh opponents first.
        bye = candidates[0]
        rest = [e for e in state.order if e != bye]
        pairs, _ = _search(rest, state, None)
        if pairs is None:
            raise ValueError(f"round {number}: no pairing keeps each owner's entries apart; "
                             "allow same-owner tables for this event")
    tables = []
    for a, b in pairs:
        seats = state.seat_order((a, b))
        tables.append(Table(seats))
        explanation.append(_explain_pair(state, a, b, seats))
    byes: tuple[EntryId, ...] = ()
    if bye is not None:
        byes = (bye,)
        explanation.append(f"bye to {bye}: {why}")
        skipped = candidates[: candidates.index(bye)]
        if skipped:
            explanation.append(
                f"  ({', '.join(map(str, skipped))} kept playing: a bye to them forced more rematches)"
            )
    repeats = sum(state.meetings(a, b) for a, b in pairs)
    if gave_up:
        explanation.append(
            f"the search for a pairing with at most {budget} repeat meeting(s) gave up after "
            f"{MAX_SEARCH_STEPS} steps; paired greedily, fresh opponents first ({repeats} repeats)"
        )
    elif repeats:
        explanation.append(f"{repeats} repeat meeting(s): no pairing with fewer exists")
    return PairedRound(number, tuple(tables), byes, tuple(explanation))


def _explain_pair(state: _State, a: EntryId, b: EntryId, seats: tuple[EntryId, ...]) -> str:
    pa, pb = state.points[a], state.points[b]
    if pa == pb:
        text = f"{seats[0]} vs {seats[1]}: both {_fmt(pa)} points"
    else:
        text = f"{seats[0]} vs {seats[1]}: {a} floated down from {_fmt(pa)} to meet {_fmt(pb)}"
    met = state.meetings(a, b)
    if met:
        text += f"; rematch (met {met} time(s) before)"
    if state.first[seats[0]] < state.first[seats[1]]:
        text += f"; {seats[0]} sits first: fewer first seats ({state.first[seats[0]]} vs {state.first[seats[1]]})"
    return text


def _search(
    rest: list[EntryId], state: _State, budget: int | None
) -> tuple[list[tuple[EntryId, EntryId]] | None, bool]:
    """First pairing in preference order with at most ``budget`` repeat meetings.

    Returns (pairs or None, whether it gave up after MAX_SEARCH_STEPS). With
    ``budget`` None any pairing goes and fresh opponents are preferred first:
    the greedy fallback, which never backtracks.
    """
    failed: set[tuple[frozenset[EntryId], int]] = set()
    steps = 0

    def preferences(p: EntryId, remaining: list[EntryId]) -> list[EntryId]:
        group = [e for e in remaining if state.points[e] == state.points[p]]
        half = len(group) // 2
        index = {e: i for i, e in enumerate(group)}
        others = [e for e in remaining if e != p]
        # Nearest score first; inside the group the top half meets the bottom half.
        return sorted(
            others,
            key=lambda q: (
                state.meetings(p, q) if budget is None else 0,
                abs(state.points[p] - state.points[q]),
                abs(index[q] - half) if q in index else 0,
                state.rank[q],
            ),
        )

    def go(remaining: list[EntryId], left: int) -> list[tuple[EntryId, EntryId]] | None:
        nonlocal steps
        if not remaining:
            return []
        key = (frozenset(remaining), left)
        if key in failed:
            return None
        steps += 1
        if steps > MAX_SEARCH_STEPS and budget is not None:
            return None
        p = remaining[0]
        for q in preferences(p, remaining):
            if state.same_owner(p, q):
                continue
            cost = 0 if budget is None else state.meetings(p, q)
            if cost > left:
                continue
            tail = go([e for e in remaining if e not in (p, q)], left - cost)
            if tail is not None:
                return [(p, q), *tail]
        failed.add(key)
        return None

    pairs = go(rest, 0 if budget is None else budget)
    return pairs, pairs is None and steps > MAX_SEARCH_STEPS


def _pair_tables(number: int, state: _State, k: int, header: str, *, bands: bool = False) -> PairedRound:
    """Cut the ranking into tables, then swap entries while that lowers repeats, then spread.

    With ``bands`` (a rated first round) the ranking is dealt instead: table j takes
    places j, j + T, j + 2T, ... (T tables), one entry from each rating band.
    """
    explanation = [header]
    sizes = table_sizes(len(state.order), k)
    nbyes = len(state.order) - sum(sizes)
    byes: list[EntryId] = []
    if nbyes:
        candidates = sorted(state.order, key=lambda e: (state.byes[e], -state.rank[e]))
        byes = candidates[:nbyes]
        for e in byes:
            why = "without a bye" if state.byes[e] == 0 else f"with the fewest byes ({state.byes[e]})"
            explanation.append(f"bye to {e}: lowest ranked {why}; tables of {k} cannot seat everyone")
    playing = [e for e in state.order if e not in set(byes)]
    tables: list[list[EntryId]] = []
    if bands:
        tables = [[] for _ in sizes]
        queue = iter(playing)
        for band in range(max(sizes)):
            for j, size in enumerate(sizes):
                if band < size:
                    tables[j].append(next(queue))
        explanation.append(
            f"round 1 by rating: the seeding cut into {max(sizes)} bands of {len(sizes)}; "
            "each table takes one entry from each band"
        )
    else:
        start = 0
        for size in sizes:
            tables.append(playing[start : start + size])
            start += size
    if len(set(sizes)) > 1:
        explanation.append(f"tables of {'/'.join(map(str, sizes))} seat all {len(playing)} entries")

    # Points scaled to integers (exact, and fast to compare in the inner loop).
    scale = math.lcm(*(p.denominator for p in state.points.values()))
    points = {e: int(p * scale) for e, p in state.points.items()}

    def linked(table: Sequence[EntryId]) -> dict[EntryId, int]:
        """Meetings of every playing entry with the occupants of ``table``."""
        return {e: sum(state.meetings(e, x) for x in table) for e in playing}

    def spread(table: Sequence[EntryId], leaving: EntryId, coming: EntryId) -> int:
        pts = [points[x] for x in table if x != leaving] + [points[coming]]
        return max(pts) - min(pts)

    links = [linked(t) for t in tables]
    repeats = [sum(state.meetings(a, b) for a, b in combinations(t, 2)) for t in tables]
    spreads = [max(points[e] for e in t) - min(points[e] for e in t) for t in tables]

    def clash(table: Sequence[EntryId], leaving: EntryId, coming: EntryId) -> int:
        """Pairs of one owner at ``table`` once ``coming`` takes the seat of ``leaving``."""
        seated = [x for x in table if x != leaving] + [coming]
        return sum(1 for x, y in combinations(seated, 2) if state.same_owner(x, y))

    clashes = [sum(1 for x, y in combinations(t, 2) if state.same_owner(x, y)) for t in tables]
    for _ in range(len(playing) ** 2):
        best = None
        for i, j in combinations(range(len(tables)), 2):
            for a in tables[i]:
                for b in tables[j]:
                    gain_clash = 0
                    if state.owner:
                        cl_i, cl_j = clash(tables[i], a, b), clash(tables[j], b, a)
                        gain_clash = clashes[i] + clashes[j] - cl_i - cl_j
                        if gain_clash < 0:
                            continue
                    both = state.meetings(a, b)
                    rep_i = repeats[i] - links[i][a] + links[i][b] - both
                    rep_j = repeats[j] - links[j][b] + links[j][a] - both
                    gain_repeats = repeats[i] + repeats[j] - rep_i - rep_j
                    if gain_repeats < 0 and gain_clash == 0:
                        continue
                    sp_i, sp_j = spread(tables[i], a, b), spread(tables[j], b, a)
                    gain = (gain_clash, gain_repeats, spreads[i] + spreads[j] - sp_i - sp_j)
                    if gain > (0, 0, 0) and (best is None or gain > best[0]):
                        best = (gain, i, j, a, b, rep_i, rep_j, sp_i, sp_j)
        if best is None:
            break
        gain, i, j, a, b, repeats[i], repeats[j], spreads[i], spreads[j] = best
        tables[i] = [b if e == a else e for e in tables[i]]
        tables[j] = [a if e == b else e for e in tables[j]]
        links[i], links[j] = linked(tables[i]), linked(tables[j])
        clashes[i] -= sum(1 for x in tables[i] if x != b and state.same_owner(x, a))
        clashes[i] += sum(1 for x in tables[i] if x != b and state.same_owner(x, b))
        clashes[j] -= sum(1 for x in tables[j] if x != a and state.same_owner(x, b))
        clashes[j] += sum(1 for x in tables[j] if x != a and state.same_owner(x, a))
        if gain[0] > 0:
            explanation.append(f"swap {a}<->{b} keeps entries of one owner apart")
        elif gain[1] > 0:
            explanation.append(f"swap {a}<->{b} avoided {gain[1]} repeat meeting(s)")
        else:
            narrowed = Fraction(gain[2], scale)
            explanation.append(f"swap {a}<->{b} narrowed the score spread by {_fmt(narrowed)}")
    if any(clashes):
        left = shared_tables(tables, state.owner)
        raise ValueError(f"round {number}: no single swap keeps each owner's entries apart ({left[0]}); "
                         "allow same-owner tables for this event")
    out = []
    for n, table in enumerate(tables, start=1):
        seats = state.seating.seat(table, key=state.rank.__getitem__)
        out.append(Table(seats))
        line = f"table {n}: " + ", ".join(f"{e} ({_fmt(state.points[e])})" for e in seats)
        if repeats[n - 1]:
            line += f"; {repeats[n - 1]} repeat meeting(s) left: no single swap removed them"
        explanation.append(line)
    return PairedRound(number, tuple(out), tuple(byes), tuple(explanation))
