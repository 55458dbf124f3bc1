"""The referee: plays a match (several games, optionally duplicate) between seats.

>>> from engine.rules import Rules
>>> first = AgentSeat(lambda obs, conf: obs["legal_actions"][0], "first")
>>> play_match(Rules(players=2), [first, first], seed=3).players[0].rank in (1, 2)
True

``play_match`` loops over deals and rotations (``_play_games``; the same loop in C,
``engine._core.play_games``, for the common match: compiled games, no ``on_step``); each game
is played by the turn loop (``_play_turns``: ask, apply, record), which hands every fault to a
``StrikeBook``, the policy of RULES.md section 9 (see docs/engine.md for ranking and what is
recorded); the replay is written with ``engine.replay``'s writer. The result is typed and frozen
(``MatchResult``, ``SeatResult``, faults as ``engine.faults.Fault``). Pure: no I/O; a seat may do I/O behind ``decide`` and the optional
``begin_game(game_index)``, called on each bot's seat before each game (e.g. to
start a fresh bot process: BOT_CONTRACT.md, module state lives for one game).
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import threading
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from engine import compiled, replay
from engine.faults import Fault, SeatFault
from engine.game import Game, IllegalAction
from engine.rules import Rules
from engine.seating import seat_bots

#: ``on_step(game, events, actions)``: the live hook (see ``play_match``)
OnStep = Callable[[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]], None]
#: longest fault reason kept (a hostile bot controls the text)
MAX_REASON = 500
_NUMBER = (int, float)
# Plain loops: what play_match runs once per match (the argument checks, the results, the ranking)
# and per game (the game's head, the compiled turn loop's set-up) builds its small per-seat lists
# with loops, not comprehensions: on CPython 3.11 a comprehension is a function object and a call,
# about 1.5k instructions before its first item, and a one-game match ran a dozen of them
# (docs/performance.md, "Session 15: a one-game match's own cost").


class AgentSeat:
    """A trusted in-process ``agent(observation, configuration) -> action`` as a seat.

    With ``lazy_observation=True`` the agent gets ``Game.snapshot()`` (a read-only
    ``engine.snapshot.Snapshot``: tuples, shared action views) instead of a fresh
    plain dict: for agents that only read what they are shown (docs/engine.md,
    "Observations: plain or snapshot").
    """

    #: an in-process agent is not timed (a subclass or caller may set it)
    last_decision_seconds: float | None = None

    def __init__(
        self, agent: Callable[[Any, dict[str, Any]], Any], name: str = "agent", *, lazy_observation: bool = False
    ):
        self.agent = agent
        self.name = name
        #: read by the referee (``play_match``): hand this seat snapshots, not dicts
        self.lazy_observation = lazy_option(lazy_observation)

    def decide(self, observation: Mapping[str, Any], configuration: dict[str, Any]) -> Any:
        try:
            return self.agent(observation, configuration)
        except (Exception, SystemExit) as exc:  # any bug in the bot, even sys.exit(), is the bot's fault
            raise agent_fault(exc) from exc

    def __repr__(self) -> str:
        return f"AgentSeat({self.name!r})"


def agent_fault(exc: BaseException) -> SeatFault:
    """The fault of an in-process agent that raised ``exc`` (``AgentSeat.decide``; the compiled
    turn loop, which calls an ``AgentSeat``'s agent itself, books it the same)."""
    fault = SeatFault("exception", f"{type(exc).__name__}: {exc}")
    fault.__cause__ = exc
    return fault


#: AgentSeat's own decide: the compiled turn loop calls the agent of a seat whose decide this is itself
#: (engine._core's plain_agent, checked again whenever the seat or its class changed)
_AGENT_DECIDE = AgentSeat.decide


@dataclasses.dataclass(frozen=True)
class SeatResult:
    """How one bot (one entry of ``seats``) did over the whole match.

    ``forfeit`` is the fault that ended its match (None: it played to the end; kind
    ``strikes`` when ``max_strikes`` strikes did); ``faults`` every fault it made, in order.
    """

    bot: int
    name: str
    score: int
    rank: int
    wins: int
    forfeit: Fault | None
    strikes: int
    faults: tuple[Fault, ...]


class _PendingReplay:
    """A match's replay document not built yet: ``match_document``'s arguments, and per game
    ``(head, game, ranks)``, the arguments of its ``replay.game_record``: the core keeps a game's
    events and action records compact and builds their dicts only when ``game.events`` /
    ``game.actions`` are read, so a caller that never reads ``MatchResult.replay`` never pays for
    them (a pure game's dicts exist already: its record only refers to them)."""

    __slots__ = ("deals", "duplicate", "forfeits", "games", "names", "ranks", "rules", "scores", "seed",
                 "strikes", "wins")

    def __init__(self, rules: dict[str, Any], seed: int, deals: int, duplicate: bool, names: list[str],
                 games: list[Any], scores: list[int], ranks: list[int], wins: list[int],
                 forfeits: list[Fault | None], strikes: list[int]):
        self.rules, self.seed, self.deals, self.duplicate, self.names = rules, seed, deals, duplicate, names
        self.games, self.scores, self.ranks, self.wins = games, scores, ranks, wins
        self.forfeits, self.strikes = forfeits, strikes

    def build(self) -> dict[str, Any]:
        """The document, as ``play_match`` wrote it when it was built at once."""
        games = [replay.game_record(*g) for g in self.games]
        return replay.match_document(
            self.rules, seed=self.seed, deals=self.deals, duplicate=self.duplicate, names=self.names,
            games=games, scores=self.scores, ranks=self.ranks, wins=self.wins, forfeits=self.forfeits,
            strikes=self.strikes,
        )


_replay_lock = threading.Lock()


class _ReplayField:
    """``MatchResult.replay``: a plain dict when read; ``play_match`` hands a ``_PendingReplay``,
    built on the first read (once, under a lock, with the cyclic GC paused as during the match)
    and kept. The value lives in the instance's ``__dict__`` under ``replay`` either way, so
    equality, ``repr``, ``dataclasses.asdict``/``replace``, copying and pickling (``MatchResult.
    __getstate__`` builds it first) see the plain dict."""

    def __get__(self, obj: Any, owner: Any = None) -> dict[str, Any]:
        if obj is None:  # no class-level default: the dataclass field stays required
            raise AttributeError("replay")
        value = obj.__dict__["replay"]
        if type(value) is _PendingReplay:
            with _replay_lock:
                value = obj.__dict__["replay"]
                if type(value) is _PendingReplay:
                    with _cyclic_gc_paused:
                        value = obj.__dict__["replay"] = value.build()
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: Any, value: dict[str, Any] | _PendingReplay) -> None:
        obj.__dict__["replay"] = value


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """``players`` in the order seats were given; ``replay`` is JSON-serialisable (a plain dict,
    built when first read: ``_ReplayField``)."""

    players: tuple[SeatResult, ...]
    replay: dict[str, Any]
    games: int
    rounds: int
    timings: list[dict[str, Any]]
    #: per game, one entry per record of ``replay["games"][g]["actions"]``: the
    #: seat's reported milliseconds (0.1 ms), None for fallback moves and untimed seats
    decision_ms: list[list[float | None]] = dataclasses.field(default_factory=list)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied with the replay built (the state is ``vars(self)``, as before)."""
        self.replay  # noqa: B018 - read to build it
        return self.__dict__


# installed after the dataclass is made (a descriptor given as the field's default would make it an
# optional argument to type checkers); __init__ sets the field through it (object.__setattr__)
setattr(MatchResult, "replay", _ReplayField())  # noqa: B010


def game_seed(seed: int, deal: int) -> int:
    """The seed of deal number ``deal`` of a match seeded with ``seed``."""
    digest = hashlib.sha256(f"uno-arena:{seed}:{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


#: ``game_seed`` in the compiled core (about half the instructions), None without it: engine.compiled
_core_game_seed = compiled.CORE_GAME_SEED

#: decisions between two young-generation collections while the cyclic GC is paused
GC_EVERY = 20_000
_gc_lock = threading.Lock()
_gc_acquire, _gc_release = _gc_lock.acquire, _gc_lock.release
_gc_users = 0
_gc_was_enabled = False


class _CyclicGcPaused:
    """Pause the cyclic garbage collector for the duration of a match (``with _cyclic_gc_paused:``).

    Why: the replay being recorded is many small containers that all live to
    the end of the match, so the collector keeps re-scanning them (20-30 % of a
    match's time). They hold no cycles; refcounting frees what a match drops.
    Reentrant and thread-safe: the collector is restored when the last match
    running in the process ends. A class, not a generator context manager: it
    is entered once per match, and a one-game match is ~0.1 ms on the core.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        global _gc_users, _gc_was_enabled
        _gc_acquire()  # not ``with _gc_lock``: a try (free on 3.11) is cheaper (8.4k -> 6.4k a pause)
        try:
            if _gc_users == 0:
                _gc_was_enabled = gc.isenabled()
                gc.disable()
            _gc_users += 1
        finally:
            _gc_release()

    def __exit__(self, *exc: object) -> None:
        global _gc_users
        _gc_acquire()
        try:
            _gc_users -= 1
            if _gc_users == 0 and _gc_was_enabled:
                gc.enable()
        finally:
            _gc_release()


#: the pause every match takes: ``_CyclicGcPaused`` in C when the core is built (engine.compiled.GC_PAUSE,
#: two C calls a match instead of two Python frames and a lock's; tests/engine/test_match_gc.py runs both)
_cyclic_gc_paused: _CyclicGcPaused = compiled.GC_PAUSE or _CyclicGcPaused()


_last_rules: tuple[Rules, dict[str, Any]] | None = None


def _rules_dict(rules: Rules) -> dict[str, Any]:
    """``rules.to_dict()`` as a fresh dict; the last rule set's is kept (a ``Rules`` is frozen and its
    values are str, int, bool or None), so a run of matches under one rule set reads it once."""
    global _last_rules
    last = _last_rules
    if last is None or last[0] is not rules:
        last = _last_rules = (rules, rules.to_dict())
    return dict(last[1])


def _clip(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[:MAX_REASON] + "..."


def rank_bots(totals: Sequence[int], wins: Sequence[int], forfeits: Sequence[bool], scoring: str) -> list[int]:
    """Match rank per bot: by total points (higher wins for ``winner``, lower for
    ``penalty``), then game wins; forfeits last; equal keys share a rank.

    >>> rank_bots([10, 30, 30], [0, 1, 1], [False, False, False], "winner")
    [3, 1, 1]
    """
    sign = -1 if scoring == "winner" else 1
    n = len(totals)
    if len(wins) != n or len(forfeits) != n:
        raise ValueError(f"rank_bots: {n} totals, {len(wins)} wins, {len(forfeits)} forfeits")
    keys = []  # loops, not comprehensions, and no zip(strict=True), a keyword call: "Plain loops" above
    for b in range(n):
        keys.append((1, 0, 0) if forfeits[b] else (0, sign * totals[b], -wins[b]))
    order = sorted(keys)  # a key's rank: 1 + the keys below it
    ranks = []
    for mine in keys:
        ranks.append(1 + bisect_left(order, mine))
    return ranks


class StrikeBook:
    """The fault policy of RULES.md section 9, per bot: a ``timeout`` or an ``illegal``
    move costs a strike and ``max_strikes`` strikes forfeit the match; any other kind
    forfeits it at once.

    >>> book = StrikeBook(bots=2, max_strikes=2)
    >>> book.charge(0, SeatFault("timeout", "slow"), game=0, round=1).kind, book.forfeits[0]
    ('timeout', None)
    >>> str(book.charge(0, SeatFault("illegal", "R9"), game=0, round=2)) , str(book.forfeits[0])
    ('illegal: R9', 'strikes: 2 strikes (max_strikes=2), last illegal: R9')
    """

    __slots__ = ("faults", "forfeits", "max_strikes", "strikes")

    def __init__(self, bots: int, max_strikes: int):
        self.max_strikes = max_strikes
        self.strikes = [0] * bots
        #: the fault that forfeited each bot's match, None while it plays
        self.forfeits: list[Fault | None] = [None] * bots
        self.faults: list[list[Fault]] = []
        for _ in range(bots):  # not a comprehension: "Plain loops" above play_match
            self.faults.append([])

    def charge(self, bot: int, fault: SeatFault, *, game: int, round: int) -> Fault:
        """Record ``fault`` of ``bot`` in game ``game``, round ``round``; returns it as
        recorded (the reason clipped to ``MAX_REASON``)."""
        recorded = Fault(fault.kind, _clip(str(fault.reason)), game, round)
        self.faults[bot].append(recorded)
        if fault.kind in SeatFault.STRIKE_KINDS:
            self.strikes[bot] += 1
            if self.strikes[bot] >= self.max_strikes:
                why = f"{self.strikes[bot]} strikes (max_strikes={self.max_strikes}), last {recorded}"
                self.forfeits[bot] = Fault("strikes", why, game, round)
        else:
            self.forfeits[bot] = recorded
        return recorded


def play_match(
    rules: Rules,
    seats: Sequence[Any],
    *,
    seed: int = 0,
    deals: int = 1,
    duplicate: bool = False,
    configuration: dict[str, Any] | None = None,
    names: Sequence[str] | None = None,
    on_game: Callable[[int, int], None] | None = None,
    on_step: OnStep | None = None,
) -> MatchResult:
    """Play ``deals`` deals (each once per rotation when ``duplicate``).

    Before each game, every bot that has not forfeited gets ``seat.begin_game(index)``
    once (when its seat has that method), before the game's first decision.

    A seat whose ``lazy_observation`` attribute is ``True`` (``AgentSeat(...,
    lazy_observation=True)``, ``sandbox.backends.inprocess.InProcessSeat``'s option
    of that name) is handed ``Game.snapshot()`` at each decision; every other seat
    gets ``Game.observation()``, a fresh plain dict (docs/engine.md,
    "Observations: plain or snapshot").

    ``on_game(done, total)`` is called after each game, e.g. to draw a progress bar.

    ``on_step(game, events, actions)`` is called before every decision a bot is asked for
    and once when each game ends, for live viewers: ``game`` is the game's record without
    its events and actions (``index``, ``deal``, ``rotation``, ``seed``, ``seats``,
    ``names``, ``forfeited``, and ``over``), ``events`` and ``actions`` the game's lists
    so far (the referee's own: read them, never change them; they only grow).
    """
    n = len(seats)
    names = _check_arguments(rules, seats, seed, deals, names)
    rules_dict = _rules_dict(rules)
    extra = dict(configuration or {})
    # one configuration per bot for the whole match: a bot that alters its
    # copy cannot affect another bot or the referee
    configs: list[dict[str, Any]] = []
    timings: list[dict[str, Any]] = []
    for _ in range(n):  # loops, not comprehensions, here and below: "Plain loops" above play_match
        configs.append({"rules": dict(rules_dict), **extra})
        timings.append({"decisions": 0, "total_seconds": 0.0, "max_seconds": 0.0})
    book = StrikeBook(n, rules.max_strikes)
    with _cyclic_gc_paused:
        if on_step is None and _core_play_games is not None and compiled.COMPILED and compiled.supports(rules):
            # the common match: the same loop in C (engine._core.play_games; engine.compiled.core_match)
            played = _core_play_games(
                compiled.CompiledGame, rules, seats, seed, deals, duplicate, configs, names, book, timings, on_game,
                rules.scoring,
            )
        else:
            played = _play_games(rules, seats, seed, deals, duplicate, configs, names, book, timings, on_game, on_step)
    records, decision_ms, totals, wins, match_ranks, rounds = played
    forfeits = book.forfeits
    strikes, faults = book.strikes, book.faults
    results: list[SeatResult] = []
    for b in range(n):
        results.append(_new_result(SeatResult, {
            "bot": b, "name": names[b], "score": totals[b], "rank": match_ranks[b], "wins": wins[b],
            "forfeit": forfeits[b], "strikes": strikes[b], "faults": tuple(faults[b]),
        }))
    players = tuple(results)
    document = _PendingReplay(
        rules_dict, seed, deals, bool(duplicate), names, records, totals, match_ranks, wins, forfeits, strikes
    )
    return _new_result(MatchResult, {
        "players": players, "replay": document, "games": len(records), "rounds": rounds, "timings": timings,
        "decision_ms": decision_ms,
    })


def _play_games(
    rules: Rules,
    seats: Sequence[Any],
    seed: int,
    deals: int,
    duplicate: bool,
    configs: list[dict[str, Any]],
    names: list[str],
    book: StrikeBook,
    timings: list[dict[str, Any]],
    on_game: Callable[[int, int], None] | None,
    on_step: OnStep | None,
) -> tuple[list[tuple[dict[str, Any], Game, list[int]]], list[list[float | None]], list[int], list[int], list[int], int]:
    """``play_match``'s games: ``(records, decision_ms, totals, wins, ranks, rounds)``, per game what builds
    its record when the replay is read (``_PendingReplay``) and its action records' times, per bot its
    total points, game wins and match rank, and the rounds played. The reference of
    ``engine._core.play_games``, which plays the common match (compiled games, no ``on_step``) the same."""
    n = len(seats)
    forfeits = book.forfeits
    totals = [0] * n
    wins = [0] * n
    records: list[tuple[dict[str, Any], Game, list[int]]] = []
    decision_ms: list[list[float | None]] = []
    rounds = decisions = 0
    rotations = n if duplicate else 1
    for deal in range(deals):
        seed_d = None if _core_game_seed is None else _core_game_seed(seed, deal)
        if seed_d is None:
            seed_d = game_seed(seed, deal)
        for rotation in range(rotations):
            index = len(records)
            # bot sitting at each seat: the deal's base cyclic order, moved r seats on
            # (engine.seating: neighbours balanced over a cycle of deals)
            seat_bot = seat_bots(n, deal, rotation, duplicate)
            for b in seat_bot:
                if getattr(seats[b], "begin_game", None) is not None:  # most seats have none
                    _begin_game(seats[b], b, index, book)
            forfeited: list[int] = []
            seat_names: list[str] = []
            for s, b in enumerate(seat_bot):
                seat_names.append(names[b])
                if forfeits[b] is not None:
                    forfeited.append(s)
            head = replay.game_head(index, deal, rotation, seed_d, seat_bot, seat_names, forfeited)
            # the compiled core when it is built and plays these rules (engine.compiled)
            game = compiled.new_game(rules, seed_d)
            # one entry per action record: every decide call and every fallback move adds exactly one
            times: list[float | None] = []
            decision_ms.append(times)
            decisions = _play_turns(game, seats, seat_bot, configs, book, timings, times, head, on_step, decisions)
            ranks = game.ranks()
            scores = game.scores
            for s in range(n):
                totals[seat_bot[s]] += scores[s]
            if ranks.count(1) == 1:  # a game is won only by a sole first place (RULES.md section 7)
                wins[seat_bot[ranks.index(1)]] += 1
            rounds += game.round
            # a compiled game's events and actions stay compact until the replay is read
            records.append((head, game, ranks))
            if on_game is not None:
                on_game(len(records), deals * rotations)
    # no comprehension when no bot forfeited (the common match): "Plain loops" above
    forfeited_bots = [False] * n if forfeits.count(None) == n else [f is not None for f in forfeits]
    return records, decision_ms, totals, wins, rank_bots(totals, wins, forfeited_bots, rules.scoring), rounds


_T = TypeVar("_T")


def _frozen(cls: type[_T], fields: dict[str, Any]) -> _T:
    """``cls(**fields)`` for ``SeatResult`` and ``MatchResult`` given every field in the order the
    class declares them: their frozen dataclass ``__init__`` sets each field with
    ``object.__setattr__`` (a microsecond a result, a tenth of a one-game match's Python), this
    writes them to the instance's ``__dict__`` at once (``MatchResult.replay`` lives there too:
    ``_ReplayField``), from a dict display rather than keyword arguments (no call's keyword
    dict). tests/engine/test_match.py checks the two give equal objects."""
    obj = object.__new__(cls)
    obj.__dict__.update(fields)
    return obj


#: what play_match makes its results with: ``_frozen``, in C when the core is built (engine.compiled.FROZEN:
#: the same objects without a Python frame; tests/engine/test_match.py checks both)
_new_result: Callable[[type[_T], dict[str, Any]], _T] = compiled.FROZEN or _frozen


def _check_arguments(rules: Rules, seats: Sequence[Any], seed: int, deals: int, names: Sequence[str] | None) -> list[str]:
    """Raise on arguments ``play_match`` cannot play; the display names per seat."""
    n = len(seats)
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be engine.rules.Rules, got {type(rules).__name__}")
    if rules.players != n:
        raise ValueError(f"rules.players is {rules.players} but {n} seats were given")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be a positive int, got {deals!r}")
    shown: list[str] = []  # loops, not comprehensions: "Plain loops" above play_match
    if names is None:
        for i, seat in enumerate(seats):
            name = getattr(seat, "name", _NO_NAME)
            shown.append(name if type(name) is str else f"bot{i}" if name is _NO_NAME else str(name))
        return shown
    if len(names) != n:
        raise ValueError(f"names has {len(names)} entries for {n} seats")
    for x in names:
        shown.append(x if type(x) is str else str(x))
    return shown


_NO_NAME = object()


def _begin_game(seat: Any, bot: int, game_index: int, book: StrikeBook) -> None:
    """Tell bot ``bot``'s seat a game starts (a fresh bot process, BOT_CONTRACT.md).

    A fault is the bot's like one raised by ``decide``: a forfeiting kind
    forfeits it; a strike kind counts a strike (no cards: no game is under way).
    ``InfrastructureError`` goes through.
    """
    begin = getattr(seat, "begin_game", None)
    if book.forfeits[bot] is not None or begin is None:
        return
    try:
        begin(game_index)
    except SeatFault as fault:
        book.charge(bot, fault, game=game_index, round=0)


def lazy_option(value: Any) -> bool:
    """A seat's ``lazy_observation`` option, checked: exactly True or False (TypeError otherwise)."""
    if type(value) is not bool:
        raise TypeError(f"lazy_observation must be True or False, got {value!r}")
    return value


def _lazy(seat: Any) -> bool:
    """Whether ``seat`` opts in to read-only snapshots (its ``lazy_observation`` is ``True``)."""
    return getattr(seat, "lazy_observation", False) is True


def _play_turns(
    game: Game,
    seats: Sequence[Any],
    seat_bot: list[int],
    configs: list[dict[str, Any]],
    book: StrikeBook,
    timings: list[dict[str, Any]],
    times: list[float | None],
    head: dict[str, Any],
    on_step: OnStep | None,
    decisions: int,
) -> int:
    """Play ``game`` to its end: ask the seat whose turn it is, apply its action, or charge its
    fault to ``book`` (a forfeited bot's turns are the fallback's moves). Appends each action
    record's time to ``times``; returns ``decisions`` plus the decisions asked here.

    ``InfrastructureError`` from a seat goes through untouched: it is not a ``SeatFault``.
    """
    if type(game) is not Game:  # a compiled game: the same loop in C (engine.compiled.play_turns)
        return compiled.play_turns(
            game, seats, seat_bot, configs, book, timings, times, head, on_step, decisions  # type: ignore[arg-type]
        )
    apply = game.apply  # bound once: the loop runs per decision
    forfeits = book.forfeits
    # the one place that decides what each seat is handed: a snapshot if it opts in, else a plain dict
    observe = [game.snapshot if _lazy(seat) else game.observation for seat in seats]
    step_game = {**head, "over": False}
    while not game.over:
        b = seat_bot[game.seat]  # type: ignore[index]
        if forfeits[b] is not None:
            game.apply_fallback()
            times.append(None)
            continue
        decisions += 1
        if decisions % GC_EVERY == 0:
            gc.collect(0)  # cyclic garbage a seat made is freed this late at most
        observation = observe[b]()
        if on_step is not None:
            on_step(step_game, game.events, game.actions)
        seat = seats[b]
        try:
            action = seat.decide(observation, configs[b])
            fault = None
        except SeatFault as exc:
            fault = exc
        seconds = getattr(seat, "last_decision_seconds", None)
        if seconds is not None and isinstance(seconds, _NUMBER) and not isinstance(seconds, bool):
            t = timings[b]
            t["decisions"] += 1
            t["total_seconds"] += float(seconds)
            t["max_seconds"] = max(t["max_seconds"], float(seconds))
            times.append(round(seconds * 1000.0, 1))
        else:
            times.append(None)
        if fault is None:
            try:
                apply(action)
                continue
            except IllegalAction as exc:
                fault = SeatFault("illegal", str(exc))
        recorded = book.charge(b, fault, game=head["index"], round=game.round)
        forfeit = forfeits[b]
        text = None if forfeit is None else str(forfeit)
        if recorded.kind in SeatFault.STRIKE_KINDS:
            game.fault(recorded.kind, recorded.reason, strikes=book.strikes[b], forfeit=text)
        else:
            game.fault(recorded.kind, recorded.reason, forfeit=text)
    if on_step is not None:
        on_step({**step_game, "over": True}, game.events, game.actions)
    return decisions


#: ``_play_games`` in C for the common match (compiled games, no ``on_step``), None when the core does not
#: play: engine.compiled.core_match
_core_play_games = compiled.core_match(AgentSeat, _AGENT_DECIDE, agent_fault, game_seed, seat_bots, _begin_game, GC_EVERY)
