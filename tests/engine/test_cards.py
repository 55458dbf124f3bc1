"""The deck and the card codes (RULES.md section 1)."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.cards import CODES, DECK, KIND_POINTS, color_of, kind_of, points


def test_deck_has_108_cards_with_the_official_counts():
    counts = Counter(CODES[k] for k in DECK)
    assert len(DECK) == 108
    for color in "RYGB":
        assert counts[f"{color}0"] == 1
        for rank in ["1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2"]:
            assert counts[f"{color}{rank}"] == 2
    assert counts["W"] == 4 and counts["W+4"] == 4


def test_points_are_face_value_twenty_for_actions_fifty_for_wilds():
    assert [points(kind_of(c)) for c in ["R0", "Y7", "G9", "BS", "RR", "Y+2", "W", "W+4"]] == [
        0, 7, 9, 20, 20, 20, 50, 50]
    assert sum(KIND_POINTS[k] for k in DECK) == 4 * (45 * 2 + 60 * 2) + 8 * 50


def test_colour_of_a_code():
    assert color_of("G+2") == "G" and color_of("W+4") is None


@pytest.mark.parametrize("code", ["R10", "w", "", "X1", None, 7])
def test_unknown_code_is_refused_with_its_value(code):
    with pytest.raises(ValueError, match="unknown card code"):
        kind_of(code)
