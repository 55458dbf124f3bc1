"""``expert``: counts colours, saves wilds, hits a player about to go out.

Stateless (a pure function of the observation, so matches stay reproducible).
- Two seats: plays the coloured card the opponent is least likely to answer
  (hypergeometric over the unseen cards, ``_stuck``), and for a wild names a
  colour it holds that the opponent is unlikely to follow.
- Plays the coloured card that keeps it in its strongest colour, shedding
  points faster as an opponent nears going out; in two-seat games it values
  Skip/Reverse/Draw Two as a free extra turn.
- When the next seat holds one or two cards it hits it first: Draw Two, an
  honest Wild Draw Four, Skip (or Reverse with two seats). With three or more
  seats it avoids plays that hand the turn to a seat about to go out (a Skip
  to the seat after next, a Reverse to the previous seat).
- Keeps wilds: draws rather than spending one while its hand is long and
  nobody is close to going out; an honest Wild Draw Four goes before a Wild.
- Names the colour it holds most, ties to the colour the others hold least
  (counted from its hand and the discard pile).
- Challenges a Wild Draw Four only when counting makes an honest one unlikely.
- Always passes a stacked penalty on, jumps in, and swaps for the shortest hand.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from engine.bots._view import (
    BLOCKERS,
    COLOR,
    DRAW_TWOS,
    POINTS,
    RANK,
    REVERSES,
    WILD_DRAW_FOURS,
    best_color,
    color_counts,
    is_wild,
    next_seat,
    of_type,
    previous_seat,
    unseen_by_color,
    unseen_cards,
    with_color,
    without,
)
from engine.cards import COLORS

#: challenge when the estimated chance the Wild Draw Four was dishonest exceeds this;
#: high because a sensible player seldom plays it while holding the colour
CHALLENGE_THRESHOLD = 0.85
#: an opponent with at most this many cards is about to go out
THREAT = 2
#: score lost per card below THREAT + 1 of the seat a play lets move next
DANGER = 3.0
#: two seats: score of a coloured play times the chance the opponent can follow it with nothing
STUCK = 100.0
#: two seats: a named colour counts as this many cards more, times that chance
NAME_STUCK = 20.0


def agent(observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
    """Choose as the module docstring says; always one of ``legal_actions``."""
    legal = observation["legal_actions"]
    decision = observation["decision"]
    rules = configuration.get("rules") or {}
    if decision == "choose_color":
        return with_color(of_type(legal, "color"), _name(observation["hand"], observation))
    if decision == "challenge":
        return _challenge(observation, legal)
    if decision == "swap_target":
        return _swap(observation, legal)
    if decision == "play_drawn":
        return _play_drawn(observation, legal, rules)
    plays = of_type(legal, "play")
    if decision in ("stack", "jump_in"):
        # Passing a penalty on or shedding a card out of turn is always worth it.
        if plays:
            return _answer(plays, observation)
        return (of_type(legal, "accept") or of_type(legal, "pass") or legal)[0]
    if plays:
        choice = _play(observation, plays, rules, bool(of_type(legal, "draw")))
        if choice is not None:
            return choice
    return (of_type(legal, "draw") or legal)[0]


def _honest(observation: dict[str, Any]) -> bool:
    """True when a Wild Draw Four now could not be challenged successfully."""
    color = observation["color"]
    return not any(COLOR[c] == color for c in observation["hand"])


def _wd4_safe(observation: dict[str, Any], rules: dict[str, Any]) -> bool:
    return rules.get("wd4", "challenge") != "challenge" or _honest(observation)


def _play(
    observation: dict[str, Any], plays: list[dict[str, Any]], rules: dict[str, Any], can_draw: bool
) -> dict[str, Any] | None:
    """The play to make, or None to draw instead."""
    hand = observation["hand"]
    sizes = observation["hand_sizes"]
    seat = observation["seat"]
    two_seats = observation["players"] == 2
    nxt = next_seat(observation)
    nearest = min(s for i, s in enumerate(sizes) if i != seat)
    colored = [a for a in plays if not is_wild(a["card"])]
    wilds = [a for a in plays if is_wild(a["card"])]
    wd4_ok = _wd4_safe(observation, rules)

    if sizes[nxt] <= THREAT:
        hit = _hit(observation, colored, wilds, wd4_ok, two_seats)
        if hit is not None:
            return hit
    if colored:
        after = _after_turn(observation)
        if two_seats:
            stuck = _stuck(observation)
            return max(
                colored,
                key=lambda a: _score(a["card"], hand, nearest, two_seats, after)
                + STUCK * stuck(cast(str, COLOR[a["card"]]), RANK[a["card"]]),
            )
        return max(colored, key=lambda a: _score(a["card"], hand, nearest, two_seats, after))
    if not wilds:
        return None
    # Only a wild fits. Keep it while the hand is long and nobody is close.
    if can_draw and len(hand) > 4 and nearest > 3:
        return None
    wd4 = [a for a in wilds if a["card"] in WILD_DRAW_FOURS]
    chosen = wd4 if wd4 and wd4_ok else [a for a in wilds if a["card"] not in WILD_DRAW_FOURS]
    if not chosen:
        chosen = wilds
    card = chosen[0]["card"]
    return with_color(chosen, _name(without(hand, card), observation))


def _hit(
    observation: dict[str, Any],
    colored: list[dict[str, Any]],
    wilds: list[dict[str, Any]],
    wd4_ok: bool,
    two_seats: bool,
) -> dict[str, Any] | None:
    """The strongest legal way to stop the next seat from going out, if any."""
    hand = observation["hand"]
    order = [a for a in colored if a["card"] in DRAW_TWOS]
    if wd4_ok:
        wd4 = [a for a in wilds if a["card"] in WILD_DRAW_FOURS]
        if wd4:
            order.append(with_color(wd4, _name(without(hand, wd4[0]["card"]), observation)))
    order += [a for a in colored if a["card"] in BLOCKERS and a["card"] not in DRAW_TWOS]
    if two_seats:
        order += [a for a in colored if a["card"] in REVERSES]
    return order[0] if order else None


def _after_turn(observation: dict[str, Any]) -> dict[str, int]:
    """Hand size of the seat that plays after a number, a Skip, a Reverse (3+ seats)."""
    sizes = observation["hand_sizes"]
    seat, step, n = observation["seat"], observation["direction"], observation["players"]
    return {"number": sizes[(seat + step) % n], "skip": sizes[(seat + 2 * step) % n], "reverse": sizes[(seat - step) % n]}


def _score(card: str, hand: list[str], nearest: int, two_seats: bool, after: dict[str, int]) -> float:
    rest = without(hand, card)
    color = COLOR[card]
    same_color = sum(1 for c in rest if COLOR[c] == color)
    same_rank = sum(1 for c in rest if RANK[c] == RANK[card])
    score = 2.0 * same_color + 0.5 * same_rank
    # Points left in hand count against us; shed them faster when a round may end soon.
    score += POINTS[card] * (0.15 if nearest <= 3 else 0.04)
    if two_seats and (card in BLOCKERS or card in REVERSES) and same_color:
        score += 3.0  # a free extra turn with a follow-up card
    if not two_seats:
        # Do not hand the next turn to a seat about to go out.
        if card in BLOCKERS:
            nxt = after["skip"]
        elif card in REVERSES:
            nxt = after["reverse"]
        else:
            nxt = after["number"]
        if nxt <= THREAT:
            score -= DANGER * (THREAT + 1 - nxt)
    return score


def _answer(plays: list[dict[str, Any]], observation: dict[str, Any]) -> dict[str, Any]:
    """A stack answer or jump-in: a coloured card before a wild; a wild names the main colour."""
    colored = [a for a in plays if not is_wild(a["card"])]
    if colored:
        return max(colored, key=lambda a: POINTS[a["card"]])
    card = plays[0]["card"]
    same = [a for a in plays if a["card"] == card]
    return with_color(same, _name(without(observation["hand"], card), observation))


def _play_drawn(observation: dict[str, Any], legal: list[dict[str, Any]], rules: dict[str, Any]) -> dict[str, Any]:
    plays = of_type(legal, "play")
    keep = of_type(legal, "pass")
    if not plays:
        return (keep or legal)[0]
    card = plays[0]["card"]
    if not is_wild(card) or not keep:
        return with_color(plays, _name(without(observation["hand"], card), observation))
    sizes = observation["hand_sizes"]
    nearest = min(s for i, s in enumerate(sizes) if i != observation["seat"])
    if card in WILD_DRAW_FOURS and not _wd4_safe(observation, rules):
        return keep[0]
    if len(observation["hand"]) <= 3 or nearest <= 3:
        return with_color(plays, _name(without(observation["hand"], card), observation))
    return keep[0]


def _challenge(observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    challenge = of_type(legal, "challenge")
    accept = of_type(legal, "accept") or legal
    if not challenge:
        return accept[0]
    discard = observation["discard"]
    before = COLOR[discard[-2]] if len(discard) >= 2 else None
    if before is None:
        return accept[0]  # the colour before came from a wild: nothing to count
    held = observation["hand_sizes"][previous_seat(observation)]
    unseen = unseen_by_color(observation)
    pool = sum(observation["hand_sizes"]) - len(observation["hand"]) + observation["draw_pile"]
    # Hypergeometric: the chance that `held` unseen cards contain none of the colour.
    none = 1.0
    for i in range(held):
        if pool - i <= 0:
            break
        none *= max(0, pool - unseen[before] - i) / (pool - i)
    return challenge[0] if 1.0 - none > CHALLENGE_THRESHOLD else accept[0]


def _swap(observation: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    swaps = of_type(legal, "swap")
    if not swaps:
        return legal[0]
    sizes = observation["hand_sizes"]
    scores = observation["scores"]
    return min(swaps, key=lambda a: (sizes[a["target"]], -scores[a["target"]]))


def _name(hand: list[str], observation: dict[str, Any]) -> str:
    """The colour to name: ``best_color``; at two seats a colour held, counting one the
    opponent likely cannot follow as more cards of it."""
    base = best_color(hand, observation)
    if observation.get("players") != 2:
        return base
    count = color_counts(hand)
    stuck = _stuck(observation)

    def key(c: str) -> tuple[float, bool]:
        if not count[c]:
            return (-1.0, c == base)
        return (count[c] + NAME_STUCK * stuck(c, None), c == base)

    return max(COLORS, key=key)


def _stuck(observation: dict[str, Any]) -> Callable[[str, int | None], float]:
    """Two seats: ``chance(color, rank)`` that the opponent holds no card it could play
    on that colour and rank (rank None: on a wild naming the colour).

    Hypergeometric over the unseen cards (deck minus our hand minus the discard
    pile), of which the opponent holds ``hand_sizes``.
    """
    unseen = unseen_cards(observation)
    total = sum(unseen.values())
    held = observation["hand_sizes"][1 - observation["seat"]]
    by_color = dict.fromkeys(COLORS, 0)
    by_rank: dict[int, int] = {}
    by_color_rank: dict[tuple[str, int], int] = {}
    for code, n in unseen.items():
        color = COLOR[code]
        if color is not None:
            by_color[color] += n
            by_rank[RANK[code]] = by_rank.get(RANK[code], 0) + n
            by_color_rank[color, RANK[code]] = n
    wild = total - sum(by_color.values())

    def none_of(m: int) -> float:
        p = 1.0
        for i in range(min(held, total)):
            p *= max(0, total - m - i) / (total - i)
        return p

    def chance(color: str, rank: int | None) -> float:
        same_rank = 0 if rank is None else by_rank.get(rank, 0) - by_color_rank.get((color, rank), 0)
        return none_of(by_color[color] + same_rank + wild)

    return chance

