"""Helpers for engine scenario tests: a game from chosen hands, scripted seats."""

from __future__ import annotations

from hypothesis import strategies as st

from engine.game import Game
from engine.match import AgentSeat
from engine.rules import MAX_DEAL, Rules


def position(hands, top, *, color=None, dealer=0, current=None, draws=None, scores=None,
             first_card_effect=False, seed=0, **options) -> Game:
    """A game whose first round starts with these hands (codes) and top card.

    Options are rule options; ``players`` is the number of hands.
    """
    rules = Rules(players=len(hands), **options)
    return Game.setup(rules, hands, top, color=color, dealer=dealer, current=current, draws=draws,
                      scores=scores, first_card_effect=first_card_effect, seed=seed)


def play(game: Game, card: str, color: str | None = None, uno: bool = False) -> list[dict]:
    """The seat asked plays ``card``; returns the events it caused."""
    action = {"type": "play", "card": card}
    if color is not None:
        action["color"] = color
    if uno:
        action["uno"] = True
    return act(game, action)


def act(game: Game, action: dict) -> list[dict]:
    """Apply ``action`` for the seat asked; returns the events it caused."""
    start = len(game.events)
    game.apply(action)
    return game.events[start:]


def of(events: list[dict], kind: str) -> list[dict]:
    """The events of one kind."""
    return [e for e in events if e["e"] == kind]


def hand(game: Game, seat: int) -> list[str]:
    """Seat's hand as codes."""
    return game.state()["hands"][seat]


def scripted(*actions: dict) -> AgentSeat:
    """A seat replying with ``actions`` in order, then the first legal action."""
    queue = list(actions)

    def agent(observation, configuration):
        if queue:
            return queue.pop(0)
        return observation["legal_actions"][0]

    return AgentSeat(agent, "scripted")


def first_legal() -> AgentSeat:
    return AgentSeat(lambda observation, configuration: observation["legal_actions"][0], "first")


SHORT_ROUNDS = st.integers(1, 2)
SHORT_TURNS = st.integers(20, 250)


@st.composite
def rule_sets(draw, *, max_hand_size=20, rounds=SHORT_ROUNDS, max_turns=SHORT_TURNS):
    """Any valid rule set (hypothesis): 2-10 seats, every option, short rounds."""
    players = draw(st.integers(2, 10))
    wd4 = draw(st.sampled_from(["challenge", "enforced", "free"]))
    stacking = "off" if wd4 == "challenge" else draw(st.sampled_from(["off", "deflect", "stack"]))
    first_card = draw(st.sampled_from(["apply", "number_only"]))
    return Rules(
        players=players,
        hand_size=draw(st.integers(1, min(max_hand_size, MAX_DEAL[first_card] // players))),
        first_card=first_card,
        draw=draw(st.sampled_from(["one", "until_playable"])),
        draw_limit=draw(st.integers(1, 12)),
        two_player_reverse_skips=draw(st.booleans()),
        wd4=wd4,
        stacking=stacking,
        uno_penalty=draw(st.integers(0, 4)),
        seven_zero=draw(st.booleans()),
        jump_in=draw(st.booleans()),
        scoring=draw(st.sampled_from(["winner", "penalty"])),
        rounds=draw(rounds),
        max_turns=draw(max_turns),
    )
