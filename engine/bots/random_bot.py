"""``random``: a uniformly chosen legal action, reproducible from the observation.

The choice is a hash of what the seat sees, so a game stays determined by
(rules, seats, seed, actions) and a rerun replays byte for byte, in any
process (no module state, no salted ``hash()``).

>>> obs = {"legal_actions": [{"type": "draw"}]}
>>> agent(obs, {})
{'type': 'draw'}
"""

from __future__ import annotations

import zlib


def agent(observation: dict, configuration: dict) -> dict:
    """Pick one of ``observation["legal_actions"]`` uniformly, deterministically."""
    legal = observation["legal_actions"]
    n = len(legal)
    if n == 1:
        return legal[0]
    o = observation
    # Everything that changes from one decision to the next goes into the hash,
    # so consecutive decisions get independent-looking choices; the numbers go
    # in as crc32's start value, the texts as its data (cheaper than formatting).
    start = (
        ((o["draw_pile"] * 131 + len(o["discard"])) * 131 + o["seat"]) * 131
        + o["round"] * 7 + o["dealer"] + sum(o["scores"])
    ) & 0xFFFFFFFF
    text = f"{o['decision']}{o['top_card']}{o['color']}{','.join(o['hand'])}{o['hand_sizes']}"
    h = zlib.crc32(text.encode(), start)
    # crc32 is linear; a multiplicative mix spreads it before scaling to n.
    h = (h * 0x9E3779B1) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    return legal[(h * n) >> 32]
