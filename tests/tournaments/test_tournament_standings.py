"""Standings, tie-breaks and the crosstable against small events computed by hand."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.standings import crosstable, placement_points, standings
from tournaments.tables import Bye, TableResult


def win(rnd, a, b, points=()):
    return TableResult(rnd, (a, b), (1, 2), points)


def draw(rnd, a, b, points=()):
    return TableResult(rnd, (a, b), (1, 1), points)


# Four entries, full round robin:
#   R1 a beats b, c draws d;  R2 a draws c, b beats d;  R3 a beats d, b draws c.
# points     a 5/2, b 3/2, c 3/2, d 1/2
# buchholz   a 3/2+3/2+1/2 = 7/2, b 5/2+1/2+3/2 = 9/2, c 1/2+5/2+3/2 = 9/2, d 3/2+3/2+5/2 = 11/2
# s-berger   a 3/2 + 3/4 + 1/2 = 11/4, b 1/2 + 3/4 = 5/4, c 1/4 + 5/4 + 3/4 = 9/4, d 3/4
# game pts   a 150+80+90 = 320, b 40+100+75 = 215, c 60+80+70 = 210, d 60+10+5 = 75
ROUND_ROBIN = [
    win(1, "a", "b", (150, 40)),
    draw(1, "c", "d", (60, 60)),
    draw(2, "a", "c", (80, 80)),
    win(2, "b", "d", (100, 10)),
    win(3, "a", "d", (90, 5)),
    draw(3, "b", "c", (75, 70)),
]


def by_entry(lines):
    return {s.entry: s for s in lines}


def test_placement_points_share_tied_places():
    assert placement_points((1, 2)) == (1, 0)
    assert placement_points((1, 1)) == (F(1, 2), F(1, 2))
    assert placement_points((1, 1, 3)) == (F(3, 4), F(3, 4), 0)
    assert placement_points((2, 1, 3)) == (F(1, 2), 1, 0)
    assert placement_points((1, 2, 2, 4)) == (1, F(1, 2), F(1, 2), 0)


def test_two_seat_points_and_tie_breaks_match_the_hand_computation():
    lines = standings("abcd", ROUND_ROBIN)
    assert [s.entry for s in lines] == ["a", "c", "b", "d"]
    assert [s.rank for s in lines] == [1, 2, 3, 4]
    s = by_entry(lines)
    assert [s[e].points for e in "abcd"] == [F(5, 2), F(3, 2), F(3, 2), F(1, 2)]
    assert [s[e].tie_breaks["buchholz"] for e in "abcd"] == [F(7, 2), F(9, 2), F(9, 2), F(11, 2)]
    assert [s[e].tie_breaks["sonneborn_berger"] for e in "abcd"] == [F(11, 4), F(5, 4), F(9, 4), F(3, 4)]
    assert [s[e].tie_breaks["game_points"] for e in "abcd"] == [320, 215, 210, 75]
    # Sonneborn-Berger separated b and c before head-to-head came up: never computed.
    assert all(s[e].tie_breaks["head_to_head"] is None for e in "abcd")
    assert [s[e].played for e in "abcd"] == [3, 3, 3, 3]


def test_tie_break_order_is_configurable():
    lines = standings("abcd", ROUND_ROBIN, tie_breaks=("game_points", "sonneborn_berger"))
    assert [s.entry for s in lines] == ["a", "b", "c", "d"]
    assert set(lines[1].tie_breaks) == {"game_points", "sonneborn_berger"}
    # b and c drew each other: level on head-to-head, then Sonneborn-Berger decides.
    lines = standings("abcd", ROUND_ROBIN, tie_breaks=("head_to_head", "sonneborn_berger"))
    assert [s.entry for s in lines] == ["a", "c", "b", "d"]
    s = by_entry(lines)
    assert s["b"].tie_breaks["head_to_head"] == s["c"].tie_breaks["head_to_head"] == F(1, 2)


# R1 q beats s, z beats w;  R2 s beats w, z beats q.  q and s tie on 1 point; q beat s.
HEAD_TO_HEAD = [win(1, "q", "s"), win(1, "z", "w"), win(2, "s", "w"), win(2, "z", "q")]


def test_head_to_head_orders_entries_tied_on_points():
    lines = standings(["s", "q", "z", "w"], HEAD_TO_HEAD, tie_breaks=("head_to_head",))
    assert [(s.entry, s.rank) for s in lines] == [("z", 1), ("q", 2), ("s", 3), ("w", 4)]
    s = by_entry(lines)
    assert (s["q"].tie_breaks["head_to_head"], s["s"].tie_breaks["head_to_head"]) == (1, 0)


def test_entries_level_on_everything_share_a_rank_in_entry_order():
    lines = standings(["s", "q", "z", "w"], HEAD_TO_HEAD, tie_breaks=())
    assert [(s.entry, s.rank) for s in lines] == [("z", 1), ("s", 2), ("q", 2), ("w", 4)]


def test_a_seed_reorders_only_full_ties():
    cycle = [win(1, "x", "y"), win(2, "y", "z"), win(3, "z", "x")]
    orders = {tuple(s.entry for s in standings("xyz", cycle, seed=seed)) for seed in range(10)}
    assert len(orders) > 1
    for seed in range(10):
        lines = standings("xyz", cycle, seed=seed)
        assert [s.rank for s in lines] == [1, 1, 1]
        assert lines == standings("xyz", cycle, seed=seed)


def test_bye_scores_a_win_and_adds_no_opponent():
    lines = standings("abc", [win(1, "a", "b"), Bye(1, "c")])
    s = by_entry(lines)
    assert (s["c"].points, s["c"].byes, s["c"].played) == (1, 1, 0)
    assert s["c"].tie_breaks["buchholz"] == 0
    assert s["a"].tie_breaks["buchholz"] == 0  # b scored nothing
    assert s["b"].tie_breaks["buchholz"] == 1


# Four entries at 3-seat tables:
#   R1 (a, b, c) ranks (1, 1, 3): a 3/4, b 3/4, c 0; d has a bye: 1
#   R2 (b, c, d) ranks (3, 1, 2): b 0, c 1, d 1/2; a has a bye: 1
# points     a 7/4, b 3/4, c 1, d 3/2
# buchholz   a (3/4 + 1)/2 = 7/8
#            b (7/4 + 1)/2 + (1 + 3/2)/2 = 21/8
#            c (7/4 + 3/4)/2 + (3/4 + 3/2)/2 = 19/8
#            d (3/4 + 1)/2 = 7/8
# s-berger   a (1/2 * 3/4 + 1 * 1)/2 = 11/16
#            b (1/2 * 7/4 + 1 * 1)/2 + 0 = 15/16
#            c 0 + (1 * 3/4 + 1 * 3/2)/2 = 9/8
#            d (1 * 3/4 + 0)/2 = 3/8
THREE_SEATS = [
    TableResult(1, ("a", "b", "c"), (1, 1, 3), (120, 120, 0)),
    Bye(1, "d"),
    TableResult(2, ("b", "c", "d"), (3, 1, 2), (0, 200, 50)),
    Bye(2, "a"),
]


def test_k_seat_placement_points_and_tie_breaks_match_the_hand_computation():
    lines = standings("abcd", THREE_SEATS)
    assert [s.entry for s in lines] == ["a", "d", "c", "b"]
    s = by_entry(lines)
    assert [s[e].points for e in "abcd"] == [F(7, 4), F(3, 4), 1, F(3, 2)]
    assert [s[e].tie_breaks["buchholz"] for e in "abcd"] == [F(7, 8), F(21, 8), F(19, 8), F(7, 8)]
    assert [s[e].tie_breaks["sonneborn_berger"] for e in "abcd"] == [
        F(11, 16), F(15, 16), F(9, 8), F(3, 8)
    ]
    assert [s[e].tie_breaks["game_points"] for e in "abcd"] == [120, 120, 200, 50]


def test_withdrawn_entry_keeps_its_place_and_disqualified_entry_goes_last():
    lines = standings("abcd", ROUND_ROBIN, withdrawn=["c"], disqualified=["a"])
    assert [(s.entry, s.rank, s.status) for s in lines] == [
        ("c", 1, "withdrawn"),
        ("b", 2, "active"),
        ("d", 3, "active"),
        ("a", 4, "disqualified"),
    ]
    # Results against the disqualified entry stay: c keeps its draw with a.
    s = by_entry(lines)
    assert s["c"].points == F(3, 2)
    assert s["a"].points == F(5, 2)


def test_crosstable_lists_each_result_from_the_row_entry_view():
    lines = standings("abcd", ROUND_ROBIN)
    table = crosstable(lines, ROUND_ROBIN)
    assert table.order == ("a", "c", "b", "d")
    assert table.cells[("a", "b")] == (1,)
    assert table.cells[("b", "a")] == (0,)
    assert table.cells[("c", "d")] == (F(1, 2),)
    assert table.to_text() == "\n".join(
        [
            "         1     2     3     4",
            " 1 a     x     =     1     1",
            " 2 c     =     x     =     =",
            " 3 b     0     =     x     1",
            " 4 d     0     =     0     x",
        ]
    )


def test_crosstable_of_a_double_round_robin_keeps_both_games():
    history = [win(1, "a", "b"), draw(2, "b", "a")]
    table = crosstable(standings("ab", history), history)
    assert table.cells[("a", "b")] == (1, F(1, 2))
    assert " 1 a     x    1=" in table.to_text()


def test_crosstable_refuses_multi_seat_tables():
    with pytest.raises(ValueError, match="2-seat"):
        crosstable(standings("abcd", THREE_SEATS), THREE_SEATS)


@pytest.mark.parametrize(
    ("history", "kwargs", "message"),
    [
        ([win(1, "a", "zz")], {}, "unknown entry 'zz'"),
        ([win(1, "a", "b"), Bye(1, "a")], {}, "entry 'a' is paired twice"),
        ([("a", "b")], {}, "TableResult and Bye"),
        ([], {"tie_breaks": ("median",)}, "median"),
        ([], {"tie_breaks": "buchholz"}, "the string 'buchholz'"),
        ([], {"tie_breaks": ("buchholz", "buchholz")}, "distinct"),
        ([], {"withdrawn": ["zz"]}, "withdrawn entry 'zz'"),
    ],
)
def test_standings_reject_bad_input_naming_it(history, kwargs, message):
    with pytest.raises(ValueError, match=message):
        standings("abcd", history, **kwargs)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1, ("a",), (1,)), "2..10"),
        ((1, ("a", "a"), (1, 2)), "twice"),
        ((1, ("a", "b"), (1,)), "2 ranks"),
        ((1, ("a", "b"), (0, 1)), "1..2"),
        ((1, ("a", "b"), (1, True)), "1..2"),
        ((1, ("a", "b"), (1, 2), (5,)), "game points"),
        ((1, ("a", "b"), (1, 2), (5, float("nan"))), "finite"),
        ((1, ("a", "b"), (1, 2), (5, "7")), "finite"),
        ((0, ("a", "b"), (1, 2)), "positive integer, got 0"),
        (("1", ("a", "b"), (1, 2)), "positive integer, got '1'"),
        ((1, (["a"], "b"), (1, 2)), "malformed"),
        ((1, 5, (1, 2)), "malformed"),
    ],
)
def test_table_result_rejects_malformed_results(args, message):
    with pytest.raises(ValueError, match=message):
        TableResult(*args)


def test_table_result_keeps_lists_as_tuples():
    result = TableResult(1, ["a", "b"], [2, 1], [10, 20.5])
    assert (result.seats, result.ranks, result.game_points) == (("a", "b"), (2, 1), (10, 20.5))


@pytest.mark.parametrize(("args", "message"), [((0, "a"), "got 0"), ((1, ["a"]), "hashable")])
def test_bye_rejects_malformed_values(args, message):
    with pytest.raises(ValueError, match=message):
        Bye(*args)


JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 12), st.floats(allow_nan=True), st.text(max_size=3),
    st.lists(st.integers(0, 3), max_size=3), st.tuples(st.sampled_from("abcdz"), st.sampled_from("abcd")),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(JUNK, JUNK, JUNK, JUNK), max_size=6))
def test_hostile_results_are_refused_with_value_error_never_a_crash(rows):
    history = []
    for rnd, seats, ranks, points in rows:
        try:
            history.append(TableResult(rnd, seats, ranks, points or ()))
        except ValueError:
            continue
    try:
        lines = standings("abcd", history)
    except ValueError:
        return
    assert sorted(s.entry for s in lines) == ["a", "b", "c", "d"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_standings_hand_out_half_a_point_per_seat_and_rank_by_points(data):
    entries = [f"e{i}" for i in range(8)]
    history = []
    for rnd in range(1, data.draw(st.integers(1, 4)) + 1):
        pool = data.draw(st.permutations(entries))
        while len(pool) >= 2:
            k = data.draw(st.integers(2, min(4, len(pool))))
            seats, pool = tuple(pool[:k]), pool[k:]
            ranks = tuple(data.draw(st.integers(1, k)) for _ in seats)
            history.append(TableResult(rnd, seats, ranks))
        history += [Bye(rnd, e) for e in pool]
    lines = standings(entries, history)
    expected_total = sum(F(len(t.seats), 2) for t in history if isinstance(t, TableResult))
    expected_total += sum(1 for b in history if isinstance(b, Bye))
    assert sum(s.points for s in lines) == expected_total
    assert [s.points for s in lines] == sorted((s.points for s in lines), reverse=True)
    assert [s.rank for s in lines] == sorted(s.rank for s in lines)
    for a, b in zip(lines, lines[1:], strict=False):
        if a.rank == b.rank:
            assert a.points == b.points and a.tie_breaks == b.tie_breaks
