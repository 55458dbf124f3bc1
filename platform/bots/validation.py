"""What a new version's validation plays: one match per configuration it will meet.

A version is checked at 2 and at 4 seats (``VALIDATION_SEATS``) under
``VALIDATION_RULES``, and under the rules (house rules and seat count) of every
event its bot is entered in, so a bot that breaks with more seats or a house rule
is rejected before it forfeits in competition. Each configuration is one match
against ``VALIDATION_OPPONENT`` in every other seat, with duplicate deals (the deal
played once from every seat). The events are found through providers that the
ladder and tournament apps register (``register_event_rules``), so this app does
not import them.

The plan is stored on the version (``BotVersion.validation_runs``: a list of
``{"label", "match", "status", "reason"}``), and each finished validation match
updates its run under the version's row lock: the version is rejected as soon as
one configuration fails (the reason names the configuration, the log is that
match's), and becomes active once every configuration passed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings

from engine.rules import Rules, RulesError

PENDING, PASSED, FAILED = "pending", "passed", "failed"


@dataclass(frozen=True)
class Configuration:
    """One validation configuration: a label people read, and the rules (with the seat count)."""

    label: str
    rules: Rules


#: functions (bot) -> iterable of (event label, rules dict) for the events the bot is entered in
_event_rules: list[Callable[[object], Iterable[tuple[str, dict]]]] = []


def register_event_rules(provider: Callable[[object], Iterable[tuple[str, dict]]]) -> None:
    """Called by the apps that run events (ladders, tournaments) in their ``ready()``."""
    if provider not in _event_rules:
        _event_rules.append(provider)


def _describe(rules: Rules, base: Rules) -> str:
    defaults = base.to_dict()
    changed = [f"{key}={value}" for key, value in rules.to_dict().items() if key != "players"
               and defaults.get(key) != value]
    return f"{rules.players} seats" + (f", {', '.join(changed)}" if changed else "")


def validation_configurations(bot) -> list[Configuration]:
    """The configurations a new version of ``bot`` is validated in, without repeats, at most
    ``VALIDATION_MAX_CONFIGURATIONS`` (the base ones first, then the events' in the order found)."""
    base = Rules.parse(settings.VALIDATION_RULES)
    found: list[Configuration] = []
    seen: set[tuple] = set()

    def add(label: str, rules: Rules) -> None:
        key = tuple(sorted(rules.to_dict().items()))
        if key not in seen and len(found) < settings.VALIDATION_MAX_CONFIGURATIONS:
            seen.add(key)
            found.append(Configuration(label, rules))

    for players in settings.VALIDATION_SEATS:
        rules = Rules.from_dict({**base.to_dict(), "players": players})
        add(_describe(rules, base), rules)
    if bot is not None and bot.pk is not None:
        for provider in _event_rules:
            for event, data in provider(bot):
                try:
                    rules = Rules.from_dict(data)
                except (RulesError, TypeError, ValueError):
                    continue  # an event's own rules were checked when it was saved
                add(f"{_describe(rules, base)} ({event})", rules)
    return found


def record_run(runs: list[dict], match_id: int, status: str, reason: str = "") -> list[dict]:
    """``runs`` with the run of ``match_id`` set to ``status`` (a new list; unknown ids change nothing)."""
    return [{**run, "status": status, "reason": reason} if run["match"] == match_id else run for run in runs]


def verdict(runs: list[dict]) -> tuple[str, dict | None]:
    """(PENDING | PASSED | FAILED, the first failed run or None) of a version's runs."""
    failed = next((run for run in runs if run["status"] == FAILED), None)
    if failed is not None:
        return FAILED, failed
    if all(run["status"] == PASSED for run in runs):
        return PASSED, None
    return PENDING, None
