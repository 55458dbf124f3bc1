"""``greedy``: sheds its most valuable card first, keeps wilds, names its main colour.

A one-look heuristic: no counting, no memory. Plays the highest-point coloured
card it can (ties: the colour it holds most), plays a wild only when nothing
else fits, never challenges, always answers a stack and always jumps in.
"""

from __future__ import annotations

from typing import Any, cast

from engine.bots._view import (
    COLOR,
    POINTS,
    WILD_DRAW_FOURS,
    best_color,
    color_counts,
    is_wild,
    of_type,
    with_color,
    without,
)


def agent(observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
    """Choose by the rules above; always one of ``observation["legal_actions"]``."""
    legal: list[dict[str, Any]] = observation["legal_actions"]
    decision = observation["decision"]
    hand = observation["hand"]
    if decision == "choose_color":
        return with_color(of_type(legal, "color"), best_color(hand))
    if decision == "challenge":
        return (of_type(legal, "accept") or legal)[0]
    if decision == "swap_target":
        swaps = of_type(legal, "swap")
        if not swaps:
            return legal[0]
        sizes = observation["hand_sizes"]
        return min(swaps, key=lambda a: sizes[a["target"]])
    plays = of_type(legal, "play")
    if decision == "play_drawn":
        # The drawn card is the only candidate: play it unless it is a wild worth keeping.
        if plays and not is_wild(plays[0]["card"]):
            return plays[0]
        return (of_type(legal, "pass") or legal)[0]
    if plays:
        return _best_play(plays, hand)
    # No play: draw (play), accept the stack (stack), decline (jump_in).
    for kind in ("draw", "accept", "pass"):
        found = of_type(legal, kind)
        if found:
            return found[0]
    return legal[0]


def _best_play(plays: list[dict[str, Any]], hand: list[str]) -> dict[str, Any]:
    counts = color_counts(hand)
    colored = [a for a in plays if not is_wild(a["card"])]
    if colored:
        return max(colored, key=lambda a: (POINTS[a["card"]], counts[cast(str, COLOR[a["card"]])]))
    # Only wilds fit: spend the Wild Draw Four before the plain Wild, name the main colour.
    card = max((a["card"] for a in plays), key=lambda c: (POINTS[c], c in WILD_DRAW_FOURS))
    return with_color([a for a in plays if a["card"] == card], best_color(without(hand, card)))
