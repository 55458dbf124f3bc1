"""Replay documents (docs/replay-format.md): write one, rebuild any state, one seat's view, verify.

    state = state_at(result.replay, 0, 5)   # every hand after 5 events of game 0
    verify(result.replay)                   # re-simulates; ReplayError on a difference

The writer (``game_head``, ``game_record``, ``match_document``) is what the referee,
``engine.match``, builds each replay with; the reader is the rest. ``state_at`` and
``seat_view`` only apply recorded events, the way the browser viewer does; ``verify``
re-simulates every game from its seed and recorded actions with ``engine.game`` and
checks the events match. Pure: no I/O; never imports ``engine.match``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.compiled import new_game
from engine.game import Game, IllegalAction
from engine.rules import Rules, RulesError
from engine.seating import BALANCED_CYCLIC
from engine.seating import describe as describe_seating

#: the version ``match_document`` writes
REPLAY_VERSION = 2
#: version 1 gave each action record its event index as ``at``; version 2 (written
#: now) gives ``since``, the events after the previous record's point: small
#: numbers that compress far better (docs/replay-format.md, "Versions")
SUPPORTED_VERSIONS = (1, 2)


# --- writing: the referee (engine.match) builds a replay with these three -------------


def game_head(
    index: int, deal: int, rotation: int, seed: int, seats: list[int], names: list[str], forfeited: list[int]
) -> dict[str, Any]:
    """A game's record without its play: what ``on_step`` is shown, and the record's first keys."""
    return {
        "index": index,
        "deal": deal,
        "rotation": rotation,
        "seed": seed,
        "seats": seats,
        "names": names,
        "forfeited": forfeited,
    }


def game_record(head: dict[str, Any], game: Game, ranks: list[int]) -> dict[str, Any]:
    """The record of a finished game: its head, then the game's own events and actions (not copied)."""
    return {
        **head,
        "events": game.events,
        "actions": game.actions,
        "scores": list(game.scores),
        "ranks": ranks,
        "rounds": game.round,
    }


def match_document(
    rules: dict[str, Any],
    *,
    seed: int,
    deals: int,
    duplicate: bool,
    names: list[str],
    games: list[dict[str, Any]],
    scores: list[int],
    ranks: list[int],
    wins: list[int],
    forfeits: Sequence[object | None],
    strikes: list[int],
) -> dict[str, Any]:
    """The replay document of a match (docs/replay-format.md); a forfeit is written as its text."""
    replay: dict[str, Any] = {
        "version": REPLAY_VERSION,
        "rules": rules,
        "seed": seed,
        "deals": deals,
        "duplicate": duplicate,
        "names": names,
        "games": games,
        "result": {
            "scores": scores,
            "ranks": ranks,
            "wins": wins,
            "forfeits": [None if f is None else str(f) for f in forfeits],
            "strikes": strikes,
        },
    }
    described = describe_seating(len(names), deals, duplicate)
    if described["scheme"] == BALANCED_CYCLIC:
        # only here: replays of 2 seats or without duplicate stay as they were
        # (``seating`` below gives every replay's entry, older ones included)
        replay["seating"] = described
    return replay


# --- reading -----------------------------------------------------------------------------


class ReplayError(ValueError):
    """A replay document is malformed or does not reproduce."""


def _game(replay: dict[str, Any], game_index: int) -> dict[str, Any]:
    if not isinstance(replay, dict) or replay.get("version") not in SUPPORTED_VERSIONS:
        version = replay.get("version") if isinstance(replay, dict) else None
        raise ReplayError(f"unsupported replay version {version!r} (supported: {SUPPORTED_VERSIONS})")
    games = replay.get("games")
    if not isinstance(games, list) or not 0 <= game_index < len(games):
        count = len(games) if isinstance(games, list) else 0
        raise ReplayError(f"game index {game_index!r} out of range (the replay has {count} games)")
    game: dict[str, Any] = games[game_index]
    return game


#: ``seating["scheme"]`` of a duplicate replay at 3+ seats written before balanced seating
OLD_CYCLIC = "cyclic"


def seating(replay: dict[str, Any]) -> dict[str, Any]:
    """How the match seated its bots: ``{scheme, orders, balanced, description}``.

    Replays of duplicate matches at 3+ seats store it (``replay["seating"]``);
    for the others, and for replays written before 2026-12-01, it is derived
    from the match's arguments (docs/replay-format.md, "Seating").
    """
    _game(replay, 0)
    stored = replay.get("seating")
    if isinstance(stored, dict):
        return stored
    try:
        n, deals, duplicate = len(replay["names"]), replay["deals"], bool(replay["duplicate"])
    except (KeyError, TypeError) as exc:
        raise ReplayError(f"replay lacks names, deals or duplicate: {exc!r}") from exc
    if duplicate and n > 2:
        return {
            "scheme": OLD_CYCLIC,
            "orders": 1,
            "balanced": False,
            "description": f"Duplicate with one cyclic order for every deal (before balanced seating): each deal is"
            f" played {n} times so every bot plays every seat of it, but each bot always sits directly after"
            " the same other bot.",
        }
    return describe_seating(n, deals, duplicate)


def action_points(actions: list[dict[str, Any]]) -> list[int]:
    """The event index at which each action record's seat was asked (``at``).

    Reads both versions: version 1 records carry ``at``, version 2 records ``since``.
    """
    points, at = [], 0
    for record in actions:
        at = record["at"] if "at" in record else at + record["since"]
        points.append(at)
    return points


def _initial(players: int) -> dict[str, Any]:
    return {
        "round": 0,
        "dealer": 0,
        "hands": [[] for _ in range(players)],
        "discard": [],
        "draw_pile": 0,
        "color": None,
        "direction": 1,
        "current": 0,
        "scores": [0] * players,
        "uno": [False] * players,
        "pending_draw": 0,
        "over": False,
    }


#: the code a public event gives a card only its holder sees (``public_event``)
HIDDEN_CARD = "?"


def apply_event(state: dict[str, Any], event: dict[str, Any]) -> None:
    """Apply one recorded event to a state dict (as ``state_at`` returns) in place."""
    e = event["e"]
    if e == "turn":
        state["current"] = event["seat"]
    elif e == "play":
        seat = event["seat"]
        hand = state["hands"][seat]
        # a live game's public events hide hands: the card played is one of its hidden ones
        hand.remove(event["card"] if event["card"] in hand or HIDDEN_CARD not in hand else HIDDEN_CARD)
        state["discard"].append(event["card"])
        state["color"] = event["color"]
        state["uno"][seat] = bool(event.get("uno"))
    elif e == "draw":
        cards = event["cards"]
        state["hands"][event["seat"]].extend(cards)
        state["draw_pile"] -= len(cards)
        if cards:
            state["uno"][event["seat"]] = False
        if event["reason"] == "penalty":
            state["pending_draw"] = 0
    elif e == "round_start":
        state["round"] = event["round"]
        state["dealer"] = event["dealer"]
        state["hands"] = [list(h) for h in event["hands"]]
        state["discard"] = [event["top"]]
        state["draw_pile"] = event["draw_pile"]
        state["color"] = event["color"]
        state["direction"] = 1
        state["scores"] = list(event["scores"])
        state["uno"] = [False] * len(event["hands"])
        state["pending_draw"] = 0
    elif e == "reshuffle":
        state["draw_pile"] += event["cards"]
        state["discard"] = state["discard"][-1:]
    elif e == "direction":
        state["direction"] = event["direction"]
    elif e == "pending":
        state["pending_draw"] = event["cards"]
    elif e == "challenge":
        state["pending_draw"] = 0
    elif e == "color":
        state["color"] = event["color"]
    elif e == "pass_hands":
        hands, d = state["hands"], event["direction"]
        n = len(hands)
        state["hands"] = [hands[(i - d) % n] for i in range(n)]
        state["uno"] = [False] * n
    elif e == "swap":
        hands, a, b = state["hands"], event["seat"], event["target"]
        hands[a], hands[b] = hands[b], hands[a]
        state["uno"][a] = state["uno"][b] = False
    elif e == "round_end":
        state["scores"] = list(event["scores"])
        state["pending_draw"] = 0
    elif e == "game_end":
        state["over"] = True
    # skip, pass, uno_caught, fault, forfeit change no state




def public_event(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` as someone who sits at no seat sees it: dealt and drawn cards hidden.

    For watching a game that is still being played: every card code a hand
    receives becomes ``HIDDEN_CARD``; counts, plays and everything else stay.

    >>> public_event({"e": "draw", "seat": 1, "cards": ["R5", "W"], "reason": "draw"})["cards"]
    ['?', '?']
    >>> public_event({"e": "play", "seat": 1, "card": "R5", "color": "R"})["card"]
    'R5'
    """
    kind = event.get("e")
    if kind == "draw":
        return {**event, "cards": [HIDDEN_CARD] * len(event["cards"])}
    if kind == "round_start":
        return {**event, "hands": [[HIDDEN_CARD] * len(hand) for hand in event["hands"]]}
    return event


def state_at(replay: dict[str, Any], game_index: int, event_index: int) -> dict[str, Any]:
    """The full state (every hand) of a game after its first ``event_index`` events."""
    record = _game(replay, game_index)
    events = record["events"]
    if not 0 <= event_index <= len(events):
        raise ReplayError(f"event index {event_index!r} out of range (game {game_index} has {len(events)} events)")
    state = _initial(len(record["seats"]))
    try:
        for event in events[:event_index]:
            apply_event(state, event)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ReplayError(f"game {game_index}: malformed event before index {event_index}: {exc!r}") from exc
    return state


def seat_view(replay: dict[str, Any], game_index: int, event_index: int, seat: int) -> dict[str, Any]:
    """What ``seat`` could see after ``event_index`` events, nothing hidden from it.

    At the point where that seat was asked for a decision this equals the
    observation it was given (with ``decision`` and ``legal_actions``, found by
    re-simulating the game); elsewhere it has the observation's other keys.
    """
    state = state_at(replay, game_index, event_index)
    hands = state["hands"]
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(hands):
        raise ReplayError(f"seat {seat!r} out of range (the game has {len(hands)} seats)")
    view = {
        "seat": seat,
        "players": len(hands),
        "hand": list(hands[seat]),
        "top_card": state["discard"][-1] if state["discard"] else None,
        "color": state["color"],
        "direction": state["direction"],
        "current": state["current"],
        "hand_sizes": [len(h) for h in hands],
        "uno": state["uno"],
        "scores": state["scores"],
        "draw_pile": state["draw_pile"],
        "discard": state["discard"],
        "pending_draw": state["pending_draw"],
        "round": state["round"],
        "dealer": state["dealer"],
    }
    game = _game_at(replay, game_index, event_index)
    if game is not None:
        # as in an observation, a pending draw shows only while someone must answer it
        if game.decision not in ("stack", "challenge"):
            view["pending_draw"] = 0
        if game.seat == seat:
            view["decision"] = game.decision
            view["legal_actions"] = game.legal_actions()
    return view


def _game_at(replay: dict[str, Any], game_index: int, event_index: int) -> Game | None:
    """The re-simulated game waiting for a decision right after ``event_index`` events, or None."""
    record = _game(replay, game_index)
    try:
        game = new_game(Rules.from_dict(replay["rules"]), record["seed"])
        actions = record["actions"]
        points = action_points(actions)
        i = 0
        while not game.over and len(game.events) < event_index and i < len(actions):
            _replay_action(game, actions[i], i, points[i])
            i += 1
    except (RulesError, KeyError, TypeError) as exc:
        raise ReplayError(f"game {game_index}: cannot re-simulate: {exc!r}") from exc
    if game.over or len(game.events) != event_index:
        return None
    return game


def _replay_action(game: Game, record: dict[str, Any], i: int, at: int) -> None:
    if (at, record["seat"], record["decision"]) != (len(game.events), game.seat, game.decision):
        raise ReplayError(
            f"action {i}: recorded at event {at} for seat {record['seat']} ({record['decision']}),"
            f" but the game asks seat {game.seat} ({game.decision}) at event {len(game.events)}"
        )
    if "fault" in record:
        fault = record["fault"]
        game.fault(fault["kind"], fault["reason"], strikes=fault["strikes"], forfeit=fault["forfeit"])
        return
    try:
        game.apply(record["action"])
    except IllegalAction as exc:
        raise ReplayError(f"action {i}: {exc}") from exc


def replay_game(rules: Rules, seed: int, actions: list[dict[str, Any]]) -> Game:
    """Re-simulate one game from its seed and recorded actions; ``ReplayError`` if they don't fit."""
    game = new_game(rules, seed)
    for i, (record, at) in enumerate(zip(actions, action_points(actions), strict=True)):
        if game.over:
            raise ReplayError(f"action {i} recorded after the game ended")
        _replay_action(game, record, i, at)
    return game


def verify(replay: dict[str, Any]) -> int:
    """Re-simulate every game of a replay and check it reproduces the recorded events.

    Returns the number of events checked; raises ``ReplayError`` on the first difference.
    """
    _game(replay, 0)
    try:
        rules = Rules.from_dict(replay["rules"])
    except (RulesError, KeyError, TypeError) as exc:
        raise ReplayError(f"replay rules invalid: {exc}") from exc
    checked = 0
    for index, record in enumerate(replay["games"]):
        try:
            game = replay_game(rules, record["seed"], record["actions"])
        except (KeyError, TypeError) as exc:
            raise ReplayError(f"game {index}: malformed action record: {exc!r}") from exc
        except ReplayError as exc:
            raise ReplayError(f"game {index}: {exc}") from exc
        recorded = record["events"]
        if game.events != recorded:  # compared in C; the first difference is looked for only if there is one
            for i, (mine, theirs) in enumerate(zip(game.events, recorded, strict=False)):
                if mine != theirs:
                    raise ReplayError(f"game {index}: event {i} differs: recorded {theirs!r}, re-simulated {mine!r}")
        if len(game.events) != len(recorded):
            raise ReplayError(
                f"game {index}: recorded {len(recorded)} events, re-simulation gives {len(game.events)}"
            )
        if not game.over:
            raise ReplayError(f"game {index}: the recorded actions do not finish the game")
        checked += len(recorded)
    return checked

