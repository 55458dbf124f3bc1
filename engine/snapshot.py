"""A read-only observation for trusted in-process callers: ``Game.snapshot()``.

The default observation (``Game.observation()``, BOT_CONTRACT.md) is a fresh
plain dict per decision: its own lists and its own action dicts, which the bot
may keep or change. Code that runs in the referee's process and is trusted
(reference bots, the bench, simulations, library users) may instead take a
``Snapshot``: the same 17 keys, in the same order, with the same content, but

- read-only: a ``collections.abc.Mapping`` (not a ``dict``), its sequences
  tuples, so nothing has to be copied for the bot's protection;
- ``legal_actions`` a tuple of read-only action views
  (``types.MappingProxyType`` over the engine's prebuilt action dicts), shared
  between decisions that list the same actions; a view is a legal reply to
  ``Game.apply`` exactly as the listed dict is;
- lazy where it pays: the discard pile is turned into a tuple on first access.
  What the game changes in place as it goes on (the hand, hand sizes, UNO
  flags, scores) is copied into short tuples when the snapshot is made, so a
  snapshot kept after its decision still shows that decision's state;
- ``to_dict()`` gives exactly what ``Game.observation()`` gives at that
  decision (lists, fresh action dicts): the JSON boundary.

Uploaded bots never see one: the sandbox sends plain JSON. docs/engine.md
("Observations: plain or snapshot") and docs/bots.md say who may opt in and how.

>>> from engine.game import Game
>>> from engine.rules import Rules
>>> g = Game(Rules(players=2), seed=1)
>>> s = g.snapshot()
>>> s["hand"] == tuple(g.observation()["hand"]), s.to_dict() == g.observation()
(True, True)
>>> g.apply(s["legal_actions"][0])
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

#: the observation's keys, in ``Game.observation()``'s order
KEYS: tuple[str, ...] = (
    "seat", "players", "hand", "top_card", "color", "direction", "current", "hand_sizes", "uno",
    "scores", "draw_pile", "discard", "pending_draw", "round", "dealer", "decision", "legal_actions",
)
_INDEX = {key: i for i, key in enumerate(KEYS)}
_DISCARD = _INDEX["discard"]

#: a listed action as a snapshot shows it: a read-only view of a prebuilt action dict
ActionView = MappingProxyType


class Snapshot(Mapping[str, Any]):
    """One decision's observation, read-only; values as ``Game.observation()`` but tuples and views.

    Made by ``Game.snapshot()``; ``values`` holds the 17 values in ``KEYS``
    order, except that the discard pile's place holds its length and
    ``pile`` is the game's discard list (the game only appends to it or
    replaces it, so its first ``length`` codes stay that decision's pile).
    """

    __slots__ = ("_discard", "_pile", "_values")

    def __init__(self, values: tuple[Any, ...], pile: list[str]) -> None:
        self._values = values
        self._pile = pile
        self._discard: tuple[str, ...] | None = None

    def __getitem__(self, key: str) -> Any:
        i = _INDEX[key]
        if i != _DISCARD:
            return self._values[i]
        discard = self._discard
        if discard is None:
            pile, n = self._pile, self._values[_DISCARD]
            discard = self._discard = tuple(pile) if len(pile) == n else tuple(pile[:n])
        return discard

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in _INDEX else default

    def __contains__(self, key: object) -> bool:
        return key in _INDEX

    def __iter__(self) -> Iterator[str]:
        return iter(KEYS)

    def __len__(self) -> int:
        return len(KEYS)

    def to_dict(self) -> dict[str, Any]:
        """The plain observation dict of BOT_CONTRACT.md: lists, fresh action dicts (JSON-ready)."""
        v = self._values
        return {
            "seat": v[0],
            "players": v[1],
            "hand": list(v[2]),
            "top_card": v[3],
            "color": v[4],
            "direction": v[5],
            "current": v[6],
            "hand_sizes": list(v[7]),
            "uno": list(v[8]),
            "scores": list(v[9]),
            "draw_pile": v[10],
            "discard": list(self["discard"]),
            "pending_draw": v[12],
            "round": v[13],
            "dealer": v[14],
            "decision": v[15],
            "legal_actions": [dict(a) for a in v[16]],
        }

    def __copy__(self) -> Snapshot:
        return self  # immutable: a copy is the same snapshot

    def __deepcopy__(self, memo: dict[int, Any]) -> Snapshot:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        raise TypeError("a Snapshot is not pickled: pickle its to_dict()")

    def __repr__(self) -> str:
        return f"Snapshot({self.to_dict()!r})"

