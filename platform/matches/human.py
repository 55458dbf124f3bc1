"""A person at the table: a seat that asks a human through Redis instead of a bot in a sandbox.

Building block of "play a bot" (issue 20 point 2). ``HumanSeat`` has the seat interface the
sandbox runner and the referee use (``decide``, ``log``, ``faults``, ``log_marks``, ``stop``), so
a human game is played by the same ``sandbox.runner.play_match`` as any match, with the bots in
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
``max_strikes`` clocks. Django-free: the caller passes the Redis client.
"""

from __future__ import annotations

import json
import time
from typing import Any

from engine.faults import SeatFault
from sandbox.seat import SeatLog

#: seconds the stored question outlives its clock (a page polling just after the deadline)
ASK_MARGIN = 30


class HumanActionError(ValueError):
    """An answer that is not one of the legal actions of the decision asked now."""


def game_prefix(match_id: int) -> str:
    return f"play:{match_id}"


class HumanSeat:
    """The seat of a person: each ``decide`` publishes the question and waits for the answer."""

    last_decision_seconds: float | None = None  # a person's thinking is not a bot's timing

    def __init__(self, client, prefix: str, clock: float, name: str = "human"):
        if not clock or clock <= 0:
            raise ValueError(f"the clock must be a positive number of seconds, got {clock!r}")
        self.client = client
        self.prefix = prefix
        self.clock = float(clock)
        self.name = name
        self.log = SeatLog(1024)
        self.log_marks: list[int] = []
        self.faults: list[str] = []
        self.seq = 0

    def decide(self, observation: dict[str, Any], configuration: dict[str, Any]) -> Any:
        self.seq += 1
        deadline = time.time() + self.clock
        ask = {"seq": self.seq, "seat": observation.get("seat"), "observation": observation, "deadline": deadline}
        answer_key = f"{self.prefix}:answer:{self.seq}"
        self.client.set(f"{self.prefix}:ask", json.dumps(ask), ex=int(self.clock) + ASK_MARGIN)
        popped = self.client.blpop([answer_key], timeout=max(1, round(self.clock)))
        self.client.delete(f"{self.prefix}:ask", answer_key)
        if popped is None:
            reason = f"no answer within the clock of {self.clock:g} s"
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
