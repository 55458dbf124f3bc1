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
import re
import sys
import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from tournaments.designs import resolvable_design
from tournaments.seating import Seating
from tournaments.tables import (
    MIN_SEATS,
    EntryId,
    Groups,
    PairedRound,
    Table,
    check_entries,
    check_owners_fit,
    check_table_size,
    shared_tables,
    table_sizes,
)

# Annealing steps per seat and round, then conflict-directed descent steps per seat and
# round (at 3 seats; scaled by 3/k, since one step looks at every seat of the round):
# 40 entries in well under a second (figures in docs/tournaments.md).
SEARCH_STEPS_PER_SEAT = 250
POLISH_STEPS_PER_SEAT = 40
# Small fields search again from fresh starts until MIN_SEARCH_STEPS annealing steps are spent
# (at most MAX_RESTARTS runs); the best run wins.
MIN_SEARCH_STEPS = 60_000
MAX_RESTARTS = 6
# Caps on the whole search, so a schedule of many rounds takes seconds, not minutes.
MAX_SEARCH_STEPS = 2_000_000
MAX_POLISH_STEPS = 300_000
# Starting temperature of the annealing, in units of the cost sum(count**3).
START_TEMPERATURE = 1.0
# Meetings a pair of one owner starts the search with: one more costs 3*50**2 + ..., more than any schedule.
APART_WEIGHT = 50


def round_robin(
    entries: Sequence[EntryId],
    seats: int = 2,
    *,
    cycles: int = 1,
    rounds: int | None = None,
    seed: int | None = None,
    apart: Groups | None = None,
) -> list[PairedRound]:
    """Schedule a round robin of ``entries`` at tables of ``seats``.

    ``apart`` (entry -> owner): no table seats two entries of one owner; a ValueError
    names the owner when that cannot be done (2 seats: everyone meets everyone).

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
        if apart:
            owners: dict[Hashable, list[EntryId]] = {}
            for e in entries:
                if e in apart:
                    owners.setdefault(apart[e], []).append(e)
            for owner, mine in owners.items():
                if len(mine) > 1:
                    raise ValueError(
                        f"owner {owner} has {len(mine)} entries ({', '.join(map(str, mine))}): a 2-seat round "
                        "robin pairs every entry with every other; allow same-owner tables for this event or "
                        "withdraw all but one of them"
                    )
        return _circle(entries, cycles)
    if cycles != 1:
        raise ValueError(f"cycles applies to 2 seats; with {seats} seats give rounds, got cycles={cycles!r}")
    if rounds is None:
        rounds = math.ceil((len(entries) - 1) / (seats - 1))
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    return _multi_seat(entries, seats, rounds, seed if seed is not None else 0, apart or {})


def _circle(entries: list[EntryId], cycles: int) -> list[PairedRound]:
    """Circle method on an odd number of positions; an even field adds a fixed entry.

    Round r on the odd circle of m positions pairs r+j with r-j (j = 1..m//2)
    and leaves r alone. Seating r+j first for odd j and r-j first for even j
    gives every circle entry the first seat in exactly half of its circle games;
    the fixed entry meets the lone one, first in even rounds.
    """
    fixed = entries[-1] if len(entries) % 2 == 0 else None
    circle = entries[:-1] if fixed is not None else entries
    m = len(circle)
    out: list[PairedRound] = []
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
            out.append(PairedRound(number, tuple(Table(t) for t in tables), byes, tuple(explanation)))
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

    def cost(self) -> int:
        n = len(self.count)
        return sum(self.count[a][b] ** 3 for a in range(n) for b in range(a + 1, n))


def _unmet(meetings: _Meetings) -> int:
    """Pairs that never share a table (pairs kept apart, at APART_WEIGHT, count as met here)."""
    count = meetings.count
    return sum(1 for a in range(len(count)) for b in range(a + 1, len(count)) if count[a][b] == 0)


def _cost_floor(pairs: int, meetings: int) -> int:
    """The least sum(count**3) of ``meetings`` spread over ``pairs``: as evenly as possible."""
    q, extra = divmod(meetings, pairs)
    return (pairs - extra) * q**3 + extra * (q + 1) ** 3


Plan = list[tuple[list[list[int]], list[int]]]


def _multi_seat(entries: list[EntryId], k: int, rounds: int, seed: int, apart: Groups) -> list[PairedRound]:
    """Tables of about k over ``rounds`` rounds, pair meetings as even as the design or the search gets.

    Pairs of one owner (``apart``) start the search at APART_WEIGHT meetings, so a table that
    seats them costs more than any other; a design (every pair meets) is not used then.
    """
    n = len(entries)
    sizes = table_sizes(n, k)
    seated = sum(sizes)
    rng = random.Random(seed)
    check_owners_fit(entries, apart, len(sizes), k)
    index = {e: i for i, e in enumerate(entries)}
    kept_apart = [(index[a], index[b]) for a, b in combinations(entries, 2)
                  if a in apart and b in apart and apart[a] == apart[b]]

    def score(meetings: _Meetings) -> tuple[int, int, int]:
        """(tables seating one owner twice, unmet pairs, cost): what a run is judged by."""
        clashes = sum(1 for a, b in kept_apart if meetings.count[a][b] > APART_WEIGHT)
        return clashes, _unmet(meetings), meetings.cost()

    def fresh() -> _Meetings:
        meetings = _Meetings(n)
        for a, b in kept_apart:
            meetings.count[a][b] = meetings.count[b][a] = APART_WEIGHT
        return meetings

    total = rounds * sum(s * (s - 1) // 2 for s in sizes)
    floor = _cost_floor(n * (n - 1) // 2 - len(kept_apart), total) + len(kept_apart) * APART_WEIGHT**3
    work = seated * rounds
    steps = min(MAX_SEARCH_STEPS, SEARCH_STEPS_PER_SEAT * work)
    polish = min(MAX_POLISH_STEPS, POLISH_STEPS_PER_SEAT * work * 3 // k)
    meetings = fresh()
    plan, v = (None, 0) if kept_apart else _design_plan(n, k, sizes, rounds, rng)
    if plan is not None:
        how = f"from the resolvable design of {v} at {k} seats"
        if v != n:
            how += f", {'one seat left empty' if v > n else 'one entry added'}"
        for tables, _ in plan:
            for t in tables:
                meetings.add_table(t)
        if meetings.cost() > floor:
            start = [([t[:] for t in tables], byes) for tables, byes in plan]
            unmet_before = _unmet(meetings)
            _improve(plan, meetings, rng, steps, polish, floor)
            if _unmet(meetings) > unmet_before:  # the even spread cost pairs: the design start stays
                plan, meetings = start, fresh()
                for tables, _ in plan:
                    for t in tables:
                        meetings.add_table(t)
    else:
        # Small fields search several times from fresh greedy starts (MIN_SEARCH_STEPS in all);
        # the run leaving the fewest pairs unmet wins (then the lower cost, then the first).
        how = "by seeded search"
        runs = max(1, min(MAX_RESTARTS, MIN_SEARCH_STEPS // max(steps, 1)))
        best = None
        for _ in range(runs):
            trial = fresh()
            trial_plan = _greedy_plan(n, sizes, rounds, rng, trial)
            start = [([t[:] for t in tables], byes) for tables, byes in trial_plan]
            candidates = [(score(trial), start)]
            if trial.cost() > floor:
                _improve(trial_plan, trial, rng, steps, polish, floor)
                candidates.insert(0, (score(trial), trial_plan))
            chosen = min(candidates, key=lambda c: c[0])  # the annealed run unless its start was better
            if best is None or chosen[0] < best[0]:
                best = chosen
        assert best is not None  # runs >= 1
        plan = best[1]
        meetings = fresh()
        for tables, _ in plan:
            for t in tables:
                meetings.add_table(t)
    for a, b in kept_apart:
        meetings.count[a][b] -= APART_WEIGHT
        meetings.count[b][a] -= APART_WEIGHT
    clash = shared_tables([[entries[i] for i in t] for tables, _ in plan for t in tables], apart)
    if clash:  # pragma: no cover - the search keeps them apart whenever check_owners_fit passes
        raise ValueError(f"no schedule found that keeps each owner's entries at different tables ({clash[0]})")
    counts = [meetings.count[a][b] for a, b in combinations(range(n), 2)]
    balance = (
        f"over {rounds} rounds each pair meets {min(counts)} to {max(counts)} times"
        f" ({counts.count(0)} of {len(counts)} pairs never), {how}"
    )
    orders = _seat_orders([tables for tables, _ in plan], n, rng)
    out: list[PairedRound] = []
    for number, ((_, byes), ordered) in enumerate(zip(plan, orders, strict=True), start=1):
        seated_tables = tuple(Table(tuple(entries[i] for i in t)) for t in ordered)
        explanation = [
            f"round robin round {number} of {rounds}: tables of {'/'.join(map(str, sizes))}; {balance}"
        ]
        explanation += [f"bye to {entries[i]}: fewest byes so far" for i in byes]
        out.append(PairedRound(number, seated_tables, tuple(entries[i] for i in byes), tuple(explanation)))
    return out


def _design_plan(n: int, k: int, sizes: Sequence[int], rounds: int, rng: random.Random) -> tuple[Plan | None, int]:
    """Rounds from a resolvable design on n, n + 1 or n - 1 points, when its tables are the sizes wanted.

    n points: every pair meets once per r rounds. n + 1: one point stays empty, its
    table seats k - 1. n - 1: each round the extra entry joins the table whose
    entries it has met least so far (ties drawn), so it meets everyone within the
    design's r rounds (r tables of k cover the other n - 1). Each pass through the
    r rounds relabels the points afresh (seeded).
    """
    if sum(sizes) != n:
        return None, 0
    want = sorted(sizes)
    for v in (n, n + 1, n - 1):
        classes = resolvable_design(v, k)
        if classes is None:
            continue
        plan: Plan = []
        met = [0] * n  # v = n - 1: how often the extra entry (n - 1) met each entry
        while len(plan) < rounds:
            label = list(range(v))
            rng.shuffle(label)  # point -> entry; entry n (when v = n + 1) is the empty seat
            order = classes[:]
            rng.shuffle(order)
            for blocks in order[: rounds - len(plan)]:
                tables = [[label[p] for p in block if label[p] < n] for block in blocks]
                if v == n - 1:
                    host = min(tables, key=lambda t: (sum(met[e] ** 2 + 2 * met[e] for e in t), rng.random()))
                    for e in host:
                        met[e] += 1
                    host.append(n - 1)
                plan.append((tables, []))
        if all(sorted(len(t) for t in tables) == want for tables, _ in plan):
            return plan, v
    return None, 0


def _greedy_plan(n: int, sizes: Sequence[int], rounds: int, rng: random.Random, meetings: _Meetings) -> Plan:
    bye_count = [0] * n
    seated = sum(sizes)
    plan: Plan = []
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
    return plan


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


def _swap_seats(count: list[list[int]], ta: list[int], pa: int, tb: list[int], pb: int) -> None:
    """Swap entry ``ta[pa]`` and entry ``tb[pb]`` between their tables, keeping ``count``
    (meetings of each pair, both ways) true: each leaves its table-mates and meets the other's."""
    a, b = ta[pa], tb[pb]
    ca, cb = count[a], count[b]
    for x in ta:
        if x != a:
            ca[x] -= 1
            count[x][a] -= 1
            cb[x] += 1
            count[x][b] += 1
    for y in tb:
        if y != b:
            cb[y] -= 1
            count[y][b] -= 1
            ca[y] += 1
            count[y][a] += 1
    ta[pa], tb[pb] = b, a


def _improve(plan: Plan, meetings: _Meetings, rng: random.Random, steps: int, polish: int, floor: int) -> None:
    """Simulated annealing over swaps of two seated entries within one round; keeps the best state seen.

    The cost is sum(count**3) over pairs: the total of meetings is fixed, so a
    steeply convex cost rewards even counts and punishes both unmet pairs and
    repeats. Worse moves pass with probability exp(-delta / temperature), the
    temperature falling linearly to 0, so the search leaves local minima early.
    It stops at ``floor``, the cost of a perfectly even spread. Then ``polish`` steps
    of conflict-directed descent (``_polish``).
    """
    movable = [r for r, (tables, _) in enumerate(plan) if len(tables) > 1]
    if not movable or steps <= 0:
        return
    count = meetings.count
    cost = best = meetings.cost()
    saved: list[list[list[int]]] | None = None  # the best plan, copied only when the search leaves it
    random_, exp = rng.random, math.exp
    for step in range(steps):
        temperature = START_TEMPERATURE * (1 - step / steps) + 1e-9
        tables = plan[movable[int(random_() * len(movable))]][0]
        ia = int(random_() * len(tables))
        ib = int(random_() * (len(tables) - 1))
        ib += ib >= ia
        ta, tb = tables[ia], tables[ib]
        pa, pb = int(random_() * len(ta)), int(random_() * len(tb))
        a, b = ta[pa], tb[pb]
        ca, cb = count[a], count[b]
        d = 0
        for x in ta:
            if x != a:
                u, w = ca[x], cb[x]
                d += 3 * (w * w - u * u) + 3 * (w + u)
        for y in tb:
            if y != b:
                u, w = cb[y], ca[y]
                d += 3 * (w * w - u * u) + 3 * (w + u)
        if d > 0 and random_() >= exp(-d / temperature):
            continue
        if d > 0 and cost == best:
            saved = [[t[:] for t in tbls] for tbls, _ in plan]
        _swap_seats(count, ta, pa, tb, pb)
        cost += d
        if cost < best:
            best, saved = cost, None
            if cost <= floor:
                break
    if saved is None or cost <= best:
        cost = _polish(plan, movable, count, cost, rng, polish)
    if saved is not None and cost > best:
        for (tables, _), kept in zip(plan, saved, strict=True):
            tables[:] = kept
        for row in count:
            row[:] = [0] * len(row)
        for tables, _ in plan:
            for t in tables:
                meetings.add_table(t)


def _polish(plan: Plan, movable: list[int], count: list[list[int]], cost: int, rng: random.Random,
            steps: int) -> int:
    """Conflict-directed descent: an entry that meets a table-mate again trades places with the entry
    of another table of that round that lowers the cost most (ties drawn); never a worse move, and a
    trade just made is not undone for a few steps. Returns the new cost.
    """
    random_ = rng.random
    tabu: dict[tuple[int, int], int] = {}
    for step in range(steps):
        tables = plan[movable[int(random_() * len(movable))]][0]
        ia = int(random_() * len(tables))
        ta = tables[ia]
        pa = int(random_() * len(ta))
        a = ta[pa]
        ca = count[a]
        if all(ca[x] <= 1 for x in ta if x != a):
            continue
        leave = sum(3 * ca[x] * ca[x] - 3 * ca[x] + 1 for x in ta if x != a)
        best: tuple[int, int, int] | None = None
        for ib, tb in enumerate(tables):
            if ib == ia:
                continue
            for pb, b in enumerate(tb):
                if tabu.get((a, b), -1) > step:
                    continue
                cb = count[b]
                d = -leave
                for x in ta:
                    if x != a:
                        w = cb[x]
                        d += 3 * w * w + 3 * w + 1
                for y in tb:
                    if y != b:
                        u, w = cb[y], ca[y]
                        d += 3 * (w * w - u * u) + 3 * (w + u)
                if best is None or d < best[0] or (d == best[0] and random_() < 0.5):
                    best = (d, ib, pb)
        if best is None or best[0] > 0:
            continue
        d, ib, pb = best
        tb = tables[ib]
        b = tb[pb]
        _swap_seats(count, ta, pa, tb, pb)
        tabu[(b, a)] = step + TABU_STEPS
        cost += d
    return cost


#: steps for which a trade just made may not be undone by the descent
TABU_STEPS = 10


def _seat_orders(rounds: list[list[list[int]]], n: int, rng: random.Random) -> list[list[list[int]]]:
    """Seat order at every table, round by round: first seats and who sits after whom balanced
    (``tournaments.seating``); ties go by a seeded order of the entries."""
    tie = [rng.random() for _ in range(n)]
    seating: Seating[int] = Seating()
    return [[list(seating.seat(table, key=tie.__getitem__)) for table in tables] for tables in rounds]


def skip_entries(rnd: PairedRound, gone: Iterable[EntryId]) -> PairedRound:
    """``rnd`` without the withdrawn or disqualified entries ``gone``.

    A table keeps playing while it still seats 2; an entry left alone gets a
    bye (it scores as a win, as a forfeit by the missing opponent would).

    >>> skip_entries(PairedRound(1, (Table(("a", "b")), Table(("c", "d")))), ["b"]).byes
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
    return PairedRound(rnd.number, tuple(tables), tuple(byes), tuple(explanation))


def meeting_counts(schedule: Sequence[PairedRound]) -> dict[frozenset[EntryId], int]:
    """How often each pair of entries shares a table in ``schedule`` (met pairs only)."""
    counts: dict[frozenset[EntryId], int] = {}
    for rnd in schedule:
        for table in rnd.tables:
            for a, b in combinations(table.seats, 2):
                key = frozenset((a, b))
                counts[key] = counts.get(key, 0) + 1
    return counts


def meeting_spread(entries: Sequence[EntryId], schedule: Sequence[PairedRound]) -> tuple[int, int]:
    """(fewest, most) meetings over every pair of ``entries``, unmet pairs counting 0."""
    counts = meeting_counts(schedule)
    values = [counts.get(frozenset(p), 0) for p in combinations(entries, 2)]
    return min(values), max(values)


def unmet_lower_bound(n: int, k: int, rounds: int | None = None) -> int:
    """Pairs that must stay unmet in ``rounds`` rounds of ``table_sizes(n, k)``: a counting bound.

    The rounds seat at most rounds * sum(C(s, 2)) pair meetings (s over the table
    sizes), so at least C(n, 2) minus that many pairs never meet.
    """
    if rounds is None:
        rounds = math.ceil((n - 1) / (k - 1))
    meetings = rounds * sum(s * (s - 1) // 2 for s in table_sizes(n, k))
    return max(0, n * (n - 1) // 2 - meetings)


@dataclass(frozen=True)
class Coverage:
    """One row of the coverage table: the default rounds of a k-seat round robin of n entries."""

    n: int
    k: int
    rounds: int
    sizes: tuple[int, ...]
    pairs: int
    bound: int
    unmet: int
    most: int
    how: str
    seconds: float


def coverage(n: int, k: int, seed: int = 0) -> Coverage:
    """Schedule n entries at tables of k (default rounds) and count the unmet pairs against the bound."""
    entries = list(range(n))
    started = time.thread_time()
    schedule = round_robin(entries, k, seed=seed)
    seconds = time.thread_time() - started
    counts = meeting_counts(schedule)
    pairs = n * (n - 1) // 2
    return Coverage(
        n, k, len(schedule), table_sizes(n, k), pairs, unmet_lower_bound(n, k), pairs - len(counts),
        max(counts.values()), _source(schedule[0].explanation[0]), seconds,
    )


def _source(line: str) -> str:
    """'design of v' or 'search', from a round's first explanation line."""
    found = re.search(r"resolvable design of (\d+)", line)
    return f"design of {found.group(1)}" if found else "search"


def coverage_table(max_entries: int = 40, seats: Iterable[int] = range(3, 11), seed: int = 0) -> list[Coverage]:
    """Every (n, k) with k <= n <= max_entries: the rows of docs/tournaments.md's coverage table."""
    return [coverage(n, k, seed) for k in seats for n in range(k, max_entries + 1)]


def main(argv: Sequence[str]) -> int:
    if list(argv[:1]) != ["--coverage-table"]:
        print("usage: python -m tournaments.schedule --coverage-table [MAX_ENTRIES]")
        return 2
    top = int(argv[1]) if len(argv) > 1 else 40
    print("| k | n | rounds | tables | bound | unmet | of pairs | most meetings | from | time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in coverage_table(top):
        print(f"| {row.k} | {row.n} | {row.rounds} | {'/'.join(map(str, sorted(set(row.sizes), reverse=True)))} "
              f"| {row.bound} | {row.unmet} | {row.pairs} | {row.most} | {row.how} | {row.seconds:.2f} s |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
