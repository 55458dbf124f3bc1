"""Swiss seeding by rating, and entries of one owner kept at different tables (pure code)."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from tournaments.pairing import seeding_order, swiss_round
from tournaments.schedule import round_robin
from tournaments.seating import neighbour_spread
from tournaments.tables import Bye, TableResult, shared_tables


def names(n: int) -> list[str]:
    return [f"e{i}" for i in range(n)]


# --- seeding -------------------------------------------------------------------------------

def test_seeding_puts_the_rated_first_by_rating_and_draws_the_unrated_after_them():
    entries = names(8)
    ratings = {"e3": 1700.0, "e5": 1650.0, "e0": 1500.0, "e6": 1650.0}
    order = seeding_order(entries, ratings, seed=1)
    assert order[:4] == ["e3", "e5", "e6", "e0"]  # equal ratings keep the entries' order
    unrated = order[4:]
    assert sorted(unrated) == ["e1", "e2", "e4", "e7"]
    assert {tuple(seeding_order(entries, ratings, seed=s)[4:]) for s in range(20)} != {tuple(unrated)}
    assert seeding_order(entries, ratings, seed=1) == order  # the same seed, the same draw


def test_seeding_refuses_a_rating_that_is_not_a_finite_number():
    with pytest.raises(ValueError, match="e1"):
        seeding_order(["e0", "e1"], {"e1": float("nan")})


def test_rated_first_round_pairs_the_top_half_against_the_bottom_half():
    entries = names(8)
    ratings = {e: 2000.0 - 10 * i for i, e in enumerate(reversed(entries))}  # e7 strongest ... e0 weakest
    rnd = swiss_round(entries, [], 1, ratings=ratings, seed=3)
    pairs = {frozenset(t.seats) for t in rnd.tables}
    # seeding e7, e6, e5, e4 | e3, e2, e1, e0: 1 v 5, 2 v 6, 3 v 7, 4 v 8
    assert pairs == {frozenset(p) for p in [("e7", "e3"), ("e6", "e2"), ("e5", "e1"), ("e4", "e0")]}
    assert any("by ladder rating" in line for line in rnd.explanation)


def test_unrated_entries_are_paired_after_the_rated_ones_in_a_seeded_draw():
    entries = names(6)
    ratings = {"e4": 1800.0, "e5": 1700.0}
    rnd = swiss_round(entries, [], 1, ratings=ratings, seed=9)
    order = seeding_order(entries, ratings, seed=9)
    assert {frozenset(t.seats) for t in rnd.tables} == {frozenset((order[i], order[i + 3])) for i in range(3)}
    assert "then 4 unrated in a seeded draw" in " ".join(rnd.explanation)


def test_rated_first_round_at_k_seats_takes_one_entry_from_each_rating_band():
    entries = names(12)
    ratings = {e: float(i) for i, e in enumerate(entries)}  # e11 strongest
    rnd = swiss_round(entries, [], 1, seats=4, ratings=ratings, seed=1)
    order = seeding_order(entries, ratings)
    band = {e: i // 3 for i, e in enumerate(order)}  # 4 bands of 3 (3 tables)
    for table in rnd.tables:
        assert sorted(band[e] for e in table.seats) == [0, 1, 2, 3]
    assert any("one entry from each band" in line for line in rnd.explanation)


def test_without_ratings_round_one_is_the_seeded_draw_as_before():
    entries = names(8)
    assert swiss_round(entries, [], 1, seed=4) == swiss_round(entries, [], 1, seed=4, ratings=None)


# --- one owner's entries at different tables -------------------------------------------------

OWNERS = {"e0": "alice", "e1": "alice", "e2": "alice", "e3": "bob", "e4": "bob"}


def play(entries, rounds, seats, apart, seed=0):
    rng = random.Random(seed)
    history = []
    for r in range(1, rounds + 1):
        rnd = swiss_round(entries, history, r, seats=seats, apart=apart, seed=seed)
        assert shared_tables([t.seats for t in rnd.tables], apart) == [], rnd.explanation
        for t in rnd.tables:
            ranks = list(range(1, len(t.seats) + 1))
            rng.shuffle(ranks)
            history.append(TableResult(r, t.seats, tuple(ranks)))
        history += [Bye(r, e) for e in rnd.byes]
    return history


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_swiss_never_seats_two_entries_of_one_owner_together(seats):
    for seed in range(4):
        play(names(12), 5, seats, OWNERS, seed=seed)  # play() asserts every round keeps them apart
    # without the constraint the same events do seat them together somewhere
    free = [h.seats for seed in range(4) for h in play(names(12), 5, seats, {}, seed=seed)
            if isinstance(h, TableResult)]
    assert shared_tables(free, OWNERS)


def test_k_seat_round_robin_keeps_one_owner_apart_in_every_round():
    schedule = round_robin(names(12), 4, seed=2, apart=OWNERS)
    assert shared_tables([t.seats for rnd in schedule for t in rnd.tables], OWNERS) == []
    # they never meet; everyone else still does as well as the search allows
    met = {frozenset(p) for rnd in schedule for t in rnd.tables for p in combinations(t.seats, 2)}
    assert frozenset(("e0", "e1")) not in met and frozenset(("e3", "e4")) not in met


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: round_robin(names(6), 2, apart={"e0": "carol", "e1": "carol"}), "owner carol has 2 entries"),
        (lambda: round_robin(names(9), 3, apart={e: "dave" for e in names(4)}), "owner dave has 4 of the 9"),
        (lambda: swiss_round(names(6), [], 1, apart={e: "erin" for e in names(4)}), "owner erin has 4 of the 6"),
        (lambda: swiss_round(names(8), [], 1, seats=4, apart={e: "finn" for e in names(3)}), "owner finn"),
    ],
)
def test_an_impossible_separation_is_refused_naming_the_owner(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_an_owner_with_half_the_field_at_two_seats_still_fits():
    apart = {e: "gina" for e in names(4)}
    rnd = swiss_round(names(8), [], 1, apart=apart, seed=1)
    assert shared_tables([t.seats for t in rnd.tables], apart) == []


# --- who sits after whom in a Swiss event ---------------------------------------------------

def test_k_seat_swiss_balances_who_sits_directly_after_whom():
    entries = names(8)
    history = play(entries, 10, 4, {}, seed=5)
    tables = [h.seats for h in history if isinstance(h, TableResult)]
    # paired round by round, so not as even as a round robin planned at once, but better than no balance
    assert neighbour_spread(tables) <= 1.5
    assert neighbour_spread(tables) < neighbour_spread([sorted(t) for t in tables])
