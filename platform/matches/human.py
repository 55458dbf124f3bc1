"""A person at the table: a seat that asks a human through Redis instead of a bot in a sandbox.

Building block of "play a bot" (issue 20 point 2). ``HumanSeat`` has the seat interface the
sandbox runner and the referee use (``decide``, ``log``, ``faults``, ``log_marks``, ``stop``), so
a human game is played by the same ``sandbox.runner.play_sandboxed_match`` as any match, with the bots in
their real sandboxes. Protocol, one Redis key prefix per game (``<prefix>``):

- ``<prefix>:ask`` — the decision asked now, JSON ``{"seq", "seat", "observation", "deadline"}``
  (the observation includes ``legal_actions`` and only that seat's own hand); deleted when the
  person answered. Kept for the whole clock plus a margin, so a page opened again resumes.
- ``<prefix>:answer:<seq>`` — a list the page's action is pushed onto; the seat waits on it with
  BLPOP for at most the clock. The sequence number means a late answer to an earlier decision
  can never be taken for the next one.

The clock: a decision not answered in time is the contract's ``timeout`` (a strike: the seat
draws and loses the turn; ``max_strikes`` of them forfeit the seat and the fallback policy plays
the rest of the game at once), exactly as for a bot. So an abandoned game ends after at most
``max_strikes`` clocks. A person also has ``THINKING_SECONDS`` of thinking for the whole game
(the bots' ``time_per_match``): used up, the seat forfeits with ``match_time`` and the game is
played out at once, so a human game's length is bounded like any match's. Django-free: the
caller passes the Redis client (or ``MemoryChannel`` where web and worker share one process).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from engine.faults import InfrastructureError, SeatFault
from sandbox.seat import SeatLog

#: seconds the stored question outlives its clock (a page polling just after the deadline)
ASK_MARGIN = 30
#: a person's clock per decision, in seconds: the default, and the range one may choose
CLOCK_DEFAULT = 60
CLOCK_MIN = 10
CLOCK_MAX = 300
#: a person's thinking time for a whole game (seconds), as a bot's time_per_match
THINKING_SECONDS = 1800
#: seconds of one wait for the answer: between two, the seat looks at STOPPING
WAIT_SLICE = 2
#: set when this process's worker is stopping: a seat waiting for its person then raises
#: InfrastructureError (the worker's doing, not the person's), so the game goes back to the queue
STOPPING = threading.Event()


class HumanActionError(ValueError):
    """An answer that is not one of the legal actions of the decision asked now."""


def game_prefix(match_id: int) -> str:
    return f"play:{match_id}"


class HumanSeat:
    """The seat of a person: each ``decide`` publishes the question and waits for the answer."""

    last_decision_seconds: float | None = None  # a person's thinking is not a bot's timing

    def __init__(self, client, prefix: str, clock: float, name: str = "human",
                 thinking: float = THINKING_SECONDS, clock_fn=time.monotonic):
        if not clock or clock <= 0:
            raise ValueError(f"the clock must be a positive number of seconds, got {clock!r}")
        self.client = client
        self.prefix = prefix
        self.clock = float(clock)
        self.thinking_left = float(thinking)
        self._now = clock_fn
        self.name = name
        self.log = SeatLog(1024)
        self.log_marks: list[int] = []
        self.faults: list[str] = []
        self.seq = 0

    def decide(self, observation: dict[str, Any], configuration: dict[str, Any]) -> Any:
        if self.thinking_left < 1:
            reason = f"out of match time: {THINKING_SECONDS} s of thinking for the game used up"
            self.faults.append(f"match_time: {reason}")
            raise SeatFault("match_time", reason)
        self.seq += 1
        clock = min(self.clock, self.thinking_left)
        deadline = time.time() + clock
        ask = {"seq": self.seq, "seat": observation.get("seat"), "observation": observation, "deadline": deadline,
               "clock": clock}
        answer_key = f"{self.prefix}:answer:{self.seq}"
        self.client.set(f"{self.prefix}:ask", json.dumps(ask), ex=int(clock) + ASK_MARGIN)
        asked = self._now()
        give_up = time.monotonic() + max(1, round(clock))
        popped = None
        while popped is None and time.monotonic() < give_up:
            if STOPPING.is_set():
                self.client.delete(f"{self.prefix}:ask")
                raise InfrastructureError("the worker is stopping while a person decides: the game goes back to the queue")
            wait = max(1, min(WAIT_SLICE, round(give_up - time.monotonic())))
            popped = self.client.blpop([answer_key], timeout=wait)
        self.thinking_left -= self._now() - asked
        self.client.delete(f"{self.prefix}:ask", answer_key)
        if popped is None:
            reason = f"no answer within the clock of {clock:g} s"
            self.faults.append(f"timeout: {reason}")
            raise SeatFault("timeout", reason)
        return json.loads(popped[1])

    def stop(self) -> None:
        self.client.delete(f"{self.prefix}:ask")


def current_question(client, prefix: str) -> dict | None:
    """The decision asked now (``seq``, ``seat``, ``observation``, ``deadline``), or None."""
    raw = client.get(f"{prefix}:ask")
    return json.loads(raw) if raw else None


def submit_answer(client, prefix: str, seq: Any, action: Any) -> dict:
    """Hand the person's ``action`` for decision ``seq`` to the waiting seat, checked against the
    legal actions asked (the action must equal one of them); raises HumanActionError."""
    question = current_question(client, prefix)
    if question is None:
        raise HumanActionError("no decision is waiting for you now (the game moved on or ended)")
    if isinstance(seq, bool) or not isinstance(seq, int) or seq != question["seq"]:
        raise HumanActionError(f"that answer is for decision {seq!r}; the decision asked now is {question['seq']}")
    legal = question["observation"].get("legal_actions", [])
    if not isinstance(action, dict) or action not in legal:
        raise HumanActionError(f"{json.dumps(action)[:200]} is not one of the legal actions: {json.dumps(legal)}")
    answer_key = f"{prefix}:answer:{seq}"
    client.rpush(answer_key, json.dumps(action))
    client.expire(answer_key, ASK_MARGIN)
    return action


class MemoryChannel:
    """The part of a Redis client human games and live matches use (``set``, ``get``, ``delete``,
    ``rpush``, ``lrange``, ``expire``, ``ttl``, ``blpop``), in this process's memory: for the embedded default, where the worker
    thread and the web server share one process and there is no Redis."""

    def __init__(self) -> None:
        self._values: dict[str, tuple[float, Any]] = {}
        self._changed = threading.Condition()

    def _live(self, key: str) -> Any:
        item = self._values.get(key)
        if item is None:
            return None
        if item[0] < time.monotonic():
            del self._values[key]
            return None
        return item[1]

    def set(self, key: str, value: str, ex: int | None = None) -> None:
        with self._changed:
            now = time.monotonic()
            # what expired goes at each write (nothing else reads keys of an ended game again)
            for old in [k for k, (until, _) in self._values.items() if until < now]:
                del self._values[old]
            self._values[key] = (now + (ex if ex else 1e9), value.encode())
            self._changed.notify_all()

    def get(self, key: str) -> bytes | None:
        with self._changed:
            value = self._live(key)
        return value if isinstance(value, bytes) else None

    def delete(self, *keys: str) -> None:
        with self._changed:
            for key in keys:
                self._values.pop(key, None)

    def rpush(self, key: str, *values: str) -> None:
        with self._changed:
            items = self._live(key)
            items = items if isinstance(items, list) else []
            items.extend(value.encode() for value in values)
            self._values[key] = (self._values.get(key, (time.monotonic() + 1e9, None))[0], items)
            self._changed.notify_all()

    def lrange(self, key: str, start: int, end: int) -> list[bytes]:
        """Redis's LRANGE for what this channel uses: ``start`` >= 0, ``end`` inclusive or -1 (the last)."""
        with self._changed:
            items = self._live(key)
        return list(items[start:None if end == -1 else end + 1]) if isinstance(items, list) else []

    def expire(self, key: str, seconds: int) -> None:
        with self._changed:
            if key in self._values:
                self._values[key] = (time.monotonic() + seconds, self._values[key][1])

    def ttl(self, key: str) -> int:
        """Redis's TTL: seconds left, -1 with no expiry, -2 for no such key."""
        with self._changed:
            item = self._values.get(key) if self._live(key) is not None else None
        if item is None:
            return -2
        left = item[0] - time.monotonic()
        return -1 if left > 1e8 else int(left)

    def blpop(self, keys: list[str], timeout: float) -> tuple[bytes, bytes] | None:
        give_up = time.monotonic() + timeout
        with self._changed:
            while True:
                for key in keys:
                    items = self._live(key)
                    if isinstance(items, list) and items:
                        value = items.pop(0)
                        return key.encode(), value
                left = give_up - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(left)
