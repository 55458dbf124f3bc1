"""What a version's validation plays: one match per configuration it will meet.

A version is checked at 2 and at 4 seats (``VALIDATION_SEATS``) under
``VALIDATION_RULES``, and under the rules (house rules and seat count) of every
event its bot is entered in, so a bot that breaks with more seats or a house rule
is rejected before it forfeits in competition. Each configuration is one match
against ``VALIDATION_OPPONENT`` in every other seat, with duplicate deals (the deal
played once from every seat). The events are found through providers that the
ladder and tournament apps register (``register_event_rules``), so this app does
not import them.

The plan is stored on the version (``BotVersion.validation_runs``: a list of
``{"label", "rules", "match", "status", "reason"}``, ``rules`` the configuration's
complete rule set, ``match`` None while the run waits). Every configuration is
validated, none is dropped: ``VALIDATION_MAX_CONFIGURATIONS`` only caps how many of
one version's validation matches are queued at once; the others wait (``waiting``)
and are queued as earlier ones pass, under the version's row lock. The version is
rejected as soon as one configuration fails (the reason names the configuration,
the log is that match's; the runs still waiting are ``skipped``), and becomes active
once every configuration passed.

An event entered after the playing version was validated (``validation.services.
validation_require``, called by every entry path): each of the event's
configurations the version has not passed is added to its plan as a new run and
queued; the entry is held (not matched, not started) in that configuration until
the run passed. A failure does not reject the version (it passed what it was
validated for and keeps playing elsewhere): the run shows the configuration, the
reason and the log of that game in the version's report, and the apps' refusal
handlers (``register_event_refusal``) take the entry out of the events that need
that configuration, saying why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.conf import settings

from engine.rules import Rules, RulesError

PENDING, PASSED, FAILED = "pending", "passed", "failed"
#: a run not queued yet (more runs than VALIDATION_MAX_CONFIGURATIONS at once), and one never played
#: because the version was rejected first
WAITING, SKIPPED = "waiting", "skipped"
#: the state of a configuration for a version (``configuration_state``) that has no run for it:
#: MISSING, the version was validated by the platform (it has a plan, or the single match of the
#: time before plans) and must be validated in it before it plays there; UNPLANNED, the version was
#: made active without the platform's validation (``validate=False``: an operator's seeding, tests,
#: benchmarks), which vouches for it, so nothing is held or queued
MISSING, UNPLANNED = "missing", "unplanned"


@dataclass(frozen=True)
class Configuration:
    """One validation configuration: a label people read, and the rules (with the seat count)."""

    label: str
    rules: Rules


#: functions (bot) -> iterable of (event label, rules dict) for the events the bot is entered in
_event_rules: list[Callable[[object], Iterable[tuple[str, dict]]]] = []
#: functions (version, failed run) -> what they did, one line each ("ladder X: entry suspended")
_event_refusals: list[Callable[[object, dict], list[str]]] = []


def register_event_rules(provider: Callable[[object], Iterable[tuple[str, dict]]]) -> None:
    """Called by the apps that run events (ladders, tournaments) in their ``ready()``."""
    if provider not in _event_rules:
        _event_rules.append(provider)


def register_event_refusal(handler: Callable[[object, dict], list[str]]) -> None:
    """Called by the apps that run events: ``handler(version, run)`` takes the bot's entries out of
    the events that need the failed run's configuration (``run["rules"]``) while ``version`` plays for
    it, and returns one line per entry it refused (stored on the run, shown in the report)."""
    if handler not in _event_refusals:
        _event_refusals.append(handler)


def refuse_entries(version, run: dict) -> list[str]:
    """Every refusal handler's lines for ``version``'s failed ``run``."""
    return [line for handler in _event_refusals for line in handler(version, run)]


def rules_key(rules: Rules | dict) -> tuple:
    """A configuration's identity: its complete rule set as a sorted tuple (a dict missing options
    gets their defaults, so equal rule sets compare equal however they were written)."""
    if isinstance(rules, Rules):
        return tuple(sorted(rules.to_dict().items()))
    try:  # each value's type is part of the memo's key: True and 1 are equal, not the same option
        return _dict_key(tuple(sorted((name, type(value), value) for name, value in rules.items())))
    except TypeError:  # a value that cannot be hashed: parsed as it is (Rules.from_dict says what is wrong)
        return tuple(sorted(Rules.from_dict(rules).to_dict().items()))


@functools.lru_cache(maxsize=1024)
def _dict_key(items: tuple) -> tuple:
    """rules_key of a stored rules dict, memoised: every matchmaking pass asks it of every entry's
    runs (1,000 entries, a few runs each), and parsing a rule set costs tens of microseconds."""
    return tuple(sorted(Rules.from_dict({name: value for name, _type, value in items}).to_dict().items()))


def _describe(rules: Rules, base: Rules) -> str:
    defaults = base.to_dict()
    changed = [f"{key}={value}" for key, value in rules.to_dict().items() if key != "players"
               and defaults.get(key) != value]
    return f"{rules.players} seats" + (f", {', '.join(changed)}" if changed else "")


def event_configurations(event: str, rules: Iterable[dict]) -> list[Configuration]:
    """The configurations of one event (``event``: "ladder X"), labelled as in a version's plan."""
    base = Rules.parse(settings.VALIDATION_RULES)
    found: dict[tuple, Configuration] = {}
    for data in rules:
        parsed = Rules.from_dict(data)
        found.setdefault(rules_key(parsed), Configuration(f"{_describe(parsed, base)} ({event})", parsed))
    return list(found.values())


def validation_configurations(bot) -> list[Configuration]:
    """Every configuration a new version of ``bot`` is validated in, without repeats (the base ones
    first, then the events' in the order found). None is left out: ``VALIDATION_MAX_CONFIGURATIONS``
    caps how many are queued at once, not how many are played."""
    base = Rules.parse(settings.VALIDATION_RULES)
    found: list[Configuration] = []
    seen: set[tuple] = set()

    def add(label: str, rules: Rules) -> None:
        key = tuple(sorted(rules.to_dict().items()))
        if key not in seen:
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


def new_run(configuration: Configuration) -> dict:
    """A run of a plan, waiting for its match (``bots.services`` queues it)."""
    return {"label": configuration.label, "rules": configuration.rules.to_dict(), "match": None,
            "status": WAITING, "reason": ""}


def record_run(runs: list[dict], match_id: int, status: str, reason: str = "", **extra) -> list[dict]:
    """``runs`` with the run of ``match_id`` set to ``status`` (a new list; unknown ids change nothing)."""
    return [{**run, "status": status, "reason": reason, **extra} if run["match"] == match_id else run for run in runs]


def skip_waiting(runs: list[dict], why: str) -> list[dict]:
    """``runs`` with every run still waiting marked skipped (never played), saying why."""
    return [{**run, "status": SKIPPED, "reason": why} if run["status"] == WAITING else run for run in runs]


def run_for(runs: list[dict], rules: Rules | dict, legacy_rules: dict[int, dict] | None = None) -> dict | None:
    """The run of ``runs`` for the configuration ``rules`` (the newest when several), or None.

    A run stored before runs carried their rules is matched by its match's rules (``legacy_rules``:
    match id -> rules)."""
    key = rules_key(rules)
    found = None
    for run in runs:
        data = run.get("rules") or (legacy_rules or {}).get(run.get("match") or 0)
        if data is not None and rules_key(data) == key:
            found = run
    return found


def cleared(state: str) -> bool:
    """May a version play in a configuration in this ``configuration_state``?"""
    return state in (PASSED, UNPLANNED)


def verdict(runs: list[dict]) -> tuple[str, dict | None]:
    """(PENDING | PASSED | FAILED, the first failed run or None) of a version's runs."""
    failed = next((run for run in runs if run["status"] == FAILED), None)
    if failed is not None:
        return FAILED, failed
    if all(run["status"] == PASSED for run in runs):  # waiting runs hold it
        return PASSED, None
    return PENDING, None
