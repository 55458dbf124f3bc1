"""Golden corpus: 216 matches replay, observe and rank exactly as recorded.

Guards the engine's speed work: a change meant to be faster must not change
one replay byte, one observation or one result. Each entry is a rule set
(random house-rule sets drawn from ``uno_scenarios.rule_sets``, 2-10 seats,
and the bench's official rules), seats (every reference bot, a faulty bot that
also mutates what it is shown, the bench's play-first random player), a seed
and a game count; it stores sha256 of the replay JSON, of the MatchResult
players and of every observation handed out.

A change that *means* to change behaviour (a rule fix, a bot change) rewrites
the hashes, keeping the entries:

    .venv/bin/python tests/engine/test_regression_corpus.py --write
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

from engine.bots import REFERENCE_BOTS
from engine.faults import SeatFault
from engine.match import AgentSeat, play_match
from engine.replay import verify
from engine.rules import Rules

CORPUS = Path(__file__).with_name("regression_corpus.json")


class Recording:
    """A reference bot that hashes every observation it is shown.

    ``faulty=k``: every k-th decision is a fault (unknown card, timeout, extra
    key, in turn); now and then it mutates the observation and the action it
    was given before replying with a copy.
    """

    def __init__(self, name: str, digest, faulty: int = 0):
        self.agent = REFERENCE_BOTS[name]
        self.digest = digest
        self.faulty = faulty
        self.count = 0

    def __call__(self, observation: dict, configuration: dict) -> dict:
        self.count += 1
        self.digest.update(json.dumps(observation, sort_keys=True).encode())
        k = self.faulty
        if k and self.count % k == 0:
            kind = self.count // k % 3
            if kind == 0:
                return {"type": "play", "card": "XX"}
            if kind == 1:
                raise SeatFault("timeout", "too slow")
            return {**observation["legal_actions"][0], "extra": 1}
        if k and self.count % (k * 7 + 3) == 0:
            reply = dict(observation["legal_actions"][-1])
            observation["legal_actions"][-1]["type"] = "bogus"
            observation["hand"].append("R1")
            observation["discard"].clear()
            return reply
        return self.agent(observation, configuration)


class PlayFirst:
    """arena_cli.bench.RandomPlayer: the ``random`` bot choosing among plays when there are any."""

    def __init__(self, digest):
        self.digest = digest
        self.choose = REFERENCE_BOTS["random"]

    def __call__(self, observation: dict, configuration: dict) -> dict:
        self.digest.update(json.dumps(observation, sort_keys=True).encode())
        legal = observation["legal_actions"]
        plays = [a for a in legal if a["type"] == "play"]
        if plays and len(plays) < len(legal):
            observation = {**observation, "legal_actions": plays}
        return self.choose(observation, configuration)


def _seat(bot: str, digest) -> AgentSeat:
    if bot == "bench":
        return AgentSeat(PlayFirst(digest), bot)
    if bot.startswith("faulty"):
        return AgentSeat(Recording("first", digest, int(bot[len("faulty"):])), bot)
    return AgentSeat(Recording(bot, digest), bot)


def fingerprint(entry: dict) -> dict:
    """Play one corpus entry; the hashes of what it produced."""
    observations = hashlib.sha256()
    seats = [_seat(bot, observations) for bot in entry["bots"]]
    result = play_match(
        Rules.from_dict(entry["rules"]), seats, seed=entry["seed"], deals=entry["games"], duplicate=entry["duplicate"]
    )
    replay_json = json.dumps(result.replay, sort_keys=True)
    verify(json.loads(replay_json))
    # a forfeit is hashed as its text, the form the corpus recorded before faults were typed
    # (engine.faults.Fault; its fields are the keys the faults' dicts had): the hashes stay
    players = json.dumps(
        [{**dataclasses.asdict(p), "forfeit": None if p.forfeit is None else str(p.forfeit)} for p in result.players],
        sort_keys=True,
    )
    return {
        "replay": hashlib.sha256(replay_json.encode()).hexdigest(),
        "players": hashlib.sha256(players.encode()).hexdigest(),
        "observations": observations.hexdigest(),
        "games": result.games,
        "rounds": result.rounds,
    }


def test_every_corpus_match_replays_observes_and_ranks_exactly_as_recorded():
    entries = json.loads(CORPUS.read_text())
    assert len(entries) == 216
    differ = []
    for i, entry in enumerate(entries):
        got = fingerprint(entry)
        if got != entry["expect"]:
            changed = sorted(k for k in got if got[k] != entry["expect"][k])
            differ.append(f"entry {i} (bots {entry['bots']}, seed {entry['seed']}): {', '.join(changed)} changed")
    assert not differ, f"{len(differ)} of {len(entries)} corpus matches changed:\n" + "\n".join(differ[:20])


def _write() -> None:
    entries = json.loads(CORPUS.read_text())
    for entry in entries:
        entry["expect"] = fingerprint(entry)
    CORPUS.write_text(json.dumps(entries, indent=0, sort_keys=True) + "\n")
    print(f"{CORPUS}: {len(entries)} entries rewritten")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: test_regression_corpus.py --write  (recomputes the stored hashes)")
    _write()
