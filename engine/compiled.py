"""The compiled core (``engine._core``, C) and the one place that decides which engine plays.

>>> from engine.rules import Rules
>>> game = new_game(Rules(players=2), seed=1)
>>> game.decision in ("play", "choose_color")
True

``new_game(rules, seed)`` gives a ``CompiledGame`` (the C state machine of
``engine/_core.c``) when the core was built, ``ARENA_ENGINE`` is not ``pure``
and the core supports the rule set (``supports``); otherwise an
``engine.game.Game``. Both play the same game from the same seed, event for
event, observation for observation (docs/engine.md, "Compiled core";
tests/engine/test_compiled.py compares them). ``engine.game`` stays the
reference and the fallback: where the core could not be built (no C compiler
at install time) the pure engine plays, with a one-line note on stderr.

``ARENA_ENGINE``: ``auto`` (default: the core where it can), ``pure`` (always
``engine.game``; CI runs the tests both ways), ``compiled`` (the core, and an
error if it was not built).
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from engine.cards import COLORS
from engine.faults import SeatFault
from engine.game import _DICTS, ACTIONS, NUM_ACTIONS, Game, IllegalAction, _short
from engine.rules import Rules
from engine.snapshot import KEYS as SNAPSHOT_KEYS
from engine.snapshot import Snapshot

if TYPE_CHECKING:
    from engine.match import StrikeBook



def stale(built_from: str, library: str, source: Path) -> str | None:
    """Why a core built from the source with sha256 ``built_from`` must not play, or None.

    A core built from another ``engine/_core.c`` than the one beside it (an install older
    than the checkout: ``make install`` reinstalls only when pyproject.toml changes) is
    stale. A core built without the hash, or without its source beside it, is trusted.
    """
    if built_from and source.exists() and hashlib.sha256(source.read_bytes()).hexdigest() != built_from:
        return f"stale: {library} was built from another {source.name}; rebuild it: pip install -e ."
    return None


CORE_ERROR: str | None = None
try:
    from engine import _core
except ImportError as exc:  # not built: no compiler at install time, or ARENA_BUILD_CORE=0
    _core = None  # type: ignore[assignment]  # typed as the module: CompiledGame below exists only with it
    CORE_ERROR = f"{type(exc).__name__}: {exc}"
else:
    CORE_ERROR = stale(_core.SOURCE_SHA256, str(_core.__file__), Path(__file__).with_name("_core.c"))
    if CORE_ERROR is not None:
        _core = None  # type: ignore[assignment]

#: ``auto``, ``pure`` or ``compiled`` (read once, at import)
ENGINE_CHOICES = ("auto", "pure", "compiled")
ENGINE = os.environ.get("ARENA_ENGINE", "auto").strip().lower() or "auto"
if ENGINE not in ENGINE_CHOICES:
    raise RuntimeError(f"ARENA_ENGINE={ENGINE!r} is not one of {', '.join(ENGINE_CHOICES)}")
if ENGINE == "compiled" and _core is None:
    raise RuntimeError(f"ARENA_ENGINE=compiled but the compiled core engine._core is not built ({CORE_ERROR})")
if ENGINE == "auto" and _core is None:
    print(f"engine: the compiled core is not available ({CORE_ERROR}); the pure-Python engine plays", file=sys.stderr)

#: True when ``new_game`` gives compiled games (for the rule sets ``supports``)
COMPILED = _core is not None and ENGINE != "pure"
#: ``engine.match.game_seed`` in C when the core plays: the same int for a seed and deal of 64 bits,
#: None for any other argument (the caller then asks the reference); None when the core does not play
CORE_GAME_SEED: Callable[[int, int], int | None] | None = _core.game_seed if COMPILED else None
#: ``engine.match._CyclicGcPaused`` in C (``with GC_PAUSE:``) when the core is built, whichever engine plays;
#: else None
GC_PAUSE: Any = None if _core is None else _core.GcPause()
#: ``engine.match._frozen`` in C when the core is built, else None
FROZEN: Callable[[type, dict[str, Any]], Any] | None = None if _core is None else _core.frozen


def supports(rules: Rules) -> bool:
    """True when the compiled core plays every option of ``rules`` (now: every rule set)."""
    return isinstance(rules, Rules)


def new_game(rules: Rules, seed: int) -> Game:
    """A new game: compiled when the core is built, selected and supports ``rules``; else ``engine.game.Game``.

    The compiled game has ``Game``'s public interface (typed as ``Game`` for the callers);
    ``Game.setup`` positions stay pure.
    """
    if COMPILED and supports(rules):
        return cast(Game, CompiledGame(rules, seed))
    return Game(rules, seed)


def _illegal(game: Any, what: str, value: Any) -> None:
    """Raise ``IllegalAction`` for the compiled core, worded exactly as ``engine.game.Game`` words it."""
    if what == "over":
        raise IllegalAction(f"the game is over; got action {_short(value)}")
    if what == "action":
        raise IllegalAction(
            f"illegal action {_short(value)} for decision {game.decision!r} of seat {game.seat}"
            f" (legal: {_short(game.legal_actions(), 400)})"
        )
    if what == "over_id":
        raise IllegalAction(f"the game is over; got action id {_short(value)}")
    if what == "not_id":
        raise IllegalAction(f"not an action id (0..{NUM_ACTIONS - 1}): {_short(value)}")
    raise IllegalAction(
        f"illegal action id {value} ({_short(_DICTS[ACTIONS[value]])}) for decision {game.decision!r}"
        f" of seat {game.seat} (legal ids: {game.legal_action_ids()})"
    )


if _core is not None:
    _core.set_illegal_hook(_illegal)
    _core.set_rules_type(Rules)  # a game checks its rules itself: no Python __init__ frame per game
    # the core's snapshots keep engine.snapshot.Snapshot's contract (isinstance holds; same keys)
    Snapshot.register(_core.Snapshot)
    assert _core.SNAPSHOT_KEYS == SNAPSHOT_KEYS

    class CompiledGame(_core.Core):
        """One game played by the compiled core: ``engine.game.Game``'s interface, in C.

        ``events`` and ``actions`` are kept compact and turned into the replay's dicts
        when read (one list each, growing); ``scores``, ``hands``, ``uno`` are fresh lists.
        """

        # no __init__: the core's checks ``rules`` (TypeError unless an engine.rules.Rules) without
        # a Python frame per game
        __slots__ = ()

        def view(self, seat: int) -> dict[str, Any]:
            """What ``seat`` sees now, without the decision: nothing hidden (``Game.view``)."""
            return {
                "seat": seat,
                "players": self.n,
                "hand": self.hand_codes[seat],
                "top_card": self.discard_codes[-1],
                "color": None if self.color < 0 else COLORS[self.color],
                "direction": self.direction,
                "current": self.current,
                "hand_sizes": [len(h) for h in self.hands],
                "uno": self.uno,
                "scores": self.scores,
                "draw_pile": self.pile_count,
                "discard": self.discard_codes,
                "pending_draw": self.pending if self.decision in ("stack", "challenge") else 0,
                "round": self.round,
                "dealer": self.dealer,
            }

        def state(self) -> dict[str, Any]:
            """The full state (every hand), as ``Game.state``."""
            return {
                "round": self.round,
                "dealer": self.dealer,
                "hands": self.hand_codes,
                "discard": self.discard_codes,
                "draw_pile": self.pile_count,
                "color": None if self.color < 0 else COLORS[self.color],
                "direction": self.direction,
                "current": self.current,
                "scores": self.scores,
                "uno": self.uno,
                "pending_draw": self.pending,
                "over": self.over,
            }


_NUMBER = (int, float)
#: engine.match, once ``play_turns`` first ran (engine.match imports this module: not at import)
_match: Any = None


def _import_match() -> Any:
    global _match
    from engine import match

    _match = match
    return match


class Referee:
    """What the compiled turn loop hands back to Python for the game under way (``game``, its
    replay head ``head``): a fault to book (``charge``) and a seat's reported time (``timed``).
    ``engine._core.play_games`` makes one per match (without ``__init__``: its slots set from C) and sets
    ``game`` and ``head`` before each game."""

    __slots__ = ("book", "game", "head", "timings")

    def __init__(self, book: StrikeBook, timings: list[dict[str, Any]],
                 game: CompiledGame | None = None, head: dict[str, Any] | None = None):
        self.book, self.timings, self.game, self.head = book, timings, game, head

    def charge(self, b: int, fault: SeatFault | None, action: Any) -> None:
        """Book bot ``b``'s fault (``fault``, or None for the refused reply ``action``) and record it in the game."""
        game, book = self.game, self.book
        assert game is not None and self.head is not None
        if fault is None:
            try:
                game.apply(action)  # the core's check refuses it again: its message, worded by _illegal
            except IllegalAction as exc:
                fault = SeatFault("illegal", str(exc))
            else:  # pragma: no cover - the same check in C cannot accept what it refused
                raise RuntimeError("the compiled core accepted a reply it had refused")
        recorded = book.charge(b, fault, game=self.head["index"], round=game.round)
        forfeit = book.forfeits[b]
        text = None if forfeit is None else str(forfeit)
        if recorded.kind in SeatFault.STRIKE_KINDS:
            game.fault(recorded.kind, recorded.reason, strikes=book.strikes[b], forfeit=text)
        else:
            game.fault(recorded.kind, recorded.reason, forfeit=text)

    def timed(self, b: int, seconds: Any) -> float | None:
        """Book bot ``b``'s reported ``seconds`` in ``timings``; the ``times`` entry (ms, None if not a number)."""
        if isinstance(seconds, _NUMBER) and not isinstance(seconds, bool):
            t = self.timings[b]
            t["decisions"] += 1
            t["total_seconds"] += float(seconds)
            t["max_seconds"] = max(t["max_seconds"], float(seconds))
            return round(seconds * 1000.0, 1)
        return None


def play_turns(
    game: CompiledGame,
    seats: Sequence[Any],
    seat_bot: list[int],
    configs: list[dict[str, Any]],
    book: StrikeBook,
    timings: list[dict[str, Any]],
    times: list[float | None],
    head: dict[str, Any],
    on_step: Callable[[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]], None] | None,
    decisions: int,
) -> int:
    """``engine.match._play_turns`` for a compiled game: the per-decision loop runs in C
    (issue 21 point 2) and only the seat's ``decide`` is Python, with the rare paths
    (a fault, a timed seat, the live hook) handed back here. Same arguments, same result,
    same replay, timings and hook calls (tests/engine/test_compiled.py)."""
    match = _match or _import_match()
    step_game = {**head, "over": False}
    referee = Referee(book, timings, game, head)
    # per bot: hand it snapshots (lazy_observation)
    lazy: list[bool] = []
    for seat in seats:  # a loop, not a comprehension (engine.match: "Plain loops")
        lazy.append(match._lazy(seat))
    decisions = game._play_turns(
        list(seats), lazy, seat_bot, configs, book.forfeits, times, on_step, step_game, decisions,
        referee.charge, referee.timed, SeatFault, match.agent_fault, gc.collect, match.GC_EVERY,
    )
    if on_step is not None:
        on_step({**step_game, "over": True}, game.events, game.actions)
    return decisions


def core_match(
    agent_seat: type, agent_decide: Any, agent_fault: Callable[[BaseException], SeatFault],
    game_seed: Callable[[int, int], int], seat_bots: Callable[[int, int, int, bool], list[int]],
    begin_game: Callable[[Any, int, int, Any], None], gc_every: int,
) -> Callable[..., tuple[Any, ...]] | None:
    """``engine.match._play_games`` in C (``engine._core.play_games``) when the core plays, else None;
    engine.match hands its pieces here once, at import (it imports this module: not the other way).
    Wired whenever the core is built (tests play it under ``ARENA_ENGINE=pure`` too)."""
    if _core is None:
        return None
    _core.set_match(Referee, agent_seat, agent_decide, agent_fault, SeatFault, game_seed, seat_bots,
                    begin_game, gc.collect, gc_every)
    return _core.play_games if COMPILED else None
