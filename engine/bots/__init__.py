"""Reference bots: plain ``agent(observation, configuration) -> action`` functions.

They follow BOT_CONTRACT.md exactly and read nothing but the observation and
configuration, so they are deterministic given their inputs. Graded strength,
weakest first: ``random``, ``first``, ``greedy``, ``expert`` (docs/bots.md).

>>> get("first")({"legal_actions": [{"type": "draw"}]}, {})
{'type': 'draw'}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.bots import expert, first, greedy, random_bot

Agent = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]

#: name -> agent, weakest first
REFERENCE_BOTS: dict[str, Agent] = {
    "random": random_bot.agent,
    "first": first.agent,
    "greedy": greedy.agent,
    "expert": expert.agent,
}


class UnknownBotError(KeyError):
    """No reference bot has that name; the message lists the names."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def get(name: str) -> Agent:
    """The reference bot called ``name``; ``UnknownBotError`` listing the names otherwise."""
    try:
        return REFERENCE_BOTS[name]
    except (KeyError, TypeError):
        raise UnknownBotError(
            f"unknown reference bot: {name!r} (known: {', '.join(REFERENCE_BOTS)})"
        ) from None
