"""Rule sets: every option of RULES.md with its default and validation.

>>> Rules.parse(["players=2", "wd4=free"]).to_dict()["wd4"]
'free'

Pure: standard library only. Knows no card codes (see ``engine.cards``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.cards import DECK, DECK_SIZE, KIND_RANK, WILD_DRAW_FOUR_KIND


class RulesError(ValueError):
    """A rule option has a bad value, is unknown, or conflicts with another one."""

    def __init__(self, option: str, message: str):
        super().__init__(f"rule option {option!r}: {message}")
        self.option = option


#: option -> allowed words, for the options that take one of a few words
CHOICES: dict[str, tuple[str, ...]] = {
    "first_card": ("apply", "number_only"),
    "draw": ("one", "until_playable"),
    "wd4": ("challenge", "enforced", "free"),
    "stacking": ("off", "deflect", "stack"),
    "scoring": ("winner", "penalty"),
}
#: option -> (lowest, highest) for the integer options
BOUNDS: dict[str, tuple[int, int]] = {
    "players": (2, 10),
    "hand_size": (1, 20),
    "draw_limit": (1, DECK_SIZE),
    "uno_penalty": (0, 20),
    "target": (1, 1_000_000),
    "rounds": (1, 10_000),
    "max_turns": (1, 1_000_000),
    "max_strikes": (1, 1_000),
}
#: first_card -> most cards ``players * hand_size`` may deal (RULES.md section 2): the
#: rest of the deck must hold a card that may start the pile even if every card
#: that may not (Wild Draw Fours; every non-number card for number_only) is left
#: in it. 103 and 75 for the 108-card deck.
MAX_DEAL: dict[str, int] = {
    "apply": DECK_SIZE - DECK.count(WILD_DRAW_FOUR_KIND) - 1,
    "number_only": sum(1 for k in DECK if KIND_RANK[k] <= 9) - 1,
}
BOOLEANS = ("two_player_reverse_skips", "seven_zero", "jump_in")
#: default target per scoring (RULES.md section 7)
DEFAULT_TARGET = {"winner": 500, "penalty": 200}
_TRUE = ("true", "1", "on")
_FALSE = ("false", "0", "off")
_NONE = ("none", "off", "null")
#: an integer as people write it: ASCII digits only (``int()`` would also take ``1_0`` and other scripts' digits)
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclasses.dataclass(frozen=True)
class Rules:
    """One rule set; immutable, validated on creation.

    >>> Rules(players=3).target
    500
    """

    players: int = 4
    hand_size: int = 7
    first_card: str = "apply"
    draw: str = "one"
    draw_limit: int = 10
    two_player_reverse_skips: bool = True
    wd4: str = "challenge"
    stacking: str = "off"
    uno_penalty: int = 2
    seven_zero: bool = False
    jump_in: bool = False
    scoring: str = "winner"
    target: int | None = None  # None: DEFAULT_TARGET of the scoring
    rounds: int | None = None  # None: play to target; an int: that many rounds instead
    max_turns: int = 2000
    max_strikes: int = 3

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in CHOICES:
                if not isinstance(value, str) or value not in CHOICES[f.name]:
                    raise RulesError(f.name, f"{value!r} is not allowed (allowed: {', '.join(CHOICES[f.name])})")
            elif f.name in BOOLEANS:
                if not isinstance(value, bool):
                    raise RulesError(f.name, f"{value!r} is not a boolean (allowed: true, false)")
            elif value is None and f.name in ("target", "rounds"):
                continue
            else:
                low, high = BOUNDS[f.name]
                if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                    raise RulesError(f.name, f"{value!r} is not allowed (allowed: an integer {low}..{high})")
        if self.target is None:
            object.__setattr__(self, "target", DEFAULT_TARGET[self.scoring])
        deal, most = self.players * self.hand_size, MAX_DEAL[self.first_card]
        if deal > most:
            raise RulesError(
                "hand_size",
                f"{self.players} players x {self.hand_size} cards = {deal} is too large a deal: at most "
                f"{most} cards with first_card={self.first_card} (so that a starting card is sure to be left; "
                f"at most {most // self.players} cards each for {self.players} players)",
            )
        if self.stacking != "off" and self.wd4 == "challenge":
            raise RulesError(
                "stacking",
                f"{self.stacking!r} requires wd4=enforced or wd4=free (got wd4=challenge)",
            )

    @classmethod
    def parse(cls, items: Iterable[str]) -> Rules:
        """Rules from ``key=value`` strings (booleans true/false/1/0/on/off).

        >>> Rules.parse(["stacking=stack", "wd4=free"]).stacking
        'stack'
        """
        values: dict[str, Any] = {}
        texts: dict[str, str] = {}
        for item in items:
            if not isinstance(item, str) or "=" not in item:
                raise RulesError(str(item), f"expected key=value, got {item!r}")
            key, _, text = item.partition("=")
            key, text = key.strip(), text.strip()
            if key in texts:
                raise RulesError(key, f"given twice ({texts[key]!r} and {text!r}); give each option once")
            values[key] = _parse_value(key, text)
            texts[key] = text
        rules = cls.from_dict(values)
        # an option typed that would have no effect is a mistake, not a setting
        if values.get("target") is not None and rules.rounds is not None:
            raise RulesError(
                "target",
                f"target={texts['target']} has no effect with rounds={rules.rounds} "
                "(a fixed number of rounds instead of a target); give one of them",
            )
        if "draw_limit" in values and rules.draw == "one":
            raise RulesError(
                "draw_limit",
                f"draw_limit={texts['draw_limit']} has no effect with draw=one (it applies to draw=until_playable)",
            )
        return rules

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """Rules from a mapping of option -> value, as ``to_dict`` gives."""
        if not isinstance(data, Mapping):
            raise RulesError("rules", f"expected a mapping of options, got {type(data).__name__}")
        known = OPTIONS
        for key in data:
            if key not in known:
                raise RulesError(str(key), f"unknown option (known: {', '.join(known)})")
        return cls(**dict(data))

    def to_dict(self) -> dict[str, Any]:
        """Every option in canonical form (JSON-serialisable)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


OPTIONS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))


def _parse_value(key: str, text: str) -> Any:
    if key not in OPTIONS:
        raise RulesError(key, f"unknown option (known: {', '.join(OPTIONS)})")
    if key in CHOICES:
        return text
    low = text.lower()
    if key in BOOLEANS:
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise RulesError(key, f"{text!r} is not a boolean (allowed: true, false, 1, 0, on, off)")
    if key in ("target", "rounds") and low in _NONE:
        return None
    if _INTEGER.fullmatch(text):
        return int(text, 10)
    low_b, high_b = BOUNDS[key]
    extra = " or none" if key in ("target", "rounds") else ""
    raise RulesError(key, f"{text!r} is not an integer (allowed: {low_b}..{high_b}{extra})")
