"""Live matches (issue 20 point 1): the worker publishes each game's events while it plays them,
the match's page follows them.

Nothing goes through the database. The worker's referee calls ``LivePublisher`` before every
decision (``engine.match.play_match(on_step=...)``); at most every ``LIVE_FLUSH_SECONDS`` (and at
each game's end) it appends the events and decision points played since its last write to the
game's two lists (RPUSH: a write costs what is new, never the whole game again) and sets the
match's small head record (one entry per game: its seats, names and counts) in the live
store (``channel``): Redis (``REDIS_URL``, the broker's server: workers and web processes share
it) or, in the embedded default where the worker runs in the web process, this process's
``matches.human.MemoryChannel``, the same store human games use. Keys carry
the installation (``sandboxing.installation_id``) and the attempt, so installations sharing a
Redis and a requeued attempt never mix.

``live_view`` is what a spectator is sent: the seats' names, each game's head (never its seed)
and the events of one game after a given index, with every hidden card replaced
(``engine.replay.public_event``) unless the user is staff. After the match has ended the replay
is the record and this says only the match's status.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from django.conf import settings
from django.utils import timezone

from engine.replay import public_event

logger = logging.getLogger(__name__)

#: seconds between two writes of a game's events (the live page's delay is about this plus its poll)
LIVE_FLUSH_SECONDS = 0.5
#: seconds a live record outlives its last write (a match longer than this between two writes is
#: not live any more; the page then waits for the result)
LIVE_TTL_SECONDS = 600


_channels: dict[tuple[str, bool], Any] = {}


def channel(*, blocking: bool = False):
    """The store live events and human games go through: Redis when the site has one (workers and
    web processes share it), else one ``matches.human.MemoryChannel`` of this process (the embedded
    default, where the worker runs in the web server's process). ``blocking``: a worker's client
    for a person's seat, whose reads wait as long as the person's clock (no socket timeout)."""
    from .human import MemoryChannel

    url = settings.REDIS_URL
    key = (url, blocking and bool(url))  # one memory channel serves both sides
    if key not in _channels:
        if url:
            import redis

            _channels[key] = redis.Redis.from_url(url, socket_timeout=None if blocking else 2, socket_connect_timeout=2)
        else:
            _channels[key] = MemoryChannel()
    return _channels[key]


def human_prefix(match) -> str:
    """The keys of one attempt of a human game (the installation's, like the live keys)."""
    return f"{_key(match.pk)}:play:{(match.attempt_token or '')[:8]}"


def _key(match_id: int) -> str:
    from .sandboxing import installation_id

    return f"arena:{installation_id()}:live:{match_id}"


class LivePublisher:
    """``on_step`` of a match's referee: publishes the games' events as they are played.

    Never raises into the match: a store that fails is logged once and the match plays on.
    """

    def __init__(self, match, *, store=None, every: float = LIVE_FLUSH_SECONDS, clock=time.monotonic):
        self.key = _key(match.pk)
        self.attempt = match.attempt_token or ""
        self.store = store if store is not None else channel()
        self.every = every
        self.clock = clock
        self.games: list[dict[str, Any]] = []
        #: per game: its decision points so far, and how many events and points were written
        self.points: list[list[int]] = []
        self.written: list[tuple[int, int]] = []
        self.last = float("-inf")
        self.failed = False
        #: a game that has ended is never written again: its lists are kept until the match's
        #: deadline (and LIVE_TTL_SECONDS more), so the spectator can go back to it all match long
        left = (match.deadline - timezone.now()).total_seconds() if match.deadline else settings.MATCH_TIME_LIMIT
        self.ended_ttl = int(max(0.0, left)) + LIVE_TTL_SECONDS

    def __call__(self, game: dict[str, Any], events: list[dict[str, Any]], actions: list[dict[str, Any]]) -> None:
        index = game["index"]
        if index >= len(self.games):
            # the game's head without its seed: a spectator must not be able to compute the deals
            self.games.append({k: game[k] for k in ("index", "deal", "rotation", "seats", "names", "forfeited")})
            self.points.append([])
            self.written.append((0, 0))
        head = self.games[index]
        head["over"] = bool(game.get("over"))
        if not head["over"]:
            # a decision is asked now: the viewer's steps stop here, as at a replay's action records
            self.points[index].append(len(events))
        now = self.clock()
        if head["over"] or now - self.last >= self.every:
            self.last = now
            self._write(index, events)

    def _write(self, index: int, events: list[dict[str, Any]]) -> None:
        if self.failed:
            return
        prefix = _game_key(self.key, self.attempt, index)
        done_events, done_points = self.written[index]
        points = self.points[index]
        ttl = self.ended_ttl if self.games[index]["over"] else LIVE_TTL_SECONDS
        try:
            # One round trip with Redis (a pipeline, no transaction: the head is set last, so a
            # reader never sees counts ahead of the lists), not six: the referee waits for it
            # between two decisions.
            pipeline = getattr(self.store, "pipeline", None)
            store = pipeline(transaction=False) if pipeline is not None else self.store
            if (done_events, done_points) == (0, 0):
                # a game's first write starts its lists afresh: nothing another run left under the key counts
                store.delete(f"{prefix}:events", f"{prefix}:points")
            for key, items in ((f"{prefix}:events", [json.dumps(e, separators=(",", ":")) for e in events[done_events:]]),
                               (f"{prefix}:points", [str(p) for p in points[done_points:]])):
                if items:
                    store.rpush(key, *items)
                store.expire(key, ttl)
            self.games[index]["events"] = len(events)
            store.set(self.key, json.dumps({"attempt": self.attempt, "games": self.games}), ex=LIVE_TTL_SECONDS)
            if store is not self.store:
                store.execute()
            self.written[index] = (len(events), len(points))
        except Exception:
            self.failed = True
            logger.exception("live events of %s could not be published; the match plays on without them", self.key)


def _game_key(key: str, attempt: str, index: int) -> str:
    return f"{key}:{attempt}:{index}"


def live_view(match, *, game: int, after: int, full: bool) -> dict[str, Any]:
    """What the live page of ``match`` is sent: its status, the games played so far (heads: seats,
    names, counts), and game ``game``'s events from index ``after`` with its decision points so far;
    hidden cards only for ``full`` (staff). A poll reads three keys whatever the number of games."""
    view: dict[str, Any] = {"status": match.status, "games": [], "game": game, "after": after, "events": [], "points": []}
    if match.status != match.Status.RUNNING:
        return view
    store = channel()
    key = _key(match.pk)
    try:
        raw = store.get(key)
        record = json.loads(raw) if raw else None
        if record is None or record.get("attempt") != (match.attempt_token or ""):
            return view  # not started yet, or an abandoned attempt's
        heads = record["games"]
        view["games"] = heads
        if 0 <= game < len(heads):
            prefix = _game_key(key, record["attempt"], game)
            # only what was written when the head was read: a write between the two reads is the next poll's
            last = heads[game].get("events", 0) - 1
            raw_events = store.lrange(f"{prefix}:events", max(0, after), last) if after <= last else []
            events = [json.loads(e) for e in raw_events]
            view["events"] = events if full else [public_event(e) for e in events]
            view["points"] = [int(p) for p in store.lrange(f"{prefix}:points", 0, -1)]
    except Exception:
        logger.exception("live events of match %s could not be read", match.pk)
    return view
