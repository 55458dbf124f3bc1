"""The checks of a ladder's own settings: its rules for its seat count, its match format within
the fields' bounds, and a match of that format within MATCH_TIME_LIMIT.

The model's ``Ladder.clean`` and the services both call these; they read only the ladder given
(no service, no query), so the model never imports the app's services.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError

from engine.rules import BOUNDS, Rules, RulesError

#: seats per match (RULES.md's players)
MIN_SEATS, MAX_SEATS = BOUNDS["players"]


class LadderError(ValueError):
    """A ladder request is refused; the message says what and with which value."""


def ladder_rules_clean(rules, seats: int) -> dict:
    """The complete rule set for a ladder of ``seats`` seats, or LadderError saying what is wrong.

    A rule set without ``players`` takes ``seats``; with it, the two must agree.
    """
    if not isinstance(rules, Mapping):
        raise LadderError(f"the rules must be a JSON object of RULES.md options, got {rules!r}")
    if isinstance(seats, bool) or not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise LadderError(f"seats per match must be {MIN_SEATS} to {MAX_SEATS}, got {seats!r}")
    rules = dict(rules)
    players = rules.setdefault("players", seats)
    if players != seats:
        raise LadderError(f"the rules are for players={players!r} but the ladder has {seats} seats per match")
    try:
        return Rules.from_dict(rules).to_dict()
    except (RulesError, TypeError, ValueError) as exc:
        raise LadderError(str(exc)) from None


#: the ladder's fields that make up the format of its matches (and of challenges under its rules)
MATCH_FORMAT_FIELDS = ("deals", "duplicate", "time_per_decision", "time_bank", "time_per_match")


def ladder_match_format(ladder) -> dict:
    """The match options a ladder gives its matches: deals, duplicate and the three clocks, within bounds.

    The bounds are the Ladder fields' validators (the one place that states them); a stored value
    out of them (written around validation) is a LadderError naming the field, never a huge match.
    """
    others = [f.name for f in type(ladder)._meta.fields if f.name not in MATCH_FORMAT_FIELDS]
    try:
        ladder.clean_fields(exclude=others)
    except ValidationError as exc:
        problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        raise LadderError(f"the ladder {ladder.name!r} has settings out of bounds ({problems})") from None
    return {field: getattr(ladder, field) for field in MATCH_FORMAT_FIELDS}


def ladder_time_check(ladder) -> None:
    """LadderError when a match of the ladder's format and clocks could outlast MATCH_TIME_LIMIT.

    Such a match would be refused at creation (``matches.services.match_create``), so the ladder
    would never play: the organizer hears it when saving, on the time per match.
    """
    from matches.sandboxing import match_limits
    from matches.selectors import match_time_excess

    match_format = ladder_match_format(ladder)
    limits = match_limits(match_format["time_per_decision"], match_format["time_bank"], match_format["time_per_match"])
    excess = match_time_excess(
        players=ladder.seats, deals=match_format["deals"], duplicate=match_format["duplicate"], limits=limits
    )
    if excess:
        raise LadderError(f"a match of this ladder {excess}")
