"""Seating of duplicate matches: every seat once per deal, neighbours balanced over a cycle of deals."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from uno_scenarios import first_legal

from engine.match import play_match
from engine.replay import ReplayError, seating, verify
from engine.rules import BOUNDS, Rules
from engine.seating import BALANCED_CYCLIC, base_orders, describe, seat_bots

SEATS = range(3, BOUNDS["players"][1] + 1)


def _after(tables):
    """How often each bot sits directly after each other bot (seat s+1 after seat s, cyclically)."""
    counts = Counter()
    for table in tables:
        n = len(table)
        counts.update((table[s], table[(s + 1) % n]) for s in range(n))
    return counts


@pytest.mark.parametrize("n", SEATS)
def test_over_a_full_cycle_of_deals_every_bot_sits_after_every_other_equally_often(n):
    k = len(base_orders(n))
    tables = [seat_bots(n, deal, rotation, True) for deal in range(k) for rotation in range(n)]
    counts = _after(tables)
    assert set(counts) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert len(set(counts.values())) == 1
    # and in the other direction of play too (after a Reverse): the same counts
    assert _after([t[::-1] for t in tables]) == counts


@pytest.mark.parametrize("n", SEATS)
def test_the_cycle_is_as_short_as_the_seat_count_allows(n):
    # each order gives n ordered pairs, so n(n-1) pairs need at least n-1 orders;
    # 4 and 6 seats have no such decomposition (next test), so every pair twice
    assert len(base_orders(n)) == (2 * (n - 1) if n in (4, 6) else n - 1)


def _decomposition(n, limit=10**9):
    """An exhaustive search for n-1 directed Hamiltonian cycles using every ordered pair once."""
    free = {(a, b) for a in range(n) for b in range(n) if a != b}
    nodes = [0]

    def cycle(path, found):
        nodes[0] += 1
        assert nodes[0] < limit
        if len(path) == n:
            if (path[-1], 0) not in free:
                return False
            free.discard((path[-1], 0))
            if found + 1 == n - 1 or cycle([0], found + 1):
                return True
            free.add((path[-1], 0))
            return False
        for v in range(1, n):
            if v not in path and (path[-1], v) in free:
                free.discard((path[-1], v))
                if cycle(path + [v], found):
                    return True
                free.add((path[-1], v))
        return False

    return cycle([0], 0)


def test_four_seats_have_no_decomposition_into_three_cyclic_orders():
    assert not _decomposition(4)
    assert _decomposition(5) and _decomposition(3)  # the search does find them where they exist


@pytest.mark.slow
def test_six_seats_have_no_decomposition_into_five_cyclic_orders():
    assert not _decomposition(6)


@pytest.mark.parametrize("n", [2, *SEATS])
def test_every_deal_is_played_once_per_seat_by_every_bot(n):
    for deal in range(2 * len(base_orders(n)) + 1):
        tables = [seat_bots(n, deal, rotation, True) for rotation in range(n)]
        for table in tables:
            assert sorted(table) == list(range(n))
        for seat in range(n):
            assert sorted(t[seat] for t in tables) == list(range(n))


def test_deal_zero_and_two_seats_keep_the_old_rotation():
    for n in [2, *SEATS]:
        assert [seat_bots(n, 0, r, True) for r in range(n)] == [[(s - r) % n for s in range(n)] for r in range(n)]
    assert [seat_bots(2, d, r, True) for d in range(5) for r in range(2)] == [[0, 1], [1, 0]] * 5


def test_without_duplicate_bot_i_sits_at_seat_i_in_every_game():
    assert all(seat_bots(5, d, 0, False) == [0, 1, 2, 3, 4] for d in range(9))


def test_three_seats_alternate_the_two_cyclic_orders():
    assert base_orders(3) == ((0, 1, 2), (0, 2, 1))
    assert [seat_bots(3, d, 0, True) for d in range(4)] == [[0, 1, 2], [0, 2, 1], [0, 1, 2], [0, 2, 1]]


def test_seating_is_deterministic_and_bounded_by_the_rules():
    assert [base_orders(n) for n in SEATS] == [base_orders.__wrapped__(n) for n in SEATS]
    for bad in (1, 11, True, "4"):
        with pytest.raises(ValueError, match="seats"):
            base_orders(bad)


def test_a_duplicate_match_at_four_seats_records_the_balanced_seating():
    rules = Rules(players=4, rounds=1, max_turns=30)
    result = play_match(rules, [first_legal() for _ in range(4)], seed=3, deals=6, duplicate=True)
    games = result.replay["games"]
    assert len(games) == 24
    counts = _after([g["seats"] for g in games])
    assert len(counts) == 12 and set(counts.values()) == {8}  # 24 games x 4 pairs / 12
    assert [g["names"] for g in games] == [["first"] * 4] * 24
    entry = result.replay["seating"]
    assert entry == describe(4, 6, True)
    assert entry["scheme"] == BALANCED_CYCLIC and entry["orders"] == 6 and entry["balanced"] is True
    assert "6 orders" in entry["description"] and "balanced" in entry["description"]
    assert seating(result.replay) == entry
    verify(json.loads(json.dumps(result.replay)))
    again = play_match(rules, [first_legal() for _ in range(4)], seed=3, deals=6, duplicate=True)
    assert json.dumps(again.replay, sort_keys=True) == json.dumps(result.replay, sort_keys=True)


def test_a_match_short_of_a_full_cycle_says_it_is_only_partly_balanced():
    result = play_match(Rules(players=5, rounds=1, max_turns=20), [first_legal() for _ in range(5)], seed=1,
                        deals=3, duplicate=True)
    entry = result.replay["seating"]
    assert entry["orders"] == 4 and entry["balanced"] is False
    assert "not a multiple of 4" in entry["description"]


def test_two_seats_and_fixed_seats_store_no_entry_but_have_one():
    two = play_match(Rules(players=2, rounds=1), [first_legal(), first_legal()], seed=1, deals=2, duplicate=True)
    fixed = play_match(Rules(players=3, rounds=1), [first_legal() for _ in range(3)], seed=1, deals=2)
    assert "seating" not in two.replay and "seating" not in fixed.replay
    assert seating(two.replay)["scheme"] == "rotation" and seating(two.replay)["balanced"] is True
    assert seating(fixed.replay)["scheme"] == "fixed" and seating(fixed.replay)["balanced"] is False
    assert "Fixed seats" in seating(fixed.replay)["description"]


def test_an_older_duplicate_replay_without_the_entry_reads_as_the_old_cyclic_seating():
    result = play_match(Rules(players=3, rounds=1), [first_legal() for _ in range(3)], seed=1, deals=1,
                        duplicate=True)
    old = {k: v for k, v in result.replay.items() if k != "seating"}
    entry = seating(old)
    assert entry["scheme"] == "cyclic" and entry["balanced"] is False and entry["orders"] == 1
    assert "always sits directly after the same" in entry["description"]
    verify(old)
    with pytest.raises(ReplayError):
        seating({"version": 99, "games": []})
