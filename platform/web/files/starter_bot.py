"""Uno Arena starter bot: a small, legal strategy to build on.

Upload this file as it is, or change ``agent``. Test it first on your machine:

    arena play starter_bot.py random --rules rounds=3

The contract (observation keys, actions, time limits) is in the bot author guide
on the site. Only the Python standard library is available.
"""

from collections import Counter

# Cards worth most when left in a hand go first (RULES.md: actions 20, wilds 50).
ACTION_RANKS = ("+2", "S", "R")


def card_points(card):
    if card in ("W", "W+4"):
        return 50
    if card[1:] in ACTION_RANKS:
        return 20
    return int(card[1:])


def best_color(hand):
    """The colour we hold most of (red when we hold only wilds)."""
    counts = Counter(card[0] for card in hand if card not in ("W", "W+4"))
    return counts.most_common(1)[0][0] if counts else "R"


def agent(observation, configuration):
    legal = observation["legal_actions"]
    decision = observation["decision"]
    hand = observation["hand"]

    if decision == "choose_color":
        wanted = best_color(hand)
        for action in legal:
            if action.get("color") == wanted:
                return action
        return legal[0]

    if decision == "challenge":
        # Challenging is a gamble (6 cards if it was honest): accept by default.
        for action in legal:
            if action["type"] == "accept":
                return action
        return legal[0]

    if decision == "swap_target":
        # Take the smallest hand.
        sizes = observation["hand_sizes"]
        return min(legal, key=lambda action: sizes[action["target"]])

    plays = [action for action in legal if action["type"] == "play"]
    if plays:
        # Keep wilds for later; otherwise shed the most points first.
        # Legal plays already carry "uno": true when they leave one card.
        def keep_wilds_for_last(action):
            card = action["card"]
            is_wild = card in ("W", "W+4")
            return (is_wild, -card_points(card))

        choice = min(plays, key=keep_wilds_for_last)
        if choice["card"] in ("W", "W+4"):
            wanted = best_color([card for card in hand if card != choice["card"]])
            for action in plays:
                if action["card"] == choice["card"] and action.get("color") == wanted:
                    return action
        return choice

    # Nothing to play: draw (or pass / accept, whatever is offered).
    for kind in ("draw", "pass", "accept"):
        for action in legal:
            if action["type"] == kind:
                return action
    return legal[0]
