"""matches.human: a person's seat over real Redis, played by the real runner against a reference bot."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from engine.rules import Rules
from matches import human
from sandbox import runner


@pytest.fixture
def client(redis_url):
    import redis

    return redis.Redis.from_url(redis_url)


@pytest.fixture
def prefix(client):
    name = f"test-play:{uuid.uuid4().hex[:10]}"
    yield name
    for key in client.scan_iter(f"{name}:*"):
        client.delete(key)


def _person(client, prefix, stop, errors, *, first_bad=True):
    """Answers every question with its first legal action; the first answer is wrong on purpose."""
    answered = 0
    while not stop.is_set():
        question = human.current_question(client, prefix)
        if question is None:
            time.sleep(0.005)
            continue
        legal = question["observation"]["legal_actions"]
        assert question["observation"]["hand"] is not None and "hands" not in question["observation"]
        if first_bad and answered == 0:
            try:
                human.submit_answer(client, prefix, question["seq"], {"type": "play", "card": "nope"})
            except human.HumanActionError as exc:
                errors.append(str(exc))
            try:
                human.submit_answer(client, prefix, question["seq"] + 7, legal[0])
            except human.HumanActionError as exc:
                errors.append(str(exc))
        human.submit_answer(client, prefix, question["seq"], legal[0])
        answered += 1
        while (q := human.current_question(client, prefix)) is not None and q["seq"] == question["seq"]:
            time.sleep(0.002)


def test_a_person_plays_a_whole_game_against_random(client, prefix):
    seat = human.HumanSeat(client, prefix, clock=30, name="alice")
    stop, errors = threading.Event(), []
    person = threading.Thread(target=_person, args=(client, prefix, stop, errors), daemon=True)
    person.start()
    try:
        outcome = runner.play_sandboxed_match(Rules(players=2), [seat, "random"], seed=11, backend="inprocess")
    finally:
        stop.set()
        person.join(5)
    assert outcome.result.replay["names"] == ["alice", "random"]
    assert outcome.result.players[0].forfeit is None and outcome.result.players[0].strikes == 0
    assert seat.seq > 3  # the person was asked every decision of the seat
    assert "is not one of the legal actions" in errors[0] and "the decision asked now is" in errors[1]
    assert human.current_question(client, prefix) is None  # nothing left waiting


@pytest.mark.slow
def test_an_abandoned_seat_times_out_to_a_forfeit_and_the_game_ends(client, prefix):
    seat = human.HumanSeat(client, prefix, clock=1, name="gone")
    started = time.monotonic()
    outcome = runner.play_sandboxed_match(Rules(players=2, max_strikes=2), [seat, "random"], seed=3, backend="inprocess")
    took = time.monotonic() - started
    assert outcome.result.players[0].forfeit and "timeout" in str(outcome.result.players[0].forfeit)
    assert [f.kind for f in outcome.result.players[0].faults] == ["timeout", "timeout"]
    assert took < 10  # two clocks, then the fallback policy plays on at once


def test_no_question_no_answer(client, prefix):
    with pytest.raises(human.HumanActionError, match="no decision is waiting"):
        human.submit_answer(client, prefix, 1, {"type": "draw"})
    with pytest.raises(ValueError):
        human.HumanSeat(client, prefix, clock=0)


def test_a_person_plays_a_bot_in_the_docker_sandbox(client, prefix, docker_client):
    from sandbox.package import BotPackage

    bot = BotPackage.from_bytes(
        "bot.py", b"def agent(observation, configuration):\n    return observation['legal_actions'][-1]\n"
    )
    seat = human.HumanSeat(client, prefix, clock=30, name="alice")
    stop, errors = threading.Event(), []
    person = threading.Thread(target=_person, args=(client, prefix, stop, errors), kwargs={"first_bad": False}, daemon=True)
    person.start()
    try:
        outcome = runner.play_sandboxed_match(
            Rules(players=3), [seat, bot, "random"], seed=5, backend="docker",
            match_id=f"human-{uuid.uuid4().hex[:8]}", docker_client=docker_client,
        )
    finally:
        stop.set()
        person.join(5)
    assert outcome.backend == "docker"
    assert [p.forfeit for p in outcome.result.players] == [None, None, None]
    assert outcome.result.timings[1]["decisions"] > 0  # the sandboxed bot decided, timed by its sandbox
