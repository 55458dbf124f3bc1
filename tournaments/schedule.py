"""Round-robin schedules: every pair of entries meets, as evenly as the table size allows.

Two seats: the circle method, one meeting per pair per cycle, seats balanced.
k seats (3..10): a seeded greedy construction improved by local search (see
docs/tournaments.md). Pure: no Django, no I/O; deterministic from the seed.

>>> [t.seats for t in round_robin(["a", "b", "c", "d"])[0].tables]
[('d', 'a'), ('b', 'c')]
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from itertools import combinations

from tournaments.tables import (
    MIN_SEATS,
    EntryId,
    Round,
    Table,
    check_entries,
    check_table_size,
    table_sizes,
)

# Annealing steps per seat and round: enough to reach the figures in
# docs/tournaments.md (30 entries in about a second, 100 entries in a few).
SEARCH_STEPS_PER_SEAT = 400
# Cap on the whole search, so a schedule of many rounds takes seconds, not minutes.
MAX_SEARCH_STEPS = 2_000_000
# Starting temperature of the annealing, in units of the cost sum(count**3).
START_TEMPERATURE = 2.0


def round_robin(
    entries: Sequence[EntryId],
    seats: int = 2,
    *,
    cycles: int = 1,
    rounds: int | None = None,
    seed: int | None = None,
) -> list[Round]:
    """Schedule a round robin of ``entries`` at tables of ``seats``.

    Two seats: ``cycles`` full cycles (seats swap in every second cycle). With a
    seed the entries are shuffled onto the circle first. k seats: ``rounds``
    rounds (default: the fewest in which every pair could meet once), seed 0
    when none is given.
    """
    entries = check_entries(entries)
    check_table_size(seats)
    if len(entries) < MIN_SEATS:
        raise ValueError(f"a round robin needs at least {MIN_SEATS} entries, got {len(entries)}")
    if seed is not None:
        entries = entries[:]
        random.Random(seed).shuffle(entries)
    if seats == 2:
        if rounds is not None:
            raise ValueError("rounds is fixed by the circle method for 2 seats; use cycles")
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 1:
            raise ValueError(f"cycles must be a positive integer, got {cycles!r}")
        return _circle(entries, cycles)
    if cycles != 1:
        raise ValueError(f"cycles applies to 2 seats; with {seats} seats give rounds, got cycles={cycles!r}")
    if rounds is None:
        rounds = math.ceil((len(entries) - 1) / (seats - 1))
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    return _multi_seat(entries, seats, rounds, seed if seed is not None else 0)


def _circle(entries: list[EntryId], cycles: int) -> list[Round]:
    """Circle method on an odd number of positions; an even field adds a fixed entry.

    Round r on the odd circle of m positions pairs r+j with r-j (j = 1..m//2)
    and leaves r alone. Seating r+j first for odd j and r-j first for even j
    gives every circle entry the first seat in exactly half of its circle games;
    the fixed entry meets the lone one, first in even rounds.
    """
    fixed = entries[-1] if len(entries) % 2 == 0 else None
    circle = entries[:-1] if fixed is not None else entries
    m = len(circle)
    out: list[Round] = []
    for cycle in range(cycles):
        for r in range(m):
            tables: list[tuple[EntryId, EntryId]] = []
            if fixed is not None:
                pair = (fixed, circle[r]) if r % 2 == 0 else (circle[r], fixed)
                tables.append(pair)
            for j in range(1, m // 2 + 1):
                a, b = circle[(r + j) % m], circle[(r - j) % m]
                tables.append((a, b) if j % 2 == 1 else (b, a))
            if cycle % 2 == 1:
                tables = [(b, a) for a, b in tables]
            byes = () if fixed is not None else (circle[r],)
            number = cycle * m + r + 1
            explanation = [f"round robin cycle {cycle + 1}, round {r + 1} of {m} (circle method)"]
            explanation += [f"bye to {e}: odd number of entries, each sits out once per cycle" for e in byes]
            out.append(Round(number, tuple(Table(t) for t in tables), byes, tuple(explanation)))
    return out


def _step_up(c: int) -> int:
    """Cost change of one more meeting for a pair that met c times (cost c**3)."""
    return 3 * c * c + 3 * c + 1


def _step_down(c: int) -> int:
    """Cost change of one meeting fewer for a pair that met c times."""
    return -(3 * c * c - 3 * c + 1)


class _Meetings:
    """Pair-meeting counts over entry indices."""

    def __init__(self, n: int):
        self.count = [[0] * n for _ in range(n)]

    def add_table(self, table: Sequence[int], sign: int = 1) -> None:
        for a, b in combinations(table, 2):
            self.count[a][b] += sign
            self.count[b][a] += sign

    def swap_delta(self, a: int, ta: Sequence[int], b: int, tb: Sequence[int]) -> int:
        """Change of the cost when a (at table ta) and b (at tb) trade places."""
        c = self.count
        delta = 0
        for x in ta:
            if x != a:
                delta += _step_down(c[a][x]) + _step_up(c[b][x])
        for y in tb:
            if y != b:
                delta += _step_down(c[b][y]) + _step_up(c[a][y])
        return delta


def _multi_seat(entries: list[EntryId], k: int, rounds: int, seed: int) -> list[Round]:
    """Tables of about k over ``rounds`` rounds, pair meetings as even as the search finds."""
    n = len(entries)
    sizes = table_sizes(n, k)
    seated = sum(sizes)
    rng = random.Random(seed)
    meetings = _Meetings(n)
    bye_count = [0] * n
    first_count = [0] * n
    plan: list[tuple[list[list[int]], list[int]]] = []
    for _ in range(rounds):
        # Byes rotate: fewest byes so far sit out, ties broken by the seeded draw.
        order = sorted(range(n), key=lambda i: (bye_count[i], rng.random()))
        byes = order[: n - seated]
        for i in byes:
            bye_count[i] += 1
        playing = sorted(order[n - seated :])
        tables = _greedy_round(playing, sizes, meetings, rng)
        for t in tables:
            meetings.add_table(t)
        plan.append((tables, byes))
    _improve(plan, meetings, rng, min(MAX_SEARCH_STEPS, SEARCH_STEPS_PER_SEAT * seated * rounds))
    counts = [meetings.count[a][b] for a, b in combinations(range(n), 2)]
    balance = (
        f"over {rounds} rounds each pair meets {min(counts)} to {max(counts)} times"
        f" ({counts.count(0)} of {len(counts)} pairs never)"
    )
    out: list[Round] = []
    for number, (tables, byes) in enumerate(plan, start=1):
        seated_tables = []
        for t in tables:
            # Fewest first seats so far goes first; the rest keep a seeded order.
            ordered = sorted(t, key=lambda i: (first_count[i], rng.random()))
            first_count[ordered[0]] += 1
            seated_tables.append(Table(tuple(entries[i] for i in ordered)))
        explanation = [
            f"round robin round {number} of {rounds}: tables of {'/'.join(map(str, sizes))}; {balance}"
        ]
        explanation += [f"bye to {entries[i]}: fewest byes so far" for i in byes]
        out.append(Round(number, tuple(seated_tables), tuple(entries[i] for i in byes), tuple(explanation)))
    return out


def _greedy_round(
    playing: list[int], sizes: Sequence[int], meetings: _Meetings, rng: random.Random
) -> list[list[int]]:
    """Fill tables one seat at a time with the entry that has met the table least."""
    pool = playing[:]
    rng.shuffle(pool)
    tables: list[list[int]] = []
    for size in sizes:
        table = [pool.pop()]
        while len(table) < size:
            best = min(pool, key=lambda i: sum(meetings.count[i][x] for x in table))
            pool.remove(best)
            table.append(best)
        tables.append(table)
    return tables


def _improve(
    plan: list[tuple[list[list[int]], list[int]]], meetings: _Meetings, rng: random.Random, steps: int
) -> None:
    """Simulated annealing over swaps of two seated entries within one round.

    The cost is sum(count**3) over pairs: the total of meetings is fixed, so a
    steeply convex cost rewards even counts and punishes both unmet pairs and
    repeats. Worse moves pass with probability exp(-delta / temperature), the
    temperature falling linearly to 0, so the search leaves local minima early.
    """
    movable = [r for r, (tables, _) in enumerate(plan) if len(tables) > 1]
    if not movable:
        return
    for step in range(steps):
        temperature = START_TEMPERATURE * (1 - step / steps) + 1e-9
        tables = plan[rng.choice(movable)][0]
        ia, ib = rng.sample(range(len(tables)), 2)
        ta, tb = tables[ia], tables[ib]
        pa, pb = rng.randrange(len(ta)), rng.randrange(len(tb))
        a, b = ta[pa], tb[pb]
        d = meetings.swap_delta(a, ta, b, tb)
        if d <= 0 or rng.random() < math.exp(-d / temperature):
            meetings.add_table(ta, -1)
            meetings.add_table(tb, -1)
            ta[pa], tb[pb] = b, a
            meetings.add_table(ta)
            meetings.add_table(tb)


def skip_entries(rnd: Round, gone: Iterable[EntryId]) -> Round:
    """``rnd`` without the withdrawn or disqualified entries ``gone``.

    A table keeps playing while it still seats 2; an entry left alone gets a
    bye (it scores as a win, as a forfeit by the missing opponent would).

    >>> skip_entries(Round(1, (Table(("a", "b")), Table(("c", "d")))), ["b"]).byes
    ('a',)
    """
    gone = set(gone)
    tables: list[Table] = []
    byes = [e for e in rnd.byes if e not in gone]
    explanation = list(rnd.explanation)
    for table in rnd.tables:
        left = tuple(e for e in table.seats if e not in gone)
        missing = [str(e) for e in table.seats if e in gone]
        if len(left) >= MIN_SEATS:
            tables.append(Table(left))
            if missing:
                explanation.append(f"{', '.join(missing)} left: {', '.join(map(str, left))} play on")
        elif left:
            byes.append(left[0])
            explanation.append(f"bye to {left[0]}: {', '.join(missing)} left the event")
    return Round(rnd.number, tuple(tables), tuple(byes), tuple(explanation))


def meeting_counts(schedule: Sequence[Round]) -> dict[frozenset, int]:
    """How often each pair of entries shares a table in ``schedule`` (met pairs only)."""
    counts: dict[frozenset, int] = {}
    for rnd in schedule:
        for table in rnd.tables:
            for a, b in combinations(table.seats, 2):
                key = frozenset((a, b))
                counts[key] = counts.get(key, 0) + 1
    return counts


def meeting_spread(entries: Sequence[EntryId], schedule: Sequence[Round]) -> tuple[int, int]:
    """(fewest, most) meetings over every pair of ``entries``, unmet pairs counting 0."""
    counts = meeting_counts(schedule)
    values = [counts.get(frozenset(p), 0) for p in combinations(entries, 2)]
    return min(values), max(values)
