"""What can go wrong with a seat, in the referee's words.

A seat (anything with ``decide(observation, configuration) -> action``) raises
one of these instead of returning an action. The referee in ``engine.match``
turns them into the outcomes of RULES.md section 9. Infrastructure trouble is
not a bot's fault and must never be raised as a ``SeatFault``.

Pure: no imports beyond the standard library.
"""

from __future__ import annotations


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


class InfrastructureError(Exception):
    """The platform failed (Docker engine gone, worker shutting down): retry, blame no bot."""
