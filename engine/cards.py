"""The 108 UNO cards: codes, colours, ranks and points (RULES.md section 1).

The only module that knows card codes. Inside the engine a card is an int:
a *physical* card id 0..107 (``DECK[id]`` gives its kind) or a card *kind*
0..53 (``CODES[kind]`` gives its code). Pure: standard library only.

>>> CODES[kind_of("Y+2")], points(kind_of("W+4"))
('Y+2', 50)
"""

from __future__ import annotations

from typing import Any

#: colour letters, indexed by colour number
COLORS = ("R", "Y", "G", "B")
COLOR_INDEX = {c: i for i, c in enumerate(COLORS)}

#: rank numbers: 0..9 number cards, then the action cards
SKIP, REVERSE, DRAW_TWO, WILD, WILD_DRAW_FOUR = 10, 11, 12, 13, 14
_RANK_CODES = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "+2")

#: kind -> code; coloured kinds are colour * 13 + rank, then W and W+4
CODES: tuple[str, ...] = tuple(c + r for c in COLORS for r in _RANK_CODES) + ("W", "W+4")
KIND: dict[str, int] = {code: k for k, code in enumerate(CODES)}
WILD_KIND = KIND["W"]
WILD_DRAW_FOUR_KIND = KIND["W+4"]
NUM_KINDS = len(CODES)

#: kind -> colour number, or -1 for the two wilds
KIND_COLOR: tuple[int, ...] = tuple(k // 13 for k in range(52)) + (-1, -1)
#: kind -> rank number (0..9, SKIP, REVERSE, DRAW_TWO, WILD, WILD_DRAW_FOUR)
KIND_RANK: tuple[int, ...] = tuple(k % 13 for k in range(52)) + (WILD, WILD_DRAW_FOUR)
#: kind -> points left in a hand at scoring
KIND_POINTS: tuple[int, ...] = tuple(r if r < 10 else 20 for r in KIND_RANK[:52]) + (50, 50)

#: colour letter -> its word, as pages and screen readers say it
COLOR_NAMES: dict[str, str] = {"R": "red", "Y": "yellow", "G": "green", "B": "blue"}
_RANK_NAMES = (*(str(n) for n in range(10)), "skip", "reverse", "draw two", "wild", "wild draw four")
#: kind -> the card's name in words ("green 6", "red draw two", "wild draw four")
KIND_NAMES: tuple[str, ...] = tuple(
    _RANK_NAMES[rank] if color < 0 else f"{COLOR_NAMES[COLORS[color]]} {_RANK_NAMES[rank]}"
    for color, rank in zip(KIND_COLOR, KIND_RANK, strict=True)
)


def _build_deck() -> tuple[int, ...]:
    kinds: list[int] = []
    for color in range(4):
        kinds.append(color * 13)  # one 0 per colour
        for rank in range(1, 13):
            kinds.extend((color * 13 + rank,) * 2)
    kinds.extend((WILD_KIND,) * 4)
    kinds.extend((WILD_DRAW_FOUR_KIND,) * 4)
    return tuple(kinds)


#: physical card id -> kind; the full deck, 108 cards
DECK: tuple[int, ...] = _build_deck()
DECK_SIZE = len(DECK)
assert DECK_SIZE == 108


def kind_of(code: str) -> int:
    """The kind number of a card code; ``ValueError`` for anything else.

    >>> kind_of("R7")
    7
    """
    try:
        return KIND[code]
    except (KeyError, TypeError):
        raise ValueError(f"unknown card code: {code!r} (e.g. R7, GS, BR, Y+2, W, W+4)") from None


def color_of(code: str) -> str | None:
    """The colour letter of a card code, None for a wild."""
    c = KIND_COLOR[kind_of(code)]
    return None if c < 0 else COLORS[c]


def points(kind: int) -> int:
    """Points a card kind counts when left in a hand."""
    return KIND_POINTS[kind]


def is_color(value: object) -> bool:
    """True for one of the four colour letters."""
    return isinstance(value, str) and value in COLOR_INDEX


#: rank number -> the word the replay viewer draws it by (number cards keep their number)
_RANK_WORDS: dict[int, str] = {
    SKIP: "skip",
    REVERSE: "reverse",
    DRAW_TWO: "draw_two",
    WILD: "wild",
    WILD_DRAW_FOUR: "wild_draw_four",
}


def card_table() -> dict[str, Any]:
    """Every card code with its colour (None for a wild), rank and name in words, in deck order,
    and the colours' names: what the replay viewer draws cards by, so it never parses or names a
    card itself.

    >>> table = card_table()
    >>> table["cards"]["G+2"], table["cards"]["W"]["color"], table["color_names"]["Y"]
    ({'color': 'G', 'rank': 'draw_two', 'name': 'green draw two', 'order': 38}, None, 'yellow')
    """
    return {
        "colors": list(COLORS),
        "color_names": dict(COLOR_NAMES),
        "cards": {
            code: {
                "color": COLORS[KIND_COLOR[kind]] if KIND_COLOR[kind] >= 0 else None,
                "rank": _RANK_WORDS.get(KIND_RANK[kind], KIND_RANK[kind]),
                "name": KIND_NAMES[kind],
                "order": kind,
            }
            for kind, code in enumerate(CODES)
        },
    }
