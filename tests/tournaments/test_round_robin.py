"""Round-robin schedules and table sizes: complete, balanced, deterministic."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.schedule import meeting_counts, meeting_spread, round_robin, skip_entries
from tournaments.tables import MAX_SEATS, MIN_SEATS, PairedRound, Table, table_sizes


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def assert_each_entry_once_per_round(entries, schedule):
    for rnd in schedule:
        used = rnd.entries()
        assert sorted(used) == sorted(entries), f"round {rnd.number}: {used}"


# --- table sizes -------------------------------------------------------------

@pytest.mark.parametrize(
    ("n", "k", "sizes"),
    [
        (8, 2, (2, 2, 2, 2)),
        (7, 2, (2, 2, 2)),  # two seats never take a third player: one bye
        (12, 4, (4, 4, 4)),
        (7, 3, (4, 3)),  # one table of k+1 beats two tables of k-1
        (10, 4, (4, 3, 3)),  # two off-size tables either way: the smaller tables win
        (5, 3, (3, 2)),
        (3, 4, (3,)),
        (17, 10, (10,)),  # neither 9s nor 11s fit: 7 byes
    ],
)
def test_table_sizes_prefer_near_k_tables_over_byes(n, k, sizes):
    assert table_sizes(n, k) == sizes


@pytest.mark.parametrize(("n", "k"), [(2, 4), (1, 2), (5, 1), (5, 11), (5, True)])
def test_table_sizes_reject_impossible_fields(n, k):
    with pytest.raises(ValueError):
        table_sizes(n, k)


@given(st.integers(2, 60), st.integers(MIN_SEATS, MAX_SEATS))
def test_table_sizes_stay_within_k_plus_minus_one(n, k):
    if n < max(k - 1, 2):
        with pytest.raises(ValueError, match=str(n)):
            table_sizes(n, k)
        return
    sizes = table_sizes(n, k)
    lo, hi = (2, 2) if k == 2 else (max(k - 1, MIN_SEATS), min(k + 1, MAX_SEATS))
    assert all(lo <= s <= hi for s in sizes)
    assert sum(sizes) <= n
    # Byes only when no extra table of the smallest size could be formed from them.
    assert n - sum(sizes) < lo or all(s == hi for s in sizes)


# --- two seats: circle method ------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(2, 17), st.integers(1, 2))
def test_two_seat_round_robin_every_pair_meets_once_per_cycle(n, cycles):
    entries = names(n)
    schedule = round_robin(entries, cycles=cycles)
    assert len(schedule) == cycles * (n - 1 if n % 2 == 0 else n)
    assert_each_entry_once_per_round(entries, schedule)
    counts = meeting_counts(schedule)
    assert len(counts) == n * (n - 1) // 2
    assert set(counts.values()) == {cycles}
    byes = Counter(e for rnd in schedule for e in rnd.byes)
    assert all(len(rnd.byes) == n % 2 for rnd in schedule)
    assert byes == (Counter({e: cycles for e in entries}) if n % 2 else Counter())


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 17))
def test_two_seat_round_robin_balances_first_seat(n):
    entries = names(n)
    schedule = round_robin(entries)
    first = Counter(t.seats[0] for rnd in schedule for t in rnd.tables)
    games = Counter(e for rnd in schedule for t in rnd.tables for e in t.seats)
    for e in entries:
        assert abs(2 * first[e] - games[e]) <= 1, (e, first[e], games[e])


def test_second_cycle_swaps_the_seats_of_every_pairing():
    schedule = round_robin(names(6), cycles=2)
    first_cycle = [t.seats for rnd in schedule[:5] for t in rnd.tables]
    second_cycle = [t.seats for rnd in schedule[5:] for t in rnd.tables]
    assert second_cycle == [(b, a) for a, b in first_cycle]


def test_round_robin_is_deterministic_from_the_seed():
    a = round_robin(names(8), seed=11)
    assert a == round_robin(names(8), seed=11)
    assert a != round_robin(names(8), seed=12)
    assert round_robin(names(9), 3, seed=5) == round_robin(names(9), 3, seed=5)
    assert round_robin(names(9), 3, seed=5) != round_robin(names(9), 3, seed=6)


def test_round_robin_explains_byes():
    schedule = round_robin(["a", "b", "c"])
    assert [rnd.byes for rnd in schedule] == [("a",), ("b",), ("c",)]
    assert any("bye to a" in line for line in schedule[0].explanation)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"entries": ["a", "a", "b"]}, "duplicate"),
        ({"entries": ["a"]}, "at least 2"),
        ({"entries": ["a", "b", "c"], "seats": 11}, "11"),
        ({"entries": ["a", "b", "c"], "cycles": 0}, "cycles"),
        ({"entries": ["a", "b", "c"], "rounds": 3}, "rounds"),
        ({"entries": names(6), "seats": 3, "rounds": 0}, "rounds"),
        ({"entries": names(6), "seats": 3, "cycles": 2}, "cycles=2"),
        ({"entries": [["unhashable"], "b"]}, "hashable"),
    ],
)
def test_round_robin_rejects_bad_input_with_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        round_robin(**kwargs)


# --- k seats -------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(st.integers(3, 16), st.integers(3, MAX_SEATS), st.integers(0, 2**32))
def test_k_seat_round_robin_tables_are_legal_and_byes_rotate(n, k, seed):
    if n < k - 1:
        return
    entries = names(n)
    schedule = round_robin(entries, k, seed=seed)
    assert len(schedule) == -(-(n - 1) // (k - 1))
    assert_each_entry_once_per_round(entries, schedule)
    sizes = table_sizes(n, k)
    for rnd in schedule:
        assert sorted(len(t.seats) for t in rnd.tables) == sorted(sizes)
    byes = Counter(e for rnd in schedule for e in rnd.byes)
    assert max(byes[e] for e in entries) - min(byes[e] for e in entries) <= 1


@pytest.mark.parametrize(
    ("n", "k", "rounds", "spread"),
    [
        # Resolvable designs exist here (Kirkman triples of 9, affine plane of order 4)
        # and the search finds them: every pair meets exactly once.
        (9, 3, 4, (1, 1)),
        (16, 4, 5, (1, 1)),
        # Measured figures of docs/tournaments.md: nobody meets anyone three times.
        (20, 5, 5, (0, 2)),
        # With more rounds every pair meets.
        (12, 4, 8, (1, 3)),
    ],
)
def test_k_seat_round_robin_meets_pairs_evenly(n, k, rounds, spread):
    entries = names(n)
    schedule = round_robin(entries, k, rounds=rounds, seed=1)
    assert meeting_spread(entries, schedule) == spread


def test_k_seat_round_robin_gives_each_entry_the_first_seat_in_turn():
    entries = names(12)
    schedule = round_robin(entries, 4, rounds=6, seed=2)
    first = Counter(t.seats[0] for rnd in schedule for t in rnd.tables)
    # 6 rounds x 3 tables = 18 first seats over 12 entries: 1 or 2 each.
    assert sorted(set(first[e] for e in entries)) == [1, 2]


@pytest.mark.parametrize("seed", range(5))
def test_nine_entries_in_triples_meet_every_pair_exactly_once_whatever_the_seed(seed):
    entries = names(9)
    schedule = round_robin(entries, 3, seed=seed)
    counts = meeting_counts(schedule)
    assert all(counts.get(frozenset(p), 0) == 1 for p in combinations(entries, 2))


def test_k_seat_round_robin_states_its_balance_for_the_organiser():
    entries = names(12)
    schedule = round_robin(entries, 4, seed=1)
    lo, hi = meeting_spread(entries, schedule)
    unmet = sum(1 for p in combinations(entries, 2) if frozenset(p) not in meeting_counts(schedule))
    assert f"each pair meets {lo} to {hi} times ({unmet} of 66 pairs never)" in schedule[0].explanation[0]


def test_k_seat_round_robin_without_search_steps_is_still_legal_but_less_even(monkeypatch):
    # 19 entries at 4 seats: no design is near, so the greedy start and the search do the work.
    entries = names(19)
    searched = round_robin(entries, 4, seed=1)
    monkeypatch.setattr("tournaments.schedule.MAX_SEARCH_STEPS", 0)
    monkeypatch.setattr("tournaments.schedule.MAX_POLISH_STEPS", 0)
    greedy = round_robin(entries, 4, seed=1)
    assert_each_entry_once_per_round(entries, greedy)
    assert "by seeded search" in greedy[0].explanation[0]
    assert len(meeting_counts(searched)) > len(meeting_counts(greedy))  # more pairs meet after the search


def test_a_design_is_used_as_it_is_without_search(monkeypatch):
    entries = names(16)
    monkeypatch.setattr("tournaments.schedule.MAX_SEARCH_STEPS", 0)
    monkeypatch.setattr("tournaments.schedule.MAX_POLISH_STEPS", 0)
    schedule = round_robin(entries, 4, seed=1)
    assert meeting_spread(entries, schedule) == (1, 1)
    assert "from the resolvable design of 16 at 4 seats" in schedule[0].explanation[0]


def test_withdrawn_entry_is_skipped_and_its_lone_opponent_gets_a_bye():
    rnd = PairedRound(3, (Table(("a", "b")), Table(("c", "d", "e")), Table(("f", "g"))), ("h",))
    later = skip_entries(rnd, ["b", "d", "h"])
    assert later.tables == (Table(("c", "e")), Table(("f", "g")))
    assert later.byes == ("a",)
    assert "bye to a: b left the event" in later.explanation
    assert "d left: c, e play on" in later.explanation


def test_skipping_entries_keeps_every_remaining_entry_once():
    entries = names(9)
    for rnd in round_robin(entries, 3, seed=4):
        later = skip_entries(rnd, entries[:4])
        assert sorted(later.entries()) == entries[4:]
        assert all(len(t.seats) >= 2 for t in later.tables)


def _naive_spread(schedule) -> float:
    """The neighbour spread of the same tables seated in the order the entries were drawn (no balancing)."""
    from tournaments.seating import neighbour_spread

    return neighbour_spread([sorted(t.seats) for rnd in schedule for t in rnd.tables])


@pytest.mark.parametrize(("n", "k", "rounds"), [(8, 4, 14), (12, 4, 12), (10, 5, 10), (20, 7, 9)])
def test_k_seat_round_robin_balances_who_sits_directly_after_whom(n, k, rounds):
    from tournaments.seating import neighbour_spread

    schedule = round_robin(names(n), k, rounds=rounds, seed=3)
    spread = neighbour_spread([t.seats for rnd in schedule for t in rnd.tables])
    # Of the tables two entries share, each follows the other about 1/(k-1) of them: within one table.
    assert spread <= 1.0 + 1e-9
    assert spread < _naive_spread(schedule)


def test_twelve_at_four_seats_leave_fewer_pairs_unmet_than_before():
    # 12 of 66 for every seed before the designs (commit 3852a26); restarts find 11, at the price of a triple
    entries = names(12)
    schedule = round_robin(entries, 4, rounds=4, seed=1)
    assert 66 - len(meeting_counts(schedule)) <= 11
