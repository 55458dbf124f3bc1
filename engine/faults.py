"""What can go wrong with a seat, in the referee's words.

A seat (anything with ``decide(observation, configuration) -> action``) raises
one of these instead of returning an action. The referee in ``engine.match``
turns them into the outcomes of RULES.md section 9. Infrastructure trouble is
not a bot's fault and must never be raised as a ``SeatFault``.

Pure: no imports beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass


class SeatFault(Exception):
    """A bot did something wrong; ``kind`` names it, ``reason`` tells its owner.

    >>> SeatFault("exception", "ValueError: boom").forfeits
    True
    """

    #: fault kinds that cost a strike (draw 2, lose the turn) instead of the match
    STRIKE_KINDS = frozenset({"timeout", "illegal"})
    #: every kind the platform records; ``match_time``: out of the match clock (time_per_match)
    KINDS = frozenset(
        {"timeout", "illegal", "exception", "crash", "protocol", "memory", "processes", "strikes", "match_time"}
    )

    def __init__(self, kind: str, reason: str):
        if kind not in self.KINDS:
            raise ValueError(f"unknown fault kind: {kind!r} (allowed: {', '.join(sorted(self.KINDS))})")
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason

    @property
    def forfeits(self) -> bool:
        """True when this fault ends the match for the bot at once."""
        return self.kind not in self.STRIKE_KINDS


@dataclass(frozen=True, slots=True)
class Fault:
    """A bot's fault as the referee recorded it: what (``kind``), why (``reason``), and where.

    The typed form every layer passes on (match result, sandbox, database rows);
    ``str(fault)`` is its text in replays, ``"kind: reason"``, never parsed back.
    ``game`` is the game's index in the match, ``round`` its round (0: before the
    game's first deal, as a fault of ``begin_game``).

    >>> fault = Fault("timeout", "no answer within 1 s", game=2, round=3)
    >>> fault.kind, str(fault)
    ('timeout', 'timeout: no answer within 1 s')
    """

    kind: str
    reason: str
    game: int = 0
    round: int = 0

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


class InfrastructureError(Exception):
    """The platform failed (Docker engine gone, worker shutting down): retry, blame no bot."""
