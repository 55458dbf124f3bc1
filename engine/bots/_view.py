"""What the reference bots read from an observation, in the game's words.

Card knowledge comes from ``engine.cards`` (the only module that knows card
codes); this module turns an observation's codes into colours, ranks and
counts. Pure: depends on ``engine.cards`` only.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine.cards import (
    CODES,
    COLORS,
    DECK,
    DRAW_TWO,
    KIND,
    KIND_COLOR,
    KIND_POINTS,
    KIND_RANK,
    REVERSE,
    SKIP,
    WILD_DRAW_FOUR,
)

#: code -> colour letter, None for a wild
COLOR: dict[str, str | None] = {
    code: (None if KIND_COLOR[k] < 0 else COLORS[KIND_COLOR[k]]) for code, k in KIND.items()
}
#: code -> rank number (engine.cards: 0..9, SKIP, REVERSE, DRAW_TWO, WILD, WILD_DRAW_FOUR)
RANK: dict[str, int] = {code: KIND_RANK[k] for code, k in KIND.items()}
#: code -> points left in a hand
POINTS: dict[str, int] = {code: KIND_POINTS[k] for code, k in KIND.items()}
#: code -> copies of it in the full deck
DECK_COUNT: dict[str, int] = dict(Counter(CODES[k] for k in DECK))
#: colour letter -> how many cards of that colour the full deck holds
DECK_COLOR_COUNT: dict[str, int] = dict(
    Counter(COLORS[KIND_COLOR[k]] for k in DECK if KIND_COLOR[k] >= 0)
)
#: cards that make the next player lose the turn
BLOCKERS = frozenset(code for code, r in RANK.items() if r in (SKIP, DRAW_TWO, WILD_DRAW_FOUR))
DRAW_TWOS = frozenset(code for code, r in RANK.items() if r == DRAW_TWO)
REVERSES = frozenset(code for code, r in RANK.items() if r == REVERSE)
WILD_DRAW_FOURS = frozenset(code for code, r in RANK.items() if r == WILD_DRAW_FOUR)


def of_type(legal: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The legal actions of one ``type`` (``play``, ``draw``, ``pass``, ...)."""
    return [a for a in legal if a.get("type") == kind]


def is_wild(code: str) -> bool:
    """True for ``W`` and ``W+4``."""
    return COLOR[code] is None


def color_counts(hand: list[str]) -> Counter[str]:
    """Colour letter -> number of coloured cards of it in ``hand``."""
    return Counter(color for c in hand if (color := COLOR[c]) is not None)


def without(hand: list[str], card: str) -> list[str]:
    """``hand`` after one copy of ``card`` left it."""
    rest = list(hand)
    rest.remove(card)
    return rest


def unseen_cards(observation: dict[str, Any]) -> dict[str, int]:
    """Code -> copies of it this seat has not seen (other hands and draw pile)."""
    unseen = dict(DECK_COUNT)
    for c in observation["hand"]:
        unseen[c] -= 1
    for c in observation["discard"]:
        unseen[c] -= 1
    return unseen


def unseen_by_color(observation: dict[str, Any]) -> dict[str, int]:
    """Colour -> cards of it this seat has not seen (other hands and draw pile)."""
    seen = color_counts(observation["hand"]) + color_counts(observation["discard"])
    return {c: DECK_COLOR_COUNT[c] - seen[c] for c in COLORS}


def best_color(hand: list[str], observation: dict[str, Any] | None = None) -> str:
    """The colour to name: the one held most (by cards, then points).

    With an observation, ties go to the colour the others are least likely to
    hold (fewest unseen cards), so the named colour stays ours.
    """
    count: Counter[str] = Counter()
    pts: Counter[str] = Counter()
    for c in hand:
        col = COLOR[c]
        if col is not None:
            count[col] += 1
            pts[col] += POINTS[c]
    unseen = unseen_by_color(observation) if observation is not None else {}
    return max(COLORS, key=lambda col: (count[col], pts[col], -unseen.get(col, 0)))


def next_seat(observation: dict[str, Any]) -> int:
    """The seat that plays after this one in the current direction."""
    seat: int = observation["seat"]
    direction: int = observation["direction"]
    players: int = observation["players"]
    return (seat + direction) % players


def previous_seat(observation: dict[str, Any]) -> int:
    """The seat that played before this one in the current direction."""
    seat: int = observation["seat"]
    direction: int = observation["direction"]
    players: int = observation["players"]
    return (seat - direction) % players


def with_color(actions: list[dict[str, Any]], color: str) -> dict[str, Any]:
    """The action naming ``color`` among wild variants of one card, else the first."""
    for a in actions:
        if a.get("color") == color:
            return a
    return actions[0]
