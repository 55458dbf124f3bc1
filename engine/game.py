"""The state machine of one UNO game: deals, decisions, legal actions, scoring.

>>> g = Game(Rules(players=2), seed=1)
>>> g.apply(g.legal_actions()[0]); g.decision in DECISIONS
True

A game is several rounds until the target (or a fixed number of rounds). It is
fully determined by (rules, seed, actions): every random choice comes from
``random.Random`` streams seeded from the game seed (see docs/engine.md for the
per-seat draw streams). The game records every effect in ``events`` and every
decision taken in ``actions``; ``engine.replay`` rebuilds states from them.

Cards are ints inside (``engine.cards``); dicts only at the edge
(``observation``, ``legal_actions``, ``apply``). Pure: no I/O, no clocks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from random import Random
from types import MappingProxyType
from typing import Any

from engine.cards import (
    CODES,
    COLOR_INDEX,
    COLORS,
    DECK,
    DECK_SIZE,
    DRAW_TWO,
    KIND,
    KIND_COLOR,
    KIND_POINTS,
    KIND_RANK,
    REVERSE,
    SKIP,
    WILD,
    WILD_DRAW_FOUR,
    WILD_DRAW_FOUR_KIND,
    WILD_KIND,
    kind_of,
)
from engine.rules import BOUNDS, Rules
from engine.snapshot import Snapshot

#: the decision kinds of BOT_CONTRACT.md
DECISIONS = ("play", "play_drawn", "choose_color", "challenge", "stack", "jump_in", "swap_target")

# internal action tuples: (PLAY, kind, colour), (DRAW,), (PASS,), (ACCEPT,),
# (CHALLENGE,), (SWAP, seat), (COLOR, colour)
PLAY, DRAW, PASS, ACCEPT, CHALLENGE, SWAP, COLOR = range(7)
#: an internal action tuple: its type first, then kind and colour, a seat or a colour
Act = tuple[int, ...]
_TYPE_NAMES = ("play", "draw", "pass", "accept", "challenge", "swap", "color")
_SIMPLE = {"draw": (DRAW,), "pass": (PASS,), "accept": (ACCEPT,), "challenge": (CHALLENGE,)}

#: safety net, not a rule option: a game of bots that never go out still ends after
#: this many rounds in a row end by ``max_turns`` (with no score, so no target is near)
MAX_STALLED_ROUNDS = 100
#: cards a seat draws for a refused action or a timeout (RULES.md section 9)
STRIKE_DRAW = 2


#: physical card id -> code
ID_CODE: tuple[str, ...] = tuple(CODES[k] for k in DECK)


def _action_dict(act: Act, uno: bool) -> dict[str, Any]:
    t = act[0]
    if t == PLAY:
        k = act[1]
        d: dict[str, Any] = {"type": "play", "card": CODES[k]}
        if KIND_COLOR[k] < 0:
            d["color"] = COLORS[act[2]]
        if uno:
            d["uno"] = True
        return d
    if t == SWAP:
        return {"type": "swap", "target": act[1]}
    if t == COLOR:
        return {"type": "color", "color": COLORS[act[1]]}
    return {"type": _TYPE_NAMES[t]}


def _all_actions() -> list[Act]:
    acts: list[Act] = [(t,) for t in (DRAW, PASS, ACCEPT, CHALLENGE)]
    for k in range(len(CODES)):
        colors = range(4) if KIND_COLOR[k] < 0 else (KIND_COLOR[k],)
        acts.extend((PLAY, k, c) for c in colors)
    acts.extend((SWAP, t) for t in range(BOUNDS["players"][1]))  # a swap target for every seat
    acts.extend((COLOR, c) for c in range(4))
    return acts


#: the fixed int-action encoding: action id -> internal action, derived from the
#: card kinds of ``engine.cards`` (docs/engine.md, "Int actions"); never reorder
ACTIONS: tuple[Act, ...] = tuple(_all_actions())
#: internal action -> its action id
ACTION_ID: dict[Act, int] = {a: i for i, a in enumerate(ACTIONS)}
NUM_ACTIONS = len(ACTIONS)

# every action dict prebuilt: the hot loop only copies them
_DICTS = {a: _action_dict(a, False) for a in ACTIONS}
_DICTS_UNO = {a: _action_dict(a, a[0] == PLAY) for a in ACTIONS}
#: a listed action in a ``Snapshot``: a read-only view of a prebuilt dict
View = MappingProxyType[str, Any]
# id of a prebuilt dict -> its one read-only view (the prebuilt dicts live as long as the module)
_VIEW_OF: dict[int, View] = {id(d): MappingProxyType(d) for t in (_DICTS, _DICTS_UNO) for d in t.values()}


#: one decision's legal actions: (internal actions, their prebuilt dicts, their action ids).
#: ``play`` and ``play_drawn`` listings are cached and shared by every decision listing the
#: same actions.
_Listing = tuple[Sequence[Act], Sequence[dict[str, Any]], tuple[int, ...]]
# id of a listing -> (the listing, its read-only views), built when a snapshot first
# asks. Holding the listing keeps its id from being reused while its entry is here.
# Kept beside the listing, not in it: a listing of immutable values is not tracked by
# the cyclic garbage collector, and the caches hold thousands.
_VIEWS_OF: dict[int, tuple[_Listing, tuple[View, ...]]] = {}
#: bound on that table: cleared when reached
VIEWS_TABLE_SIZE = 40_000


def _make_listing(legal: Sequence[Act], dicts: Sequence[dict[str, Any]]) -> _Listing:
    """The listing of ``legal`` (their dicts given): the action ids added."""
    return legal, dicts, tuple([ACTION_ID[a] for a in legal])


def _listing_views(listing: _Listing) -> tuple[View, ...]:
    got = _VIEWS_OF.get(id(listing))
    if got is not None:
        return got[1]
    views = tuple(_VIEW_OF[id(d)] for d in listing[1])
    if len(_VIEWS_OF) >= VIEWS_TABLE_SIZE:
        _VIEWS_OF.clear()
    _VIEWS_OF[id(listing)] = (listing, views)
    return views


# kinds playable on (active colour, top card rank), wilds included
_PLAYABLE = [
    [frozenset(k for k in range(len(CODES)) if KIND_COLOR[k] in (color, -1) or KIND_RANK[k] == rank)
     for rank in range(WILD_DRAW_FOUR + 1)]
    for color in range(4)
]
# the same as card codes: a hand's codes intersect with it without a Python call per card
_PLAYABLE_CODES = [[frozenset(CODES[k] for k in kinds) for kinds in by_rank] for by_rank in _PLAYABLE]
# the same by (active colour, top card id): the play decision's lookup without the top's kind and rank
_PLAYABLE_ON_CARD = [[by_rank[KIND_RANK[DECK[c]]] for c in range(DECK_SIZE)] for by_rank in _PLAYABLE_CODES]
_WILD_DRAW_FOUR_CODE = CODES[WILD_DRAW_FOUR_KIND]
# kind -> its play actions (a wild once per colour)
_PLAYS = [
    tuple((PLAY, k, c) for c in range(4)) if KIND_COLOR[k] < 0 else ((PLAY, k, KIND_COLOR[k]),)
    for k in range(len(CODES))
]
# kind -> its play action dicts in the same order, without and with "uno"
_PLAY_DICTS = [tuple(_DICTS[a] for a in acts) for acts in _PLAYS]
_PLAY_DICTS_UNO = [tuple(_DICTS_UNO[a] for a in acts) for acts in _PLAYS]
# kind -> the action ids of its play actions, in the same order
_PLAY_IDS = [tuple(ACTION_ID[a] for a in acts) for acts in _PLAYS]
_DRAW_ACT = (DRAW,)
_DRAW_DICT = _DICTS[_DRAW_ACT]
_DRAW_ID = ACTION_ID[_DRAW_ACT]
# kind -> the listing of a "play_drawn" decision, without and with "uno"
_DRAWN_LEGAL: tuple[list[_Listing], ...] = tuple(
    [
        _make_listing((*acts, (PASS,)), (*dicts[k], _DICTS[(PASS,)]))
        for k, acts in enumerate(_PLAYS)
    ]
    for dicts in (_PLAY_DICTS, _PLAY_DICTS_UNO)
)
# the listings of a "challenge" and a "choose_color" decision: always the same
_CHALLENGE_LEGAL = _make_listing(((ACCEPT,), (CHALLENGE,)), (_DICTS[(ACCEPT,)], _DICTS[(CHALLENGE,)]))
_COLOR_LEGAL = _make_listing(tuple((COLOR, c) for c in range(4)), tuple(_DICTS[(COLOR, c)] for c in range(4)))
_LegalCache = dict[frozenset[str], _Listing]
# playable card codes (frozenset) -> the listing of a "play" decision, without and
# with "uno"; filled as positions come up
_PLAY_LEGAL: tuple[_LegalCache, _LegalCache] = ({}, {})
#: bound on each of those caches (well under 1 KiB an entry): cleared when reached
PLAY_CACHE_SIZE = 20_000


def _play_legal(playable: frozenset[str], uno: bool) -> _Listing:
    legal: list[Act] = []
    dicts: list[dict[str, Any]] = []
    ids: list[int] = []
    play_dicts = _PLAY_DICTS_UNO if uno else _PLAY_DICTS
    for k in sorted(map(KIND.__getitem__, playable)):
        legal.extend(_PLAYS[k])
        dicts.extend(play_dicts[k])
        ids.extend(_PLAY_IDS[k])
    legal.append(_DRAW_ACT)
    dicts.append(_DRAW_DICT)
    ids.append(_DRAW_ID)
    cache = _PLAY_LEGAL[uno]
    if len(cache) >= PLAY_CACHE_SIZE:
        cache.clear()
    listing = cache[playable] = (tuple(legal), tuple(dicts), tuple(ids))
    return listing


class IllegalAction(ValueError):
    """A reply that is not one of the legal actions of the pending decision."""


def _short(value: Any, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a hostile reply may not even print (deep nesting, bad __repr__)
        text = f"<unprintable {type(value).__name__}: {type(exc).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


class Game:
    """One game between ``rules.players`` seats, from its first deal to the end."""

    # slots: fixed-offset attribute access in the hot loop (a plain instance
    # has more attributes than CPython's shared-key dicts hold)
    __slots__ = (
        "rules", "seed", "n", "scores", "events", "actions", "round", "dealer", "over", "decision",
        "seat", "current", "direction", "color", "pending", "turns", "hands", "uno", "discard",
        "discard_codes", "in_pile", "pile_count", "_stacking", "_wd4", "_jump_in", "_seven_zero",
        "_max_turns", "_hand_codes", "_legal", "_templates", "_ids", "_listing", "_given", "_drawn_kind", "_resolving",
        "_jump_queue", "_wd4_player", "_wd4_honest", "_forced", "_deal_seed", "_order", "_pos", "_srng",
        "_asked_at", "_stalled", "_uno_owed",
    )

    def __init__(self, rules: Rules, seed: int):
        self._init(rules, seed)
        self._start_round()

    def __deepcopy__(self, memo: dict[int, Any]) -> Game:
        """A deep copy (tests explore positions from one), sharing the read-only action views."""
        if self._listing is not None:
            for view in _listing_views(self._listing):
                memo[id(view)] = view  # a MappingProxyType cannot be copied, and needs not be
        other = object.__new__(type(self))
        memo[id(self)] = other
        for name in self.__slots__:
            if hasattr(self, name):
                setattr(other, name, copy.deepcopy(getattr(self, name), memo))
        return other

    @classmethod
    def setup(
        cls,
        rules: Rules,
        hands: list[list[str]],
        top: str,
        *,
        color: str | None = None,
        dealer: int = 0,
        current: int | None = None,
        draws: dict[int, list[str]] | None = None,
        scores: list[int] | None = None,
        first_card_effect: bool = False,
        seed: int = 0,
    ) -> Game:
        """A game whose first round starts from a chosen position (scenarios, puzzles, tests).

        ``hands`` and ``top`` are card codes; the other cards form the draw pile.
        ``draws[seat]`` lists the cards that seat draws next (before its stream).
        Without ``first_card_effect`` seat ``current`` (default: left of the
        dealer) is asked to play on ``top`` with ``color`` (default: top's colour);
        with it, the starting card is handled as RULES.md section 2 says. Later
        rounds are dealt from ``seed``.

        >>> g = Game.setup(Rules(players=2), [["R1", "G2"], ["B3"]], "R5")
        >>> g.seat, [a["card"] for a in g.legal_actions()[:-1]]
        (1, [])
        """
        game = cls.__new__(cls)
        game._init(rules, seed)
        n = game.n
        if len(hands) != n:
            raise ValueError(f"setup: {len(hands)} hands for {n} players")
        free: dict[int, list[int]] = {}
        for c in range(DECK_SIZE - 1, -1, -1):
            free.setdefault(DECK[c], []).append(c)

        def take(code: str) -> int:
            ids = free.get(kind_of(code))
            if not ids:
                raise ValueError(f"setup: no {code!r} left in the deck (each card exists as often as in the 108-card deck)")
            return ids.pop()

        game.hands = [[take(code) for code in hand] for hand in hands]
        top_id = take(top)
        in_pile = bytearray(DECK_SIZE)
        for ids in free.values():
            for c in ids:
                in_pile[c] = 1
        forced: dict[int, list[int]] = {}
        for seat, codes in (draws or {}).items():
            forced[seat] = [take(code) for code in codes]
            for c in forced[seat]:
                in_pile[c] = 1
        game._forced = forced
        game.round = 1
        game.dealer = dealer % n
        if scores is not None:
            game.scores = list(scores)
        if not first_card_effect and color is None and KIND_COLOR[DECK[top_id]] < 0:
            raise ValueError(f"setup: top card {top!r} is a wild: name its colour with color=")
        if color is not None and color not in COLOR_INDEX:
            raise ValueError(f"setup: colour {color!r} is not one of {', '.join(COLORS)}")
        game._open_round(
            in_pile, top_id, Random(f"{seed}:1"), f"{seed}:1", first_card_effect, current, color
        )
        return game

    def _init(self, rules: Rules, seed: int) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be engine.rules.Rules, got {type(rules).__name__}")
        self.rules = rules
        self.seed = seed
        self.n = n = rules.players
        # rule options cached as attributes: the hot loop reads them often
        self._stacking = rules.stacking
        self._wd4 = rules.wd4
        self._jump_in = rules.jump_in
        self._seven_zero = rules.seven_zero
        self._max_turns = rules.max_turns
        self.scores = [0] * n
        self.events: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        #: events before the latest action record: the next record's ``since`` counts from here
        self._asked_at = 0
        #: rounds in a row that ended by ``max_turns``
        self._stalled = 0
        self.round = 0
        self.dealer = Random(f"{seed}:dealer").randrange(n)
        self.over = False
        self.decision: str | None = None
        self.seat: int | None = None
        self.current = 0
        self.direction = 1
        self.color = -1
        self.pending = 0
        self.turns = 0
        self.hands: list[list[int]] = [[] for _ in range(n)]
        # the same hands as codes, kept in step with ``hands``: observations copy them
        self._hand_codes: list[list[str]] = [[] for _ in range(n)]
        self.uno = [False] * n
        self.discard: list[int] = []
        self.discard_codes: list[str] = []
        self.in_pile = bytearray(DECK_SIZE)
        self.pile_count = 0
        self._legal: Sequence[Act] | None = None
        # the prebuilt dicts of ``_legal`` (never handed out), and the copies the
        # last observation handed out: a reply that *is* one of them is matched
        # without parsing it
        self._templates: Sequence[dict[str, Any]] = []
        # the action ids of ``_legal``, in the same order
        self._ids: tuple[int, ...] = ()
        # the ``_Listing`` they come from (with their ids and views)
        self._listing: _Listing | None = None
        # what the last observation handed out: its copies of the templates, or their views
        self._given: Sequence[dict[str, Any] | View] | None = None
        self._drawn_kind = -1
        self._resolving: tuple[int, int] | None = None
        self._jump_queue: list[int] = []
        self._wd4_player = -1
        self._wd4_honest = False
        self._forced: dict[int, list[int]] = {}
        #: seat that owes its UNO penalty once its 7's swap is chosen (seven_zero), else -1
        self._uno_owed = -1

    # ------------------------------------------------------------------ deal
    def _start_round(self) -> None:
        n, rules = self.n, self.rules
        self.round += 1
        self._forced = {}  # a set-up position fixes draws of its first round only
        if self.round > 1:
            self.dealer = (self.dealer + 1) % n
        deal_seed = f"{self.seed}:{self.round}"
        rng = Random(deal_seed)
        h = rules.hand_size
        # only the dealt cards and the turned card need an order: the draw
        # pile is a set, read through each seat's private order
        dealt = rng.sample(range(DECK_SIZE), n * h + 1)
        self.hands = [dealt[s * h : (s + 1) * h] for s in range(n)]
        top = dealt[-1]
        in_pile = bytearray(b"\x01" * DECK_SIZE)
        for c in dealt:
            in_pile[c] = 0
        self._open_round(in_pile, top, rng, deal_seed)

    def _open_round(
        self,
        in_pile: bytearray,
        top: int,
        rng: Random,
        deal_seed: str,
        effect: bool = True,
        current: int | None = None,
        color: str | None = None,
    ) -> None:
        """Turn ``top`` up (RULES.md section 2) and start play; ``in_pile`` marks the draw pile."""
        n, rules = self.n, self.rules
        self.in_pile = in_pile
        self._hand_codes = [[ID_CODE[c] for c in hand] for hand in self.hands]
        returned: list[str] = []
        if not effect:
            unfit = None
        elif rules.first_card == "apply":
            # a Wild Draw Four goes back and a new card is turned from the
            # reshuffled deck (the deal bound, rules.MAX_DEAL, leaves a fit card)
            def unfit(c: int) -> bool:
                return DECK[c] == WILD_DRAW_FOUR_KIND

        else:

            def unfit(c: int) -> bool:
                return KIND_RANK[DECK[c]] > 9

        while unfit is not None and unfit(top):
            pile = [c for c in range(DECK_SIZE) if in_pile[c]] + [top]
            if all(unfit(c) for c in pile):
                # only a set-up position can get here: a dealt round obeys rules.MAX_DEAL
                raise ValueError(f"setup: no card left that may start the pile under first_card={rules.first_card}")
            returned.append(ID_CODE[top])
            in_pile[top] = 1
            top = pile[int(rng.random() * len(pile))]
            in_pile[top] = 0
        self.pile_count = sum(in_pile)
        self.discard = [top]
        top_kind = DECK[top]
        self.discard_codes = [CODES[top_kind]]
        self.direction = 1
        self.pending = 0
        self.turns = 0
        self.uno = [False] * n
        self.color = KIND_COLOR[top_kind] if color is None else COLOR_INDEX[color]
        self._deal_seed = deal_seed
        # per-seat draw streams: a lazily generated private permutation of the
        # 108 card ids per seat (docs/engine.md "Draws")
        self._order: list[list[int] | None] = [None] * n
        self._pos = [0] * n
        self._srng: list[Random | None] = [None] * n
        self.events.append(
            {
                "e": "round_start",
                "round": self.round,
                "dealer": self.dealer,
                "hands": [codes.copy() for codes in self._hand_codes],
                "returned": returned,
                "top": CODES[top_kind],
                "color": None if self.color < 0 else COLORS[self.color],
                "draw_pile": self.pile_count,
                "scores": list(self.scores),
            }
        )
        first = (self.dealer + 1) % n
        rank = KIND_RANK[top_kind]
        if not effect:
            self._start_turn(first if current is None else current % n)
        elif rank <= 9:
            self._start_turn(first)
        elif rank == SKIP:
            self.events.append({"e": "skip", "seat": first})
            self._start_turn((first + 1) % n)
        elif rank == REVERSE:
            self.direction = -1
            self.events.append({"e": "direction", "direction": -1})
            self._start_turn(self.dealer)
        elif rank == DRAW_TWO:
            self._draw(first, 2, "penalty")
            self.events.append({"e": "skip", "seat": first})
            self._start_turn((first + 1) % n)
        elif self._begin_turn(first):  # Wild (or the Wild Draw Four edge case)
            self._ask(first, "choose_color")

    # ----------------------------------------------------------------- draws
    def _draw_one(self, s: int) -> int:
        if self._forced:
            forced = self._forced.get(s)
            while forced:
                c = forced.pop(0)
                if self.in_pile[c]:
                    self.in_pile[c] = 0
                    self.pile_count -= 1
                    return c
        order = self._order[s]
        if order is None:
            order = self._order[s] = list(range(DECK_SIZE))
            self._srng[s] = Random(f"{self._deal_seed}:seat:{s}")
        rnd = self._srng[s].random  # type: ignore[union-attr]
        pos = self._pos[s]
        in_pile = self.in_pile
        # lazy Fisher-Yates: the seat's private order is extended only as far
        # as it is read; cards already out of the pile are passed over
        while True:
            j = pos + int(rnd() * (DECK_SIZE - pos))
            c = order[j]
            order[j] = order[pos]
            order[pos] = c
            pos += 1
            if in_pile[c]:
                break
        self._pos[s] = pos
        in_pile[c] = 0
        self.pile_count -= 1
        return c

    def _reshuffle(self) -> bool:
        moved = self.discard[:-1]
        if not moved:
            return False
        in_pile = self.in_pile
        for c in moved:
            in_pile[c] = 1
        self.pile_count += len(moved)
        self.discard = self.discard[-1:]
        self.discard_codes = self.discard_codes[-1:]
        # every seat's private order is regenerated from its own stream
        self._pos = [0] * self.n
        self.events.append({"e": "reshuffle", "cards": len(moved)})
        return True

    def _draw(self, s: int, count: int, reason: str, until_playable: bool = False) -> int:
        """Seat ``s`` draws ``count`` cards (or until playable); returns the last card id or -1."""
        hand = self.hands[s]
        codes = self._hand_codes[s]
        chunk: list[str] = []
        last = -1
        drawn = 0
        while drawn < count:
            if self.pile_count == 0:
                if chunk:
                    self.events.append({"e": "draw", "seat": s, "cards": chunk, "reason": reason})
                    chunk = []
                if not self._reshuffle():
                    break
            last = self._draw_one(s)
            hand.append(last)
            code = ID_CODE[last]
            codes.append(code)
            chunk.append(code)
            drawn += 1
            if until_playable and self._playable(s, DECK[last]):
                break
        if chunk or drawn == 0:
            self.events.append({"e": "draw", "seat": s, "cards": chunk, "reason": reason})
        if drawn:
            self.uno[s] = False
        return last

    # ----------------------------------------------------------------- turns
    def _ask(self, seat: int, decision: str) -> None:
        self.seat = seat
        self.decision = decision
        self._legal = None
        self._given = None

    def _begin_turn(self, s: int) -> bool:
        self.turns += 1
        if self.turns > self._max_turns:
            self._end_round(None)
            return False
        self.current = s
        self.events.append({"e": "turn", "seat": s})
        return True

    def _start_turn(self, s: int) -> None:
        # _begin_turn and _ask inlined (keep the three in step): every turn passes here
        turns = self.turns = self.turns + 1
        if turns > self._max_turns:
            self._end_round(None)
            return
        self.current = s
        self.events.append({"e": "turn", "seat": s})
        self.seat = s
        self.decision = "play"
        self._legal = None
        self._given = None

    def _honest(self, s: int) -> bool:
        """True when seat ``s`` holds no card of the active colour."""
        color = self.color
        for c in self.hands[s]:
            if KIND_COLOR[DECK[c]] == color:
                return False
        return True

    def _playable(self, s: int, k: int) -> bool:
        kc = KIND_COLOR[k]
        if kc >= 0:
            return kc == self.color or KIND_RANK[k] == KIND_RANK[DECK[self.discard[-1]]]
        return k == WILD_KIND or self._wd4 != "enforced" or self._honest(s)

    def _play(self, s: int, k: int, color: int, uno: bool, jump: bool = False) -> None:
        hand = self.hands[s]
        if k == WILD_DRAW_FOUR_KIND and self._wd4 == "challenge":
            self._wd4_player = s
            self._wd4_honest = self._honest(s)
        code = CODES[k]
        codes = self._hand_codes[s]
        i = codes.index(code)  # the first card of that kind, found in C
        self.discard.append(hand.pop(i))
        del codes[i]
        self.discard_codes.append(code)
        self.color = color
        events = self.events
        event = {"e": "play", "seat": s, "card": code, "color": COLORS[color]}
        if jump:
            event["jump_in"] = True
        left = len(hand)
        rank = KIND_RANK[k]
        owed = False  # a 7 or 0 under seven_zero: its UNO penalty comes after the swap or pass
        if left == 1:
            if uno:
                event["uno"] = True
            events.append(event)
            self.uno[s] = uno
            if not uno:
                events.append({"e": "uno_caught", "seat": s})
                if self.rules.uno_penalty:
                    if self._seven_zero and (rank == 0 or rank == 7):
                        owed = True
                    else:
                        self._draw(s, self.rules.uno_penalty, "uno")
        else:
            events.append(event)
            self.uno[s] = False
            if not left:
                self._go_out(s, k)  # a last 7 or 0 goes out at once: no swap, no pass
                return
        if rank == REVERSE:
            self.direction = -self.direction
            self.events.append({"e": "direction", "direction": self.direction})
        elif self._seven_zero:
            if rank == 0:
                n, d = self.n, self.direction
                hands, hand_codes = self.hands, self._hand_codes
                self.hands = [hands[(i - d) % n] for i in range(n)]
                self._hand_codes = [hand_codes[(i - d) % n] for i in range(n)]
                self.uno = [False] * n
                self.events.append({"e": "pass_hands", "direction": d})
                if owed:
                    self._draw(s, self.rules.uno_penalty, "uno")  # into the hand it now holds
            elif rank == 7:
                if owed:
                    self._uno_owed = s
                self._resolving = (s, k)
                self._ask(s, "swap_target")
                return
        if self._jump_in:
            self._after_effect(s, k)
        else:
            self._advance(s, k)

    def _after_effect(self, s: int, k: int) -> None:
        """The jump-in window (if any), then the card's effect on the next seats."""
        if self._jump_in and KIND_COLOR[k] >= 0:
            n, d = self.n, self.direction
            queue = []
            for step in range(1, n):
                seat = (s + step * d) % n
                for c in self.hands[seat]:
                    if DECK[c] == k:
                        queue.append(seat)
                        break
            if queue:
                self._resolving = (s, k)
                self._jump_queue = queue
                self._ask(queue.pop(0), "jump_in")
                return
        self._advance(s, k)

    def _advance(self, s: int, k: int) -> None:
        n, d = self.n, self.direction
        nxt = (s + d) % n
        rank = KIND_RANK[k]
        if rank <= 9 or rank == WILD:
            self._start_turn(nxt)
        elif rank == SKIP:
            self.events.append({"e": "skip", "seat": nxt})
            self._start_turn((nxt + d) % n)
        elif rank == REVERSE:
            if n == 2 and self.rules.two_player_reverse_skips:
                self.events.append({"e": "skip", "seat": nxt})
                self._start_turn(s)
            else:
                self._start_turn(nxt)
        elif rank == DRAW_TWO:
            self.pending = self.pending + 2 if self._stacking == "stack" else 2
            self._penalty(nxt)
        elif self._wd4 == "challenge":
            if self._begin_turn(nxt):
                self.pending = 4
                self.events.append({"e": "pending", "seat": nxt, "cards": 4})
                self._ask(nxt, "challenge")
        else:
            self.pending = self.pending + 4 if self._stacking == "stack" else 4
            self._penalty(nxt)

    def _answers(self, s: int) -> list[Act]:
        """Cards seat ``s`` may answer a pending Draw Two / Wild Draw Four with."""
        top_rank = KIND_RANK[DECK[self.discard[-1]]]
        kinds = sorted({DECK[c] for c in self.hands[s]})
        out: list[Act] = []
        for k in kinds:
            if KIND_RANK[k] == DRAW_TWO and (top_rank == DRAW_TWO or KIND_COLOR[k] == self.color):
                out.append((PLAY, k, KIND_COLOR[k]))
            elif k == WILD_DRAW_FOUR_KIND and self._stacking == "stack" and (
                self._wd4 != "enforced" or self._honest(s)
            ):
                out.extend((PLAY, k, c) for c in range(4))
        return out

    def _penalty(self, v: int) -> None:
        """Seat ``v`` faces the pending draw: answer it (stacking) or draw and lose the turn."""
        if self._stacking != "off" and self._answers(v):
            if self._begin_turn(v):
                self.events.append({"e": "pending", "seat": v, "cards": self.pending})
                self._ask(v, "stack")
            return
        self._take_penalty(v)

    def _take_penalty(self, v: int) -> None:
        amount, self.pending = self.pending, 0
        self._draw(v, amount, "penalty")
        self.events.append({"e": "skip", "seat": v})
        self._start_turn((v + self.direction) % self.n)

    def _go_out(self, s: int, k: int) -> None:
        rank = KIND_RANK[k]
        if rank == DRAW_TWO or rank == WILD_DRAW_FOUR:
            # the last card's penalty still hits the next seat, unanswered
            value = 2 if rank == DRAW_TWO else 4
            amount = self.pending + value if self._stacking == "stack" else value
            self.pending = 0
            self._draw((s + self.direction) % self.n, amount, "penalty")
        self._end_round(s)

    def _turn_draw(self, s: int) -> None:
        if self.rules.draw == "one":
            last = self._draw(s, 1, "draw")
        else:
            last = self._draw(s, self.rules.draw_limit, "draw", until_playable=True)
        if last >= 0 and self._playable(s, DECK[last]):
            self._drawn_kind = DECK[last]
            self._ask(s, "play_drawn")
        else:
            self._start_turn((s + self.direction) % self.n)

    # ------------------------------------------------------------ round end
    def _end_round(self, winner: int | None) -> None:
        n = self.n
        left = [sum(KIND_POINTS[DECK[c]] for c in hand) for hand in self.hands]
        if winner is None:
            gained = [0] * n
        elif self.rules.scoring == "winner":
            gained = [0] * n
            gained[winner] = sum(left)
        else:
            gained = left
        for s in range(n):
            self.scores[s] += gained[s]
        self.pending = 0  # a penalty still in play when max_turns hits is void
        self.events.append(
            {
                "e": "round_end",
                "round": self.round,
                "winner": winner,
                "reason": "out" if winner is not None else "max_turns",
                "points": gained,
                "scores": list(self.scores),
            }
        )
        rules = self.rules
        self._stalled = self._stalled + 1 if winner is None else 0
        if rules.rounds is not None:
            done = self.round >= rules.rounds
        else:
            done = max(self.scores) >= rules.target  # type: ignore[operator]
        if done or self._stalled >= MAX_STALLED_ROUNDS:
            self.over = True
            self.decision = None
            self.seat = None
            self._legal = []
            self._templates = []
            self._ids = ()
            self._listing = None
            self._given = None
            self.events.append({"e": "game_end", "scores": list(self.scores), "ranks": self.ranks()})
        else:
            self._start_round()

    def ranks(self) -> list[int]:
        """Rank per seat by game score (1 = best; ties share a rank)."""
        sign = -1 if self.rules.scoring == "winner" else 1
        keys = [sign * x for x in self.scores]
        return [1 + sum(1 for other in keys if other < mine) for mine in keys]

    # --------------------------------------------------------- legal actions
    def _legal_internal(self) -> Sequence[Act]:
        legal = self._legal
        if legal is not None:
            return legal
        s, decision = self.seat, self.decision
        hand = self.hands[s]  # type: ignore[index]
        if decision == "play":
            playable = _PLAYABLE_ON_CARD[self.color][self.discard[-1]].intersection(self._hand_codes[s])  # type: ignore[index]
            if _WILD_DRAW_FOUR_CODE in playable and self._wd4 == "enforced" and not self._honest(s):  # type: ignore[arg-type]
                playable = playable - {_WILD_DRAW_FOUR_CODE}
            uno = len(hand) == 2
            listing = _PLAY_LEGAL[uno].get(playable) or _play_legal(playable, uno)
        elif decision == "play_drawn":
            listing = _DRAWN_LEGAL[len(hand) == 2][self._drawn_kind]
        elif decision == "challenge":
            listing = _CHALLENGE_LEGAL
        elif decision == "choose_color":
            listing = _COLOR_LEGAL
        else:
            if decision == "stack":
                legal = self._answers(s)  # type: ignore[arg-type]
                legal.append((ACCEPT,))
            elif decision == "jump_in":
                k = self._resolving[1]  # type: ignore[index]
                legal = [(PLAY, k, KIND_COLOR[k]), (PASS,)]
            elif decision == "swap_target":
                legal = [(SWAP, t) for t in range(self.n) if t != s]
            else:
                legal = []
            table = _DICTS_UNO if len(hand) == 2 else _DICTS
            listing = _make_listing(legal, [table[a] for a in legal])
        self._listing = listing
        self._legal, self._templates, self._ids = listing
        return listing[0]

    def legal_actions(self) -> list[dict[str, Any]]:
        """Every action allowed now, as BOT_CONTRACT.md dicts (fresh copies)."""
        if self.over:
            return []
        if self._legal is None:
            self._legal_internal()
        return [d.copy() for d in self._templates]

    # ---------------------------------------------------------- observation
    def view(self, seat: int) -> dict[str, Any]:
        """What ``seat`` sees now, without the decision: nothing hidden."""
        hands = self.hands
        return {
            "seat": seat,
            "players": self.n,
            "hand": self._hand_codes[seat].copy(),
            "top_card": self.discard_codes[-1],
            "color": None if self.color < 0 else COLORS[self.color],
            "direction": self.direction,
            "current": self.current,
            "hand_sizes": list(map(len, hands)),
            "uno": self.uno.copy(),
            "scores": self.scores.copy(),
            "draw_pile": self.pile_count,
            "discard": self.discard_codes.copy(),
            "pending_draw": self.pending if self.decision in ("stack", "challenge") else 0,
            "round": self.round,
            "dealer": self.dealer,
        }

    def observation(self) -> dict[str, Any]:
        """The observation of BOT_CONTRACT.md for the seat asked now."""
        if self.over:
            raise RuntimeError("the game is over: no seat is asked")
        if self._legal is None:
            self._legal_internal()
        given = self._given = [d.copy() for d in self._templates]
        # view() inlined (this runs once per decision); a test keeps the two in step
        s = self.seat
        color = self.color
        decision = self.decision
        return {
            "seat": s,
            "players": self.n,
            "hand": self._hand_codes[s].copy(),  # type: ignore[index]
            "top_card": self.discard_codes[-1],
            "color": None if color < 0 else COLORS[color],
            "direction": self.direction,
            "current": self.current,
            "hand_sizes": list(map(len, self.hands)),
            "uno": self.uno.copy(),
            "scores": self.scores.copy(),
            "draw_pile": self.pile_count,
            "discard": self.discard_codes.copy(),
            "pending_draw": self.pending if decision == "stack" or decision == "challenge" else 0,
            "round": self.round,
            "dealer": self.dealer,
            "decision": decision,
            "legal_actions": given,
        }

    def snapshot(self) -> Snapshot:
        """The observation of the seat asked now as a read-only, lazy ``engine.snapshot.Snapshot``.

        Same keys, order and content as ``observation()`` (``to_dict()`` gives
        that dict); sequences are tuples and ``legal_actions`` read-only views
        shared between decisions. For trusted in-process code only
        (docs/engine.md, "Observations: plain or snapshot").
        """
        if self.over:
            raise RuntimeError("the game is over: no seat is asked")
        if self._legal is None:
            self._legal_internal()
        views = self._given = _listing_views(self._listing)  # type: ignore[arg-type]
        s = self.seat
        color = self.color
        decision = self.decision
        discard = self.discard_codes
        return Snapshot(
            (
                s,
                self.n,
                tuple(self._hand_codes[s]),  # type: ignore[index]
                discard[-1],
                None if color < 0 else COLORS[color],
                self.direction,
                self.current,
                tuple(map(len, self.hands)),
                tuple(self.uno),
                tuple(self.scores),
                self.pile_count,
                len(discard),  # the snapshot reads the pile's first codes when asked
                self.pending if decision == "stack" or decision == "challenge" else 0,
                self.round,
                self.dealer,
                decision,
                views,
            ),
            discard,
        )

    def state(self) -> dict[str, Any]:
        """The full state (every hand), as ``engine.replay.state_at`` rebuilds it."""
        return {
            "round": self.round,
            "dealer": self.dealer,
            "hands": [[ID_CODE[c] for c in hand] for hand in self.hands],
            "discard": list(self.discard_codes),
            "draw_pile": self.pile_count,
            "color": None if self.color < 0 else COLORS[self.color],
            "direction": self.direction,
            "current": self.current,
            "scores": list(self.scores),
            "uno": list(self.uno),
            "pending_draw": self.pending,
            "over": self.over,
        }

    # ------------------------------------------------------------- applying
    def _match(self, action: Any) -> Act | None:
        """The legal internal action a reply stands for, or None."""
        if type(action) is not dict and type(action) is not MappingProxyType:
            return None
        size = len(action) - ("uno" in action)
        t = action.get("type")
        decision = self.decision
        if t == "play":
            code = action.get("card")
            k = KIND.get(code) if type(code) is str else None
            if k is None:
                return None
            kc = KIND_COLOR[k]
            if kc >= 0:
                act = (PLAY, k, kc) if size == 2 else None
            else:
                color = action.get("color")
                ci = COLOR_INDEX.get(color) if size == 3 and type(color) is str else None
                act = None if ci is None else (PLAY, k, ci)
            return act if act is not None and act in self._legal_internal() else None
        if type(t) is not str:
            return None
        simple = _SIMPLE.get(t)
        if simple is not None:
            return simple if size == 1 and simple in self._legal_internal() else None
        if t == "swap" and decision == "swap_target":
            target = action.get("target")
            if size == 2 and type(target) is int and (SWAP, target) in self._legal_internal():
                return (SWAP, target)
            return None
        if t == "color" and decision == "choose_color":
            color = action.get("color")
            if size == 2 and type(color) is str and color in COLORS:
                return (COLOR, COLORS.index(color))
        return None

    def apply(self, action: Any) -> None:
        """Apply the reply of the seat asked now; ``IllegalAction`` if it is not legal."""
        if self.over:
            raise IllegalAction(f"the game is over; got action {_short(action)}")
        act = None
        given = self._given
        if given is not None:
            # the usual reply is one of the dicts the observation handed out (or one of
            # a snapshot's read-only views of them); a bot may have changed a dict
            # since, hence the comparison by value
            i = 0
            for d in given:
                if d is action:
                    template = self._templates[i]
                    uno = "uno" in template
                    # exact JSON types, as _match checks them: True is not 1
                    if action == template and (not uno or action["uno"] is True) and (
                        self.decision != "swap_target" or type(action["target"]) is int
                    ):
                        act = self._legal[i]  # type: ignore[index]
                        record = template.copy()
                    break
                i += 1
        if act is None:
            act = self._match(action)
            if act is None:
                raise IllegalAction(
                    f"illegal action {_short(action)} for decision {self.decision!r} of seat {self.seat}"
                    f" (legal: {_short(self.legal_actions(), 400)})"
                )
            uno = act[0] == PLAY and action.get("uno") is True
            record = (_DICTS_UNO if uno else _DICTS)[act].copy()
        self._commit(act, uno, record)

    def legal_action_ids(self) -> list[int]:
        """The legal actions now as action ids (``ACTIONS``), in the order of ``legal_actions``."""
        if self.over:
            return []
        if self._legal is None:
            self._legal_internal()
        return list(self._ids)

    def step(self, action_id: int) -> None:
        """Apply the legal action ``action_id`` (``ACTIONS``): ``apply`` without dicts.

        A play that leaves one card declares UNO, as its listed action does.
        ``IllegalAction`` if the id is not legal now.
        """
        if self.over:
            raise IllegalAction(f"the game is over; got action id {_short(action_id)}")
        if type(action_id) is not int:  # exactly: True is not 1
            raise IllegalAction(f"not an action id (0..{NUM_ACTIONS - 1}): {_short(action_id)}")
        if self._legal is None:
            self._legal_internal()
        try:
            i = self._ids.index(action_id)
        except ValueError:
            if not 0 <= action_id < NUM_ACTIONS:  # checked here only: a legal id is one
                raise IllegalAction(f"not an action id (0..{NUM_ACTIONS - 1}): {_short(action_id)}") from None
            raise IllegalAction(
                f"illegal action id {action_id} ({_short(_DICTS[ACTIONS[action_id]])}) for decision"
                f" {self.decision!r} of seat {self.seat} (legal ids: {self.legal_action_ids()})"
            ) from None
        template = self._templates[i]
        self._commit(self._legal[i], "uno" in template, template.copy())  # type: ignore[index]

    def play_ids(self, policy: Callable[[list[int]], int]) -> int:
        """Play the game to its end, ``policy(ids)`` choosing each action from ``legal_action_ids()``
        (a fresh list each time): ``step(policy(legal_action_ids()))`` while not over. Returns the
        decisions played; an ``IllegalAction`` (an id not legal) or the policy's exception goes
        through with the game left where it stopped. The compiled core runs the same loop in C.
        """
        n = 0
        while not self.over:
            self.step(policy(self.legal_action_ids()))
            n += 1
        return n

    def _commit(self, act: Act, uno: bool, record: dict[str, Any]) -> None:
        """Record and carry out the legal internal action ``act`` of the seat asked now."""
        s, decision, at = self.seat, self.decision, len(self.events)
        self.actions.append({"since": at - self._asked_at, "seat": s, "decision": decision, "action": record})
        self._asked_at = at
        # _do's two commonest cases, one call less
        t = act[0]
        if t == PLAY and (decision == "play" or decision == "play_drawn" or decision == "stack"):
            self._play(s, act[1], act[2], uno)  # type: ignore[arg-type]
        elif t == DRAW:  # only a "play" decision lists it
            self._turn_draw(s)  # type: ignore[arg-type]
        else:
            self._do(act, uno)

    def apply_fallback(self) -> dict[str, Any]:
        """Play the fixed fallback policy (the first legal action) for the seat asked now."""
        action = self.legal_actions()[0]
        self.apply(action)
        return action

    def fault(self, kind: str, reason: str, *, strikes: int | None = None, forfeit: str | None = None) -> None:
        """Record a fault of the seat asked now.

        With ``strikes`` (the seat's strike count after this one) the seat draws 2 and
        loses the turn (RULES.md section 9). ``forfeit`` (its reason) records a forfeit;
        without strikes the decision stays open for the fallback policy.
        """
        if self.over:
            raise RuntimeError("the game is over: no seat is asked")
        s, at = self.seat, len(self.events)
        self.actions.append(
            {
                "since": at - self._asked_at,
                "seat": s,
                "decision": self.decision,
                "fault": {"kind": kind, "reason": reason, "strikes": strikes, "forfeit": forfeit},
            }
        )
        self._asked_at = at
        event = {"e": "fault", "seat": s, "kind": kind, "reason": reason}
        if strikes is not None:
            event["strikes"] = strikes
        self.events.append(event)
        if forfeit is not None:
            self.events.append({"e": "forfeit", "seat": s, "reason": forfeit})
        if strikes is not None:
            self._draw(s, STRIKE_DRAW, "strike")  # type: ignore[arg-type]
            self._decline()

    def _decline(self) -> None:
        """Resolve the pending decision as a seat that lost its turn (after a strike)."""
        s, decision = self.seat, self.decision
        if decision in ("play", "play_drawn"):
            self._start_turn((s + self.direction) % self.n)  # type: ignore[operator]
        elif decision == "choose_color":
            self._do((COLOR, 0), False, lose_turn=True)
        elif decision in ("challenge", "stack"):
            self._do((ACCEPT,), False)
        elif decision == "jump_in":
            self._do((PASS,), False)
        elif decision == "swap_target":
            player, k = self._resolving  # type: ignore[misc]
            self._resolving = None
            self._draw_owed_uno()
            self._after_effect(player, k)

    def _draw_owed_uno(self) -> None:
        """After a 7's swap (or none): its player draws a missed UNO's penalty into the hand it holds."""
        s = self._uno_owed
        if s >= 0:
            self._uno_owed = -1
            self._draw(s, self.rules.uno_penalty, "uno")

    def _do(self, act: Act, uno: bool, lose_turn: bool = False) -> None:
        s = self.seat
        decision = self.decision
        t = act[0]
        n = self.n
        if decision == "play" or decision == "play_drawn" or decision == "stack":
            if t == PLAY:
                self._play(s, act[1], act[2], uno)  # type: ignore[arg-type]
            elif t == DRAW:
                self._turn_draw(s)  # type: ignore[arg-type]
            elif t == PASS:
                self.events.append({"e": "pass", "seat": s})
                self._start_turn((s + self.direction) % n)  # type: ignore[operator]
            else:  # ACCEPT a stack
                self._take_penalty(s)  # type: ignore[arg-type]
        elif decision == "challenge":
            p = self._wd4_player
            if t == ACCEPT:
                self._take_penalty(s)  # type: ignore[arg-type]
            else:
                honest = self._wd4_honest
                self.pending = 0
                self.events.append({"e": "challenge", "seat": s, "target": p, "honest": honest})
                if honest:
                    self._draw(s, 6, "challenge")  # type: ignore[arg-type]
                    self.events.append({"e": "skip", "seat": s})
                    self._start_turn((s + self.direction) % n)  # type: ignore[operator]
                else:
                    self._draw(p, 4, "challenge")
                    self._ask(s, "play")  # type: ignore[arg-type]
        elif decision == "jump_in":
            player, k = self._resolving  # type: ignore[misc]
            if t == PLAY:
                self._resolving = None
                self._jump_queue = []
                if self._stacking == "stack" and KIND_RANK[k] == DRAW_TWO:
                    # the Draw Two jumped on counts as a stack would: the jumper's adds to it
                    self.pending += 2
                if self._begin_turn(s):  # type: ignore[arg-type]
                    self._play(s, k, act[2], uno, jump=True)  # type: ignore[arg-type]
            else:
                self.events.append({"e": "pass", "seat": s})
                if self._jump_queue:
                    self._ask(self._jump_queue.pop(0), "jump_in")
                else:
                    self._resolving = None
                    self._advance(player, k)
        elif decision == "swap_target":
            target = act[1]
            hands = self.hands
            hands[s], hands[target] = hands[target], hands[s]  # type: ignore[index]
            codes = self._hand_codes
            codes[s], codes[target] = codes[target], codes[s]  # type: ignore[index]
            self.uno[s] = self.uno[target] = False  # type: ignore[index]
            self.events.append({"e": "swap", "seat": s, "target": target})
            player, k = self._resolving  # type: ignore[misc]
            self._resolving = None
            self._draw_owed_uno()
            self._after_effect(player, k)
        elif decision == "choose_color":
            self.color = act[1]
            self.events.append({"e": "color", "seat": s, "color": COLORS[act[1]]})
            if lose_turn:
                self._start_turn((s + self.direction) % n)  # type: ignore[operator]
            else:
                self._ask(s, "play")  # type: ignore[arg-type]
