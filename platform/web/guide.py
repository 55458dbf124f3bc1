"""The bot author guide's tables, built from the code that enforces them so they cannot drift.

Rule options come from ``engine.rules`` (names, defaults, allowed values), the
observation keys from a real ``engine.game`` observation, limits from
``sandbox.limits``. Only the one-line meanings are written here; a test checks
that every option and every observation key has one.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from engine import rules as engine_rules
from engine.game import Game
from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS, describe_bytes

STARTER_BOT = Path(__file__).resolve().parent / "files" / "starter_bot.py"

#: rule option -> what it means (RULES.md, in one line)
RULE_MEANINGS = {
    "players": "Number of seats at the table.",
    "hand_size": "Cards dealt to each player.",
    "first_card": "apply: the first turned card takes effect; number_only: turn cards until a number card.",
    "draw": "one: draw one card, play it at once if it fits; until_playable: draw until a playable card or draw_limit.",
    "draw_limit": "Most cards drawn in one turn with draw=until_playable.",
    "two_player_reverse_skips": "With two players, a Reverse acts as a Skip.",
    "wd4": "challenge: a Wild Draw Four may be challenged; enforced: offered only when honest; free: always, no challenge.",
    "stacking": "off; deflect: answer a +2 with a +2; stack: answers add up (needs wd4=enforced or free).",
    "uno_penalty": "Cards drawn by a player who leaves one card without declaring UNO.",
    "seven_zero": "A 0 passes every hand on; a 7 swaps hands with a chosen player.",
    "jump_in": "A player holding an identical card may play it out of turn.",
    "scoring": "winner: the winner scores the other hands, highest wins; penalty: each scores its own hand, lowest wins.",
    "target": "Points that end a game (default 500 for winner scoring, 200 for penalty scoring).",
    "rounds": "Play exactly this many rounds instead of playing to the target (tournaments use it).",
    "max_turns": "A round longer than this ends with no score.",
    "max_strikes": "Strikes (illegal actions, timeouts) before a bot forfeits the match.",
}

#: observation key -> what it holds (BOT_CONTRACT.md)
OBSERVATION_MEANINGS = {
    "seat": "This bot's seat, 0..players-1.",
    "players": "Number of seats.",
    "decision": "What is asked: play, play_drawn, choose_color, challenge, stack, jump_in, swap_target.",
    "hand": "This bot's cards as codes (R7, GS, BR, Y+2, W, W+4).",
    "top_card": "Top of the discard pile.",
    "color": "The active colour: R, Y, G or B (null only while a starting Wild waits for choose_color).",
    "direction": "1 clockwise (increasing seat), -1 counter-clockwise.",
    "current": "The seat whose turn it is.",
    "hand_sizes": "Cards held by each seat.",
    "uno": "Which seats declared UNO and still hold one card.",
    "scores": "Game points so far, per seat.",
    "draw_pile": "Cards left in the draw pile.",
    "discard": "The discard pile, bottom to top.",
    "pending_draw": "Cards this bot must draw if it does not answer (stacking), else 0.",
    "round": "Round number, from 1.",
    "dealer": "The dealer of this round.",
    "legal_actions": "Every action allowed now, each in full; never empty.",
}


def _allowed(name: str) -> str:
    if name in engine_rules.CHOICES:
        return ", ".join(engine_rules.CHOICES[name])
    if name in engine_rules.BOOLEANS:
        return "true, false"
    low, high = engine_rules.BOUNDS[name]
    extra = " or none" if name in ("target", "rounds") else ""
    return f"{low}..{high}{extra}"


def _default(name: str, defaults: engine_rules.Rules) -> str:
    if name == "target":
        return " / ".join(f"{v} ({scoring})" for scoring, v in engine_rules.DEFAULT_TARGET.items())
    value = getattr(defaults, name)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rule_options() -> list[dict]:
    """Every rule option of engine.rules: name, default, allowed values, meaning."""
    defaults = engine_rules.Rules()
    return [
        {
            "name": name,
            "default": _default(name, defaults),
            "allowed": _allowed(name),
            "meaning": RULE_MEANINGS.get(name, ""),
        }
        for name in engine_rules.OPTIONS
    ]


def observation_keys() -> list[dict]:
    """The keys of a real observation, in the engine's order, with their meanings."""
    observation = Game(engine_rules.Rules(players=2), seed=1).observation()
    return [{"key": key, "meaning": OBSERVATION_MEANINGS.get(key, "")} for key in observation]


def limits() -> list[dict]:
    """What a bot may use, from sandbox.limits."""
    lim, up = DEFAULT_LIMITS, settings.BOT_UPLOAD_LIMITS
    return [
        {"name": "Time per decision", "value": f"{lim.time_per_decision:g} s",
         "meaning": "A reply slower than this draws the difference from the time bank." + _event_range("time_per_decision")},
        {"name": "Time bank", "value": f"{lim.time_bank:g} s",
         "meaning": "Extra time for the whole match; once it is used up, a slow reply is a timeout (a strike)."
         + _event_range("time_bank")},
        {"name": "Time per match", "value": f"{lim.time_per_match:g} s",
         "meaning": "All the thinking your bot may do in one match, every decision counted (fast ones too); "
         "once it is used up your bot forfeits the match, reason \"out of match time\"." + _event_range("time_per_match")},
        {"name": "Start and import", "value": f"{lim.start_seconds:g} s",
         "meaning": "Time to start the sandbox and import your module."},
        {"name": "Memory", "value": describe_bytes(lim.memory_bytes), "meaning": "RAM of the whole sandbox, no swap."},
        {"name": "Log", "value": describe_bytes(lim.log_bytes),
         "meaning": "What your bot prints, kept per match and shown only to you; the rest is dropped."},
        {"name": ".py upload", "value": describe_bytes(up.py_bytes), "meaning": "Largest single-file bot."},
        {"name": ".zip upload", "value": f"{describe_bytes(up.zip_bytes)} packed, {describe_bytes(up.unpacked_bytes)} unpacked, "
         f"{up.zip_entries} entries", "meaning": "main.py at the root; no absolute paths, no .., no links."},
        {"name": "Binary data file", "value": describe_bytes(up.binary_data_bytes),
         "meaning": "Largest .bin, .dat or .npy file in a zip; every other file is .py source or UTF-8 text."},
    ]


def binary_data_limit() -> str:
    """The largest .bin/.dat/.npy data file a zip may hold, as the guide writes it."""
    return describe_bytes(settings.BOT_UPLOAD_LIMITS.binary_data_bytes)


def _event_range(clock: str) -> str:
    low, high = CLOCK_BOUNDS[clock]
    return f" A ladder or tournament may set {low:g} to {high:g} s (for arena play, --{clock.replace('_', '-')})."


def configuration_keys() -> list[str]:
    """The keys of the ``configuration`` a bot receives."""
    return ["rules", *DEFAULT_LIMITS.configuration()]

