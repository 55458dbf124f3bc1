"""Warm seats: pre-started Docker containers that receive their bot after start."""

from __future__ import annotations

import time

import docker
import pytest

from engine.rules import Rules
from sandbox import docker_backend
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match
from sandbox.seat import SandboxSeat

pytestmark = [pytest.mark.docker, pytest.mark.services]

LIMITS = Limits()
OBS = {"legal_actions": [{"type": "draw"}, {"type": "pass"}]}


def bot_returning(index: int, marker: str = "") -> BotPackage:
    source = f"# {marker}\ndef agent(observation, configuration):\n    return observation['legal_actions'][{index}]\n"
    return BotPackage.from_bytes(f"bot{index}.py", source.encode())


@pytest.fixture
def pool(docker_client):
    pool = docker_backend.configure_warm_pool(2)
    yield pool
    docker_backend.configure_warm_pool(0)


def fill(pool, count: int = 2, timeout: float = 30.0) -> set[str]:
    """Refill and wait until ``count`` warm seats wait; their container ids."""
    client = docker_backend.get_client()
    pool.refill(client, docker_backend.IMAGE, LIMITS)
    deadline = time.monotonic() + timeout
    while pool.ready(docker_backend.IMAGE, LIMITS) < count:
        assert time.monotonic() < deadline, "warm seats did not come up"
        time.sleep(0.05)
    key = pool.key(docker_backend.IMAGE, LIMITS)
    with pool.lock:
        return {warm.container.id for warm in pool.idle[key]}


def exists(client, container_id: str) -> bool:
    try:
        client.containers.get(container_id)
        return True
    except docker.errors.NotFound:
        return False


def test_seat_is_served_by_a_warm_container_locked_down_like_a_cold_one(pool, docker_client):
    warm_ids = fill(pool)
    handle = docker_backend.start_seat(bot_returning(1), LIMITS, match_id="warm1", seat=0)
    seat = SandboxSeat(handle, LIMITS, "bot1")
    try:
        assert handle.container.id in warm_ids
        seat.wait_ready()
        assert seat.decide(OBS, {}) == {"type": "pass"}
        handle.container.reload()
        host = handle.container.attrs["HostConfig"]
        assert (host["NetworkMode"], host["ReadonlyRootfs"], host["CapDrop"]) == ("none", True, ["ALL"])
        assert host["Memory"] == host["MemorySwap"] == LIMITS.memory_bytes
        assert handle.container.attrs["Config"]["User"] == "10001:10001"
    finally:
        seat.stop()
    assert not exists(docker_client, handle.container.id)


def test_each_warm_seat_gets_only_its_own_bot(pool):
    fill(pool)
    snoop = BotPackage.from_bytes(
        "snoop.py",
        b"import glob\n"
        b"def agent(observation, configuration):\n"
        b"    found = [open(p).read() for p in glob.glob('/sandbox/bot/*.py') + glob.glob('/tmp/**/*.py', recursive=True)]\n"
        b"    return {'seen': found}\n",
    )
    other = docker_backend.start_seat(bot_returning(0, "other-seat-secret-77"), LIMITS, match_id="warm2", seat=0)
    mine = docker_backend.start_seat(snoop, LIMITS, match_id="warm2", seat=1)
    seats = [SandboxSeat(other, LIMITS, "other"), SandboxSeat(mine, LIMITS, "snoop")]
    try:
        for seat in seats:
            seat.wait_ready()
        assert seats[0].decide(OBS, {}) == {"type": "draw"}
        seen = seats[1].decide(OBS, {})["seen"]
        assert len(seen) == 1 and "snoop" not in seen[0] and "glob" in seen[0]  # its own main.py only
        assert not any("other-seat-secret-77" in text for text in seen)
    finally:
        for seat in seats:
            seat.stop()


def test_stale_warm_seat_is_removed_and_the_seat_starts_cold(pool, docker_client):
    warm_ids = fill(pool)
    pool.max_age = 0.0
    handle = docker_backend.start_seat(bot_returning(0), LIMITS, match_id="warm3", seat=0)
    try:
        assert handle.container.id not in warm_ids
        assert not any(exists(docker_client, cid) for cid in warm_ids)
    finally:
        handle.stop()


def test_closing_the_pool_removes_its_idle_containers(pool, docker_client):
    warm_ids = fill(pool)
    pool.close()
    assert not any(exists(docker_client, cid) for cid in warm_ids)
    assert pool.ready(docker_backend.IMAGE, LIMITS) == 0


def test_match_with_warm_seats_completes_and_leaves_only_fresh_warm_seats(pool, docker_client):
    used = fill(pool)
    rules = Rules.parse(["players=2", "rounds=1", "hand_size=3"])
    outcome = play_sandboxed_match(rules, [bot_returning(0), bot_returning(0)], seed=5, backend="docker", match_id="warm4")
    assert all(player.forfeit is None for player in outcome.result.players)
    assert not any(exists(docker_client, cid) for cid in used)  # both were taken and removed
    assert fill(pool).isdisjoint(used)  # the pool refilled with new containers


def test_closing_while_containers_start_leaves_none_behind(pool, docker_client):
    pool.refill(docker_backend.get_client(), docker_backend.IMAGE, LIMITS)
    time.sleep(0.05)  # the first container is being started now
    pool.close()
    mine = [f"{docker_backend.LABEL_MATCH}=warm", f"{docker_backend.LABEL_OWNER}={docker_backend.owner_token()}"]
    assert docker_client.api.containers(all=True, filters={"label": mine}) == []  # (other processes' pools aside)


def test_a_bad_warm_setting_is_refused_with_its_value(monkeypatch):
    monkeypatch.setattr(docker_backend, "WARM_SEATS", None)
    monkeypatch.setenv("SANDBOX_DOCKER_WARM", "lots")
    with pytest.raises(ValueError, match="SANDBOX_DOCKER_WARM must be an int >= 0, got 'lots'"):
        docker_backend.warm_seats()


def test_a_warm_seat_starts_faster_than_a_cold_one(docker_client):
    from sandbox import warm_bench

    figures = warm_bench.run(starts=2)  # interleaved: cold, warm, cold, ...
    assert figures["warm"]["start_wall_p50_ms"] < figures["cold"]["start_wall_p50_ms"] / 2, figures
    assert docker_backend.warm_seats() == 0  # the bench put the pool away


def test_deferred_stops_remove_a_match_s_seats_in_the_background_and_the_pool_refills_in_parallel(docker_client):
    pool = docker_backend.configure_warm_pool(4, defer_stops=True)
    try:
        used = fill(pool, 4)
        rules = Rules.parse(["players=4", "rounds=1", "hand_size=3"])
        outcome = play_sandboxed_match(rules, [bot_returning(0)] * 4, seed=5, backend="docker", match_id="warm5")
        assert all(player.forfeit is None for player in outcome.result.players)
        assert docker_backend.removals().settle(30)
        assert not any(exists(docker_client, cid) for cid in used)  # all four taken, then removed
        assert pool.fillers and fill(pool, 4).isdisjoint(used)
    finally:
        docker_backend.configure_warm_pool(0)
    assert docker_backend.DEFER_STOPS is False


def test_a_deferred_refill_starts_no_replacement_until_the_match_s_bots_imported(pool):
    fill(pool)
    handle = docker_backend.start_seat(bot_returning(0), LIMITS, match_id="defer1", seat=0, defer_refill=True)
    seat = SandboxSeat(handle, LIMITS, "bot0")
    try:
        key = pool.key(docker_backend.IMAGE, LIMITS)
        with pool.lock:
            assert (len(pool.idle[key]), pool.starting.get(key, 0)) == (1, 0)  # nothing started behind it
        seat.wait_ready()
        docker_backend.refill_warm_pool()  # what the runner does once every seat said hello
        with pool.lock:
            assert len(pool.idle[key]) + pool.starting.get(key, 0) == 2
            assert pool.deferred == {}
        assert seat.decide(OBS, {}) == {"type": "draw"}
    finally:
        seat.stop()
    fill(pool)


CODE_PROBE = BotPackage.from_bytes(
    "probe.py",
    b"import errno, os\n"
    b"def agent(observation, configuration):\n"
    b"    try:\n"
    b"        with open('/sandbox/code.bin', 'ab') as handle:\n"
    b"            handle.write(b'x')\n"
    b"        wrote = 'wrote it'\n"
    b"    except OSError as exc:\n"
    b"        wrote = errno.errorcode.get(exc.errno, str(exc))\n"
    b"    return {'type': 'draw', 'wrote': wrote, 'file': agent.__code__.co_filename,\n"
    b"            'code': os.stat('/sandbox/code.bin').st_size > 0}\n",
)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_bot_gets_the_workers_compilation_and_cannot_write_it(pool, warm):
    if warm:
        fill(pool)
    else:
        pool.close()
    handle = docker_backend.start_seat(CODE_PROBE, LIMITS, match_id="code1", seat=0)
    seat = SandboxSeat(handle, LIMITS, "probe")
    try:
        seat.wait_ready()
        assert seat.fault is None, seat.faults
        answer = seat.decide(OBS, {})
        # not the bot user's (EACCES), on a read-only mount (EROFS, once the bot could chmod it)
        assert answer == {"type": "draw", "wrote": "EACCES", "file": "/sandbox/bot/main.py", "code": True}
    finally:
        seat.stop()
    assert docker_backend.bot_code(CODE_PROBE) is docker_backend.bot_code(CODE_PROBE)  # compiled once a process


def test_a_bot_may_have_a_module_named_like_the_host(pool):
    # The host runs imported under its own name (for its bytecode), never as `host`.
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("main.py", "import host\ndef agent(observation, configuration):\n    return host.ACTION\n")
        archive.writestr("host.py", "ACTION = {'type': 'draw', 'from': 'the bot'}\n")
    bot = BotPackage.from_bytes("hosted.zip", buffer.getvalue())
    fill(pool)
    handle = docker_backend.start_seat(bot, LIMITS, match_id="code2", seat=0)
    seat = SandboxSeat(handle, LIMITS, "hosted")
    try:
        seat.wait_ready()
        assert seat.fault is None, seat.faults
        assert seat.decide(OBS, {}) == {"type": "draw", "from": "the bot"}
    finally:
        seat.stop()
