"""Swiss pairing: score groups, byes, rematch avoidance, seats, k-seat tables."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.pairing import default_swiss_rounds, swiss_round
from tournaments.standings import standings
from tournaments.tables import Bye, TableResult, table_sizes


def win(rnd, a, b):
    return TableResult(rnd, (a, b), (1, 2))


def draw(rnd, a, b):
    return TableResult(rnd, (a, b), (1, 1))


def pairs_of(rnd):
    return {frozenset(t.seats) for t in rnd.tables}


def meetings(history):
    met = Counter()
    for item in history:
        if isinstance(item, TableResult):
            met.update(frozenset(p) for p in combinations(item.seats, 2))
    return met


def matchings(entries):
    """Every perfect matching of an even list (brute force, small lists only)."""
    if not entries:
        yield []
        return
    first, rest = entries[0], entries[1:]
    for i, other in enumerate(rest):
        for tail in matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *tail]


def fewest_repeats(active, met, bye_candidates):
    best = None
    for bye in bye_candidates:
        rest = [e for e in active if e != bye]
        for m in matchings(rest):
            cost = sum(met[frozenset(p)] for p in m)
            best = cost if best is None else min(best, cost)
    return best


def play(rnd, rng):
    """Random results for a paired round: shuffled ranks, sometimes ties."""
    out = []
    for t in rnd.tables:
        ranks = [rng.randint(1, len(t.seats)) for _ in t.seats]
        out.append(TableResult(rnd.number, t.seats, tuple(ranks)))
    return out + [Bye(rnd.number, e) for e in rnd.byes]


# --- 2 seats: properties ------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(2, 10), st.integers(1, 7), st.integers(0, 2**32), st.booleans())
def test_two_seat_swiss_pairs_fairly_in_every_round(n, rounds, seed, someone_withdraws):
    entries = [f"e{i}" for i in range(n)]
    rng = random.Random(seed)
    history = []
    withdrawn = []
    for number in range(1, rounds + 1):
        if someone_withdraws and number == 2 and n > 2:
            withdrawn = [entries[seed % n]]
        active = [e for e in entries if e not in withdrawn]
        byes_before = Counter(item.entry for item in history if isinstance(item, Bye))
        first_before = Counter(item.seats[0] for item in history if isinstance(item, TableResult))
        met = meetings(history)

        rnd = swiss_round(entries, history, number, withdrawn=withdrawn, seed=seed)

        assert rnd == swiss_round(entries, history, number, withdrawn=withdrawn, seed=seed)
        assert sorted(rnd.entries()) == sorted(active)
        assert all(len(t.seats) == 2 for t in rnd.tables)
        assert len(rnd.byes) == len(active) % 2
        fewest = min(byes_before[e] for e in active)
        candidates = [e for e in active if byes_before[e] == fewest]
        for e in rnd.byes:
            assert e in candidates, f"bye to {e} though {candidates} had fewer byes"
        cost = sum(met[frozenset(t.seats)] for t in rnd.tables)
        assert cost == fewest_repeats(active, met, candidates if len(active) % 2 else [None])
        for t in rnd.tables:
            assert first_before[t.seats[0]] <= first_before[t.seats[1]]
        history += play(rnd, rng)


def test_first_round_pairs_top_half_against_bottom_half():
    rnd = swiss_round(["a", "b", "c", "d", "e", "f"], [], 1)
    assert pairs_of(rnd) == {frozenset("ad"), frozenset("be"), frozenset("cf")}
    assert rnd.byes == ()


def test_winners_meet_winners_and_explanation_names_the_score_group():
    history = [win(1, "a", "c"), win(1, "b", "d")]
    rnd = swiss_round("abcd", history, 2)
    assert pairs_of(rnd) == {frozenset("ab"), frozenset("cd")}
    assert any(line.endswith("both 1 points") and "a" in line and "b" in line for line in rnd.explanation)


def test_odd_score_group_floats_its_lowest_entry_down():
    # a, b, c won; d, e, f lost: one of the winners must meet a loser.
    history = [win(1, "a", "d"), win(1, "b", "e"), win(1, "c", "f")]
    rnd = swiss_round("abcdef", history, 2)
    assert frozenset("ab") in pairs_of(rnd)
    assert any("c floated down from 1 to meet 0" in line for line in rnd.explanation)


def test_backtracking_avoids_a_rematch_that_greedy_pairing_would_make():
    # All on 1/2 point. Greedy top-down pairs a-d, b-e, then c-f, who already met.
    history = [draw(1, "b", "d"), draw(1, "a", "e"), draw(1, "c", "f")]
    rnd = swiss_round("abcdef", history, 2)
    assert pairs_of(rnd) == {frozenset("ad"), frozenset("bc"), frozenset("ef")}
    assert not any("rematch" in line for line in rnd.explanation)


def test_unavoidable_rematch_is_made_and_explained():
    rnd = swiss_round("ab", [win(1, "a", "b")], 2)
    assert pairs_of(rnd) == {frozenset("ab")}
    assert any("rematch (met 1 time(s) before)" in line for line in rnd.explanation)
    assert "1 repeat meeting(s): no pairing with fewer exists" in rnd.explanation


def test_search_that_runs_out_of_steps_still_pairs_everyone_and_says_so(monkeypatch):
    monkeypatch.setattr("tournaments.pairing.MAX_SEARCH_STEPS", 2)
    # The backtracking case above needs more than 2 steps to find its rematch-free pairing.
    history = [draw(1, "b", "d"), draw(1, "a", "e"), draw(1, "c", "f"), Bye(1, "g")]
    rnd = swiss_round("abcdefg", history, 2)
    assert sorted(rnd.entries()) == list("abcdefg")
    assert rnd.byes == ("f",)  # still the lowest ranked without a bye
    assert any("gave up after 2 steps" in line for line in rnd.explanation)


def test_bye_goes_to_the_lowest_ranked_entry_without_one():
    # R1 a beats b, c has the bye. R2 b is last and gets it. R3 only a has had none.
    history = [win(1, "a", "b"), Bye(1, "c")]
    second = swiss_round("abc", history, 2)
    assert second.byes == ("b",)
    assert "bye to b: lowest ranked without a bye" in second.explanation
    history += [win(2, "a", "c"), Bye(2, "b")]
    third = swiss_round("abc", history, 3)
    assert third.byes == ("a",)
    assert "bye to a: lowest ranked without a bye" in third.explanation


def test_seat_goes_to_the_entry_with_fewer_first_seats():
    # a and d sat first in round 1; a and b won.
    history = [win(1, "a", "c"), TableResult(1, ("d", "b"), (2, 1))]
    rnd = swiss_round("abcd", history, 2)
    assert {t.seats for t in rnd.tables} == {("b", "a"), ("c", "d")}


def test_withdrawn_and_disqualified_entries_are_not_paired_but_their_results_count():
    history = [win(1, "a", "b"), win(1, "c", "d"), win(1, "e", "f")]
    rnd = swiss_round("abcdef", history, 2, withdrawn=["a"], disqualified=["f"])
    assert sorted(rnd.entries()) == ["b", "c", "d", "e"]
    lines = {s.entry: s for s in standings("abcdef", history, withdrawn=["a"], disqualified=["f"])}
    assert lines["a"].points == 1 and lines["e"].points == 1


def test_pairing_is_deterministic_from_the_seed_and_results():
    entries = [f"e{i}" for i in range(10)]
    assert swiss_round(entries, [], 1, seed=4) == swiss_round(entries, [], 1, seed=4)
    assert swiss_round(entries, [], 1, seed=4) != swiss_round(entries, [], 1, seed=5)


@pytest.mark.parametrize(("n", "rounds"), [(2, 1), (8, 3), (9, 4), (64, 6), (65, 7)])
def test_default_swiss_rounds_is_ceil_log2(n, rounds):
    assert default_swiss_rounds(n) == rounds


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("ab", [win(1, "a", "b")], 1), {}, r"already has round\(s\) \[1\]"),
        (("abc", [], 1), {"withdrawn": ["a", "b"]}, "at least 2 active"),
        (("abc", [], 1), {"seats": 12}, "12"),
        (("abc", [win(1, "a", "x")], 2), {}, "unknown entry 'x'"),
        (("abc", [], 0), {}, "positive integer, got 0"),
    ],
)
def test_swiss_round_rejects_bad_input_naming_it(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        swiss_round(*args, **kwargs)


def test_default_swiss_rounds_rejects_a_single_entry():
    with pytest.raises(ValueError, match="got 1"):
        default_swiss_rounds(1)


# --- k seats ------------------------------------------------------------------

def naive_cut_repeats(entries, history, number, seats, byes):
    """Repeat meetings of the plain ranking cut into tables, for comparison."""
    ranked = [s.entry for s in standings(entries, history) if s.entry not in byes]
    met = meetings(history)
    total, start = 0, 0
    for size in table_sizes(len(entries), seats):
        table = ranked[start : start + size]
        total += sum(met[frozenset(p)] for p in combinations(table, 2))
        start += size
    return total


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 16), st.integers(3, 6), st.integers(1, 4), st.integers(0, 2**32))
def test_k_seat_swiss_tables_are_legal_and_never_worse_than_the_plain_cut(n, k, rounds, seed):
    if n < k - 1:
        return
    entries = [f"e{i}" for i in range(n)]
    rng = random.Random(seed)
    history = []
    for number in range(1, rounds + 1):
        byes_before = Counter(item.entry for item in history if isinstance(item, Bye))
        rnd = swiss_round(entries, history, number, seats=k, seed=seed)
        assert sorted(rnd.entries()) == sorted(entries)
        assert sorted(len(t.seats) for t in rnd.tables) == sorted(table_sizes(n, k))
        if rnd.byes:
            most_given = max(byes_before[e] for e in rnd.byes)
            assert all(byes_before[e] >= most_given for e in entries if e not in rnd.byes)
        met = meetings(history)
        repeats = sum(met[frozenset(p)] for t in rnd.tables for p in combinations(t.seats, 2))
        assert repeats <= naive_cut_repeats(entries, history, number, k, rnd.byes)
        history += play(rnd, rng)


def test_k_seat_swap_removes_repeat_meetings_and_says_so():
    # R1: a and b tie on top of their table, so do d and e: the plain cut of the
    # ranking g | a b d e | h | c f i would seat a with b and d with e again.
    history = [
        TableResult(1, ("a", "b", "c"), (1, 1, 3)),
        TableResult(1, ("d", "e", "f"), (1, 1, 3)),
        TableResult(1, ("g", "h", "i"), (1, 2, 3)),
    ]
    rnd = swiss_round("abcdefghi", history, 2, seats=3)
    met = meetings(history)
    assert sum(met[frozenset(p)] for t in rnd.tables for p in combinations(t.seats, 2)) == 0
    assert any("avoided 2 repeat meeting(s)" in line for line in rnd.explanation)
    assert {frozenset(t.seats) for t in rnd.tables} >= {frozenset("cfi")}


def test_k_seat_swiss_uses_smaller_tables_instead_of_byes():
    rnd = swiss_round([f"e{i}" for i in range(10)], [], 1, seats=4)
    assert sorted(len(t.seats) for t in rnd.tables) == [3, 3, 4]
    assert rnd.byes == ()
    assert "tables of 4/3/3 seat all 10 entries" in rnd.explanation


def test_k_seat_swiss_gives_byes_to_the_lowest_ranked_when_tables_cannot_seat_all():
    entries = [f"e{i:02d}" for i in range(17)]
    rnd = swiss_round(entries, [], 1, seats=10)
    assert rnd.byes == ("e16", "e15", "e14", "e13", "e12", "e11", "e10")
    assert any(line.startswith("bye to e16: lowest ranked without a bye") for line in rnd.explanation)
