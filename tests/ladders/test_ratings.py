"""Elo arithmetic for ladders against values computed by hand."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest

from ladders.ratings import PROVISIONAL_MATCHES, START, Rating, pick_table, rate_match, replay


def values(result):
    return {bot: r.value for bot, r in result.items()}


def test_new_bots_start_at_1500_with_no_matches():
    assert Rating() == Rating(D("1500"), 0)
    assert START == D("1500")


def test_two_seat_win_between_equals_moves_half_of_k():
    # expected 1/2 each; 32 * (1 - 1/2) = 16
    result = rate_match({}, [("a", 1), ("b", 2)])
    assert values(result) == {"a": D("1516.00"), "b": D("1484.00")}
    assert result["a"].matches == result["b"].matches == 1


def test_two_seat_draw_between_equals_changes_nothing():
    assert values(rate_match({}, [("a", 1), ("b", 1)])) == {"a": D("1500.00"), "b": D("1500.00")}


@pytest.mark.parametrize(
    ("ranks", "favourite", "underdog"),
    [
        # E(1600 vs 1400) = 1 / (1 + 10**-0.5) = 0.7597469...
        ((1, 2), D("1607.69"), D("1392.31")),  # 1600 + 32 * 0.2402531 = 1607.688
        ((1, 1), D("1591.69"), D("1408.31")),  # 1600 - 32 * 0.2597469 = 1591.688
        ((2, 1), D("1575.69"), D("1424.31")),  # 1600 - 32 * 0.7597469 = 1575.688
    ],
)
def test_two_seat_win_draw_loss_between_unequal_ratings(ranks, favourite, underdog):
    ratings = {"fav": Rating(D("1600"), 30), "dog": Rating(D("1400"), 30)}
    result = rate_match(ratings, [("fav", ranks[0]), ("dog", ranks[1])])
    assert values(result) == {"fav": favourite, "dog": underdog}
    assert result["fav"].matches == 31


def test_three_seat_ranking_with_a_tie_is_rated_pairwise_with_k_over_two():
    # a 1600 and b 1500 share first place, c 1400 is last; each pair is worth 32/2 = 16.
    # E(100 points up) = 0.6400650, E(200 points up) = 0.7597469
    # a: 16 * (1/2 - 0.6400650) + 16 * (1 - 0.7597469) = +1.603   -> 1601.60
    # b: 16 * (1/2 - 0.3599350) + 16 * (1 - 0.6400650) = +8.000   -> 1508.00
    # c: 16 * (0 - 0.2402531) + 16 * (0 - 0.3599350)   = -9.603   -> 1390.40
    ratings = {"a": Rating(D("1600")), "b": Rating(D("1500")), "c": Rating(D("1400"))}
    result = rate_match(ratings, [("a", 1), ("b", 1), ("c", 3)])
    assert values(result) == {"a": D("1601.60"), "b": D("1508.00"), "c": D("1390.40")}


def test_updates_use_pre_match_ratings_whatever_the_listing_order():
    ratings = {"a": Rating(D("1623.17"), 4), "b": Rating(D("1480.5"), 9), "c": Rating(), "d": Rating(D("1399.99"))}
    ranking = [("a", 2), ("b", 1), ("c", 4), ("d", 2)]
    assert rate_match(ratings, ranking) == rate_match(ratings, list(reversed(ranking)))


def test_replaying_the_history_reproduces_stored_ratings_exactly():
    rng = random.Random(2026)
    bots = [f"bot{i}" for i in range(7)]
    stored: dict[str, str] = {}  # what a database column would hold, as text
    history = []
    for _ in range(300):
        seated = rng.sample(bots, rng.randint(2, 5))
        ranking = [(bot, rng.randint(1, len(seated))) for bot in seated]
        history.append(ranking)
        current = {bot: Rating(D(text), matches) for bot, (text, matches) in stored.items()}
        for bot, rating in rate_match(current, ranking).items():
            stored[bot] = (str(rating.value), rating.matches)
    rebuilt = replay(history)
    assert {bot: (str(r.value), r.matches) for bot, r in rebuilt.items()} == stored
    assert all(D(text).as_tuple().exponent == -2 for text, _ in stored.values())


def test_margin_shrinks_with_the_square_root_of_matches():
    # 1.96 * 400 / (ln 10 * 0.5 * sqrt(n + 1)) = 680.973 / sqrt(n + 1)
    assert Rating(matches=0).margin == D("680.97")
    assert Rating(matches=20).margin == D("148.60")
    assert Rating(matches=99).margin == D("68.10")
    assert Rating(D("1550.25"), 99).interval == (D("1482.15"), D("1618.35"))


def test_rating_is_provisional_below_the_threshold():
    assert PROVISIONAL_MATCHES == 20
    assert Rating(matches=19).provisional
    assert not Rating(matches=20).provisional


def test_rating_accepts_text_and_integers_exactly():
    assert Rating("1512.34").value == D("1512.34")
    assert Rating(1500).value == D("1500")
    assert Rating(1512.34).value == D("1512.34")  # a float's repr, not its binary expansion


@pytest.mark.parametrize(
    ("ranking", "message"),
    [
        ([("a", 1)], "at least 2 bots"),
        ([("a", 1), ("a", 2)], "twice"),
        ([("a", 1), ("b", 0)], "rank of 'b'"),
        ([("a", 1), ("b", "2")], "rank of 'b'"),
        ([("a", True), ("b", 2)], "rank of 'a'"),
        ([("a", 1), "b2"], "pairs"),
        ([(["a"], 1), ("b", 2)], "pairs"),
        (None, "pairs"),
    ],
)
def test_rate_match_rejects_bad_rankings_naming_them(ranking, message):
    with pytest.raises(ValueError, match=message):
        rate_match({}, ranking)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"value": "NaN"}, "finite"),
        ({"value": "Infinity"}, "finite"),
        ({"value": "abc"}, "'abc'"),
        ({"value": None}, "None"),
        ({"value": True}, "True"),
        ({"matches": -1}, "-1"),
    ],
)
def test_rating_rejects_values_that_are_not_finite_numbers(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rating(**kwargs)


def test_pick_table_with_owners_seats_each_owner_once_or_makes_no_table():
    # (name, owner, rating): the two closest to the anchor belong to the anchor's owner.
    bots = {"anchor": ("x", 1500), "x1": ("x", 1501), "x2": ("x", 1502), "y1": ("y", 1700), "y2": ("y", 1710),
            "z1": ("z", 1900)}
    rating, owner = (lambda b: Rating(bots[b][1], 50)), (lambda b: bots[b][0])
    others = [b for b in bots if b != "anchor"]
    for seed in range(50):
        table = pick_table("anchor", others, 3, rating, random.Random(seed), owner=owner)
        assert sorted(owner(b) for b in table) == ["x", "y", "z"]
        assert pick_table("anchor", others, 4, rating, random.Random(seed), owner=owner) is None
    # Without owners the closest two sit, whoever owns them.
    assert sorted(pick_table("anchor", others, 3, rating, random.Random(0))) == ["anchor", "x1", "x2"]
