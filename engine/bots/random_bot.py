"""``random``: a uniformly chosen legal action, reproducible from the observation.

The choice is a hash of what the seat sees, so a game stays determined by
(rules, seats, seed, actions) and a rerun replays byte for byte, in any
process (no module state; ``hash()`` of a tuple of ints is not salted, only
that of strings and bytes is).

>>> obs = {"legal_actions": [{"type": "draw"}]}
>>> agent(obs, {})
{'type': 'draw'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def agent(observation: Mapping[str, Any], configuration: Mapping[str, Any]) -> Any:
    """Pick one of ``observation["legal_actions"]`` uniformly, deterministically."""
    return pick(observation, observation["legal_actions"])


def pick(observation: Mapping[str, Any], legal: Sequence[Any]) -> Any:
    """One of ``legal`` (the listed actions, or a part of them) as ``agent`` picks it.

    >>> pick({}, [{"type": "draw"}])
    {'type': 'draw'}
    """
    n = len(legal)
    if n == 1:
        return legal[0]
    o = observation
    # Ints only (strings would make the hash differ between processes). What
    # changes from one decision to the next is in it, so consecutive decisions
    # get independent-looking choices; the decision names differ in length.
    h = hash((o["draw_pile"], len(o["discard"]), len(o["hand"]), o["seat"], len(o["decision"]), o["round"]))
    # the tuple hash is a good mix of its items; its low 32 bits scaled to n
    return legal[((h & 0xFFFFFFFF) * n) >> 32]
