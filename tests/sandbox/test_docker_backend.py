"""The Docker backend: container lockdown, cleanup, the reaper, Docker failures."""

from __future__ import annotations

import glob
import io
import json
import os
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

import docker
import pytest
from testsupport import service_missing

from engine.faults import InfrastructureError, SeatFault
from engine.rules import Rules
from sandbox import docker_backend, seccomp
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match
from sandbox.seat import SandboxSeat

BOT = BotPackage.from_bytes("bot.py", b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n")
OBS = {"legal_actions": [{"type": "draw"}]}


@pytest.fixture
def dead_docker():
    """A client for a Docker engine that is not there."""
    client = docker.DockerClient(base_url="unix:///nonexistent/docker.sock", version="1.41", timeout=2)
    yield client
    client.close()


def test_missing_docker_engine_is_an_infrastructure_error_and_leaves_no_files(dead_docker):
    rules = Rules.parse(["players=2", "rounds=1", "hand_size=3"])
    with pytest.raises(InfrastructureError, match="Docker could not start the sandbox of seat"):
        play_sandboxed_match(rules, [BOT, "first"], seed=1, backend="docker", match_id="deaddocker1", docker_client=dead_docker)
    assert glob.glob(os.path.join(tempfile.gettempdir(), "uno-arena-deaddocker1*")) == []


def test_unreachable_engine_from_environment_is_an_infrastructure_error(monkeypatch):
    monkeypatch.setattr(docker_backend, "_client", None)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(InfrastructureError, match="Docker engine not reachable"):
        docker_backend.get_client()



def test_a_seats_folder_too_long_for_the_socket_is_named_with_the_length_allowed(tmp_path):
    assert docker_backend.work_dir_problem("/var/lib/uno-arena/seats") is None
    allowed = docker_backend.SOCKET_PATH_MAX - len("/" + "x" * docker_backend.SEAT_DIR_NAME_MAX + "/chan/referee.sock")
    assert docker_backend.work_dir_problem("/" + "s" * (allowed - 1)) is None
    problem = docker_backend.work_dir_problem("/" + "s" * allowed)
    assert problem is not None and f"({allowed + 1} bytes)" in problem and f"at most {allowed} bytes" in problem
    # the longest seat folder the backend makes really fits under a folder that passes
    longest = os.path.join("/" + "s" * (allowed - 1), "x" * docker_backend.SEAT_DIR_NAME_MAX, "chan", "referee.sock")
    assert len(longest) == docker_backend.SOCKET_PATH_MAX
    assert len(docker_backend.SEAT_DIR_PREFIX + f"{10**18 - 1}-abcdefgh-9-" + "8chars!!") == docker_backend.SEAT_DIR_NAME_MAX


def test_the_system_check_reports_a_seats_folder_too_long(monkeypatch, settings):
    from matches.checks import sandbox_work_dir_check

    settings.SANDBOX_BACKEND = "docker"
    monkeypatch.setattr(docker_backend, "WORK_DIR", "/srv/" + "w" * 80)
    [error] = sandbox_work_dir_check()
    assert error.id == "matches.E001" and "/srv/www" in error.msg and "too long" in error.msg
    settings.SANDBOX_BACKEND = "process"
    assert sandbox_work_dir_check() == []
    settings.SANDBOX_BACKEND = "docker"
    monkeypatch.setattr(docker_backend, "WORK_DIR", "/var/lib/uno-arena/seats")
    assert sandbox_work_dir_check() == []


@pytest.mark.docker
@pytest.mark.services
def test_a_seat_under_a_folder_too_long_is_an_infrastructure_error_naming_it(docker_client, tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 60)
    deep.mkdir()
    monkeypatch.setattr(docker_backend, "WORK_DIR", str(deep))
    with pytest.raises(InfrastructureError, match="too long"):
        docker_backend.start_seat(BOT, Limits(), match_id="longdir1", seat=0)
    assert list(deep.iterdir()) == []

@pytest.mark.docker
@pytest.mark.services
def test_seat_container_is_locked_down(docker_client, monkeypatch):
    monkeypatch.setenv("UNO_ARENA_WORKER_SECRET", "do-not-leak")
    limits = Limits(memory_bytes=128 * 1024 * 1024, processes=32, cpus=0.5)
    handle = docker_backend.start_seat(BOT, limits, match_id="lockdown1", seat=0)
    try:
        handle.container.reload()
        config, host = handle.container.attrs["Config"], handle.container.attrs["HostConfig"]
        assert config["User"] == "10001:10001"
        assert not any("UNO_ARENA_WORKER_SECRET" in e for e in config["Env"])
        assert config["Labels"]["uno-arena.match"] == "lockdown1"
        assert host["NetworkMode"] == "none"
        assert host["ReadonlyRootfs"] is True
        assert host["CapDrop"] == ["ALL"]
        # the project's seccomp profile (sandbox.seccomp), as Docker stored it
        assert host["SecurityOpt"][0] == "no-new-privileges"
        assert [json.loads(o.split("=", 1)[1]) for o in host["SecurityOpt"][1:]] == [seccomp.docker_profile()]
        assert host["Memory"] == host["MemorySwap"] == 128 * 1024 * 1024
        assert host["NanoCpus"] == 500_000_000
        assert host["PidsLimit"] == 32
        assert all(m["RW"] is False for m in handle.container.attrs["Mounts"])
        assert "size=16777216" in host["Tmpfs"]["/tmp"]
    finally:
        handle.stop()
    assert docker_backend.match_containers("lockdown1") == []
    assert not os.path.exists(handle.seat_dir)


def _net_namespace(container) -> tuple[str, list[str]]:
    """The network namespace of a running container's PID 1 and the interfaces in it."""
    container.reload()
    pid = container.attrs["State"]["Pid"]
    lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
    return os.readlink(f"/proc/{pid}/ns/net"), sorted(line.split(":")[0].strip() for line in lines)


@pytest.mark.docker
@pytest.mark.services
def test_each_seat_has_a_network_namespace_of_its_own_with_only_loopback(docker_client):
    # No libnetwork sandbox (network_disabled): runc makes the namespace, brings loopback up,
    # and nothing of another seat or of the host is reachable on it.
    listener = BotPackage.from_bytes("bot.py", (
        b"import socket\n"
        b"server = socket.socket()\n"
        b"server.bind(('127.0.0.1', 47123))\n"
        b"server.listen(1)\n"
        b"def agent(observation, configuration):\n"
        b"    client = socket.create_connection(('127.0.0.1', 47123), timeout=2)\n"
        b"    peer, _ = server.accept()\n"
        b"    client.sendall(b'own')\n"
        b"    return {'type': peer.recv(3).decode()}\n"
    ))
    prober = BotPackage.from_bytes("bot.py", (
        b"import socket\n"
        b"def agent(observation, configuration):\n"
        b"    try:\n"
        b"        socket.create_connection(('127.0.0.1', 47123), timeout=2).close()\n"
        b"        return {'type': 'reached'}\n"
        b"    except OSError as exc:\n"
        b"        return {'type': type(exc).__name__}\n"
    ))
    handles = [docker_backend.start_seat(package, Limits(), match_id="netns1", seat=n)
               for n, package in enumerate((listener, prober))]
    seats = [SandboxSeat(handle, Limits(), f"bot{n}") for n, handle in enumerate(handles)]
    try:
        for seat in seats:
            seat.wait_ready()
        spaces = [_net_namespace(handle.container) for handle in handles]
        assert spaces[0][0] != spaces[1][0]
        assert os.readlink("/proc/self/ns/net") not in (spaces[0][0], spaces[1][0])
        assert spaces[0][1] == spaces[1][1] == ["lo"]
        for handle in handles:
            assert handle.container.attrs["Config"]["NetworkDisabled"] is True
            assert handle.container.attrs["HostConfig"]["NetworkMode"] == "none"
        assert seats[0].decide(OBS, {}) == {"type": "own"}  # loopback works inside a seat
        assert seats[1].decide(OBS, {}) == {"type": "ConnectionRefusedError"}  # not the other seat's
    finally:
        for seat in seats:
            seat.stop()
    assert docker_backend.match_containers("netns1") == []


@pytest.mark.docker
@pytest.mark.services
def test_container_removed_under_a_running_match_is_infrastructure_not_the_bots_fault(docker_client):
    handle = docker_backend.start_seat(BOT, Limits(), match_id="vanish1", seat=0)
    seat = SandboxSeat(handle, Limits(), "bot")
    try:
        seat.wait_ready()
        assert seat.decide(OBS, {}) == {"type": "draw"}
        docker_client.containers.get(handle.container.id).remove(force=True)
        with pytest.raises(InfrastructureError, match="removed from outside"):
            seat.decide(OBS, {})
    finally:
        seat.stop()
    assert docker_backend.match_containers("vanish1") == []


@pytest.mark.docker
@pytest.mark.services
def test_reaper_removes_old_sandbox_containers_of_its_installation_only(docker_client):
    now = int(time.time())
    mine = {docker_backend.LABEL_MATCH: "reaptest", docker_backend.LABEL_INSTALLATION: docker_backend.installation(),
            docker_backend.LABEL_HOST: docker_backend.host_name(), docker_backend.LABEL_OWNER: docker_backend.owner_token()}
    foreign = mine | {docker_backend.LABEL_INSTALLATION: "someone-else", docker_backend.LABEL_OWNER: "1.0"}

    def create(labels, started):
        return docker_client.containers.create(
            docker_backend.IMAGE, ["true"], labels=labels | {docker_backend.LABEL_STARTED: str(started)}
        )

    old = create(mine, now - 7200)
    young = create(mine, now)
    warm = create(mine | {docker_backend.LABEL_WARM: "1"}, now - 3600 - 60)  # warm ones may wait idle
    dead_owner = create(mine | {docker_backend.LABEL_OWNER: "1.0"}, now)  # pid 1 started at 0: gone
    foreign_old = create(foreign, now - 7200)  # another installation's, on the same engine
    unlabelled_old = create({docker_backend.LABEL_MATCH: "reaptest"}, now - 7200)
    try:
        assert docker_backend.reap(max_age_seconds=3600) == 2
        remaining = {c.id for c in docker_backend.match_containers("reaptest")}
        assert old.id not in remaining and dead_owner.id not in remaining
        assert {young.id, warm.id, foreign_old.id, unlabelled_old.id} <= remaining
    finally:
        for container in (old, young, warm, dead_owner, foreign_old, unlabelled_old):
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass


@pytest.mark.docker
@pytest.mark.services
def test_container_that_cannot_start_is_removed_and_reported_as_infrastructure(docker_client):
    # An image without python3: create succeeds, start fails.
    empty = io.BytesIO()
    tarfile.open(fileobj=empty, mode="w").close()
    docker_client.api.import_image_from_data(empty.getvalue(), repository="uno-arena-test-empty", tag="latest")
    try:
        with pytest.raises(InfrastructureError, match="Docker could not start the sandbox of seat 0"):
            docker_backend.start_seat(BOT, Limits(), match_id="nostart1", seat=0, image="uno-arena-test-empty:latest")
        assert docker_backend.match_containers("nostart1") == []
        assert glob.glob(os.path.join(tempfile.gettempdir(), "uno-arena-nostart1*")) == []
    finally:
        docker_client.images.remove("uno-arena-test-empty:latest", force=True)


@pytest.mark.docker
@pytest.mark.services
def test_a_removal_the_engine_fails_once_is_tried_again(docker_client, monkeypatch, caplog):
    monkeypatch.setattr(docker_backend, "REMOVE_RETRY_PAUSES", (0.01, 0.01))
    label = f"removeretry-{uuid.uuid4().hex[:12]}"  # this run's own: an engine may hold others' containers
    container = docker_client.containers.run(
        docker_backend.IMAGE, ["python3", "-c", "import time; time.sleep(60)"], detach=True,
        labels={docker_backend.LABEL_MATCH: label},
    )
    real_remove = container.remove
    failures = []

    def remove_failing_first(**kwargs):
        # what Docker 20.10 answered when the container was exiting at that moment
        if not failures:
            failures.append(kwargs)
            raise docker.errors.APIError("500 Server Error: Could not kill running container, is not running")
        return real_remove(**kwargs)

    try:
        container.remove = remove_failing_first
        docker_backend._remove(container)
        assert failures == [{"force": True}]
        assert docker_backend.match_containers(label) == []
        assert "trying again" in caplog.text
        # an engine that keeps failing is an infrastructure error, after every pause
        container.remove = lambda **kwargs: (_ for _ in ()).throw(docker.errors.APIError("engine broken"))
        with pytest.raises(InfrastructureError, match="failed to remove container .*engine broken"):
            docker_backend._remove(container)
        assert caplog.text.count("trying again") == 1 + 2
    finally:
        for leftover in docker_backend.match_containers(label):
            leftover.remove(force=True)


@pytest.mark.docker
@pytest.mark.services
def test_finished_match_keeps_its_result_when_docker_fails_at_teardown(docker_client, monkeypatch, caplog):
    def docker_gone(container):
        raise InfrastructureError("Docker engine failed to remove container (simulated)")

    monkeypatch.setattr(docker_backend, "_remove", docker_gone)
    rules = Rules.parse(["players=2", "rounds=1", "hand_size=3"])
    try:
        outcome = play_sandboxed_match(rules, [BOT, "first"], seed=1, backend="docker", match_id="teardownfail1")
        assert outcome.result.players[0].forfeit is None
        assert "the reaper removes what is left" in caplog.text
    finally:
        monkeypatch.undo()
        for container in docker_backend.match_containers("teardownfail1"):
            container.remove(force=True)


@pytest.mark.docker
@pytest.mark.services
def test_host_that_cannot_run_in_the_image_is_infrastructure(docker_client, monkeypatch):
    # A broken bot host (say, an image whose Python is too old) exits before it
    # connects, and so before any bot code ran.
    broken = Path(tempfile.mkdtemp()) / "host.py"
    broken.write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(docker_backend, "HOST_PROGRAM", broken)
    try:
        with pytest.raises(InfrastructureError, match=r"never connected \(status 'exited', exit code 3;"):
            docker_backend.start_seat(BOT, Limits(), match_id="brokenhost1", seat=0)
        assert docker_backend.match_containers("brokenhost1") == []
    finally:
        broken.unlink()
        broken.parent.rmdir()


@pytest.mark.docker
@pytest.mark.services
def test_cpu_time_limit_applies_in_docker_with_a_readable_reason(docker_client):
    spinner = BotPackage.from_bytes("spin.py", b"def agent(observation, configuration):\n    while True:\n        pass\n")
    limits = Limits(cpu_seconds=1, time_per_decision=5.0, time_bank=1.0)
    seat = SandboxSeat(docker_backend.start_seat(spinner, limits, match_id="cpulimit1", seat=0), limits, "spin")
    seat.wait_ready()
    try:
        with pytest.raises(SeatFault) as caught:
            seat.decide(OBS, {})
    finally:
        seat.stop()
    assert (caught.value.kind, caught.value.reason) == ("crash", "killed: CPU time limit exceeded (1 s)")


def test_a_seats_cpu_share_is_its_limit_capped_at_the_machines_cores():
    assert docker_backend.seat_cpus(Limits(), cores=8) == 1.0
    assert docker_backend.seat_cpus(Limits(cpus=0.5), cores=8) == 0.5
    assert docker_backend.seat_cpus(Limits(cpus=4.0), cores=2) == 2.0


# Tries to kill the bot host (PID 1 of its container) with SIGKILL, then plays on.
SELF_KILLER = BotPackage.from_bytes("killer.py", b"""import os, time


def agent(observation, configuration):
    try:
        os.kill(1, 9)
        outcome = "sent"
    except OSError as exc:
        outcome = f"refused: {exc}"
    time.sleep(0.3)
    print("kill", outcome, "pid", os.getpid(), flush=True)
    return observation["legal_actions"][0]
""")


@pytest.mark.docker
@pytest.mark.services
def test_a_bot_cannot_sigkill_the_host_that_is_pid_1_of_its_container(docker_client):
    # The claim death_fault relies on: a SIGKILL without OOMKilled came from outside.
    seat = SandboxSeat(docker_backend.start_seat(SELF_KILLER, Limits(), match_id="selfkill1", seat=0), Limits(), "killer")
    try:
        seat.wait_ready()
        assert seat.decide(OBS, {}) == {"type": "draw"}
        assert seat.decide(OBS, {}) == {"type": "draw"}
        seat.handle.container.reload()
        assert seat.handle.container.status == "running"
    finally:
        seat.stop()
    assert seat.faults == []
    assert seat.log.text().count("kill sent") == 2  # the signal was sent, and dropped by the kernel


#: leaves a process behind that ignores SIGTERM, double-forked away from the game's process
LINGERER = BotPackage.from_bytes("linger.py", b"""
import os, signal, time
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(0.05)
    os._exit(0)
def agent(observation, configuration):
    return observation["legal_actions"][0]
""")


@pytest.mark.docker
@pytest.mark.services
def test_at_stop_the_host_exits_at_once_and_every_process_of_its_container_with_it(docker_client):
    # The host is PID 1: its exit ends the container's PID namespace, leftovers included.
    handle = docker_backend.start_seat(LINGERER, Limits(), match_id="stopexit1", seat=0)
    seat = SandboxSeat(handle, Limits(), "lingerer")
    try:
        seat.wait_ready()
        assert seat.decide(OBS, {}) == {"type": "draw"}
        assert len(handle.container.top()["Processes"]) >= 3  # host, zygote, game process, the lingerer
        handle.channel.send({"op": "stop", "id": 9})
        assert handle.channel.recv(time.monotonic() + 5.0) == {"op": "stopped", "id": 9}
        state = handle.container.wait(timeout=5)  # not removed yet: it exits by itself
        assert state["StatusCode"] == 0
    finally:
        seat.stop()
    assert seat.faults == []
    assert docker_backend.match_containers("stopexit1") == []


@pytest.mark.docker
@pytest.mark.services
def test_a_container_killed_from_outside_is_infrastructure_not_the_bots_fault(docker_client):
    seat = SandboxSeat(docker_backend.start_seat(BOT, Limits(), match_id="killedout1", seat=0), Limits(), "bot")
    try:
        seat.wait_ready()
        assert seat.decide(OBS, {}) == {"type": "draw"}
        [container] = docker_client.containers.list(all=True, filters={"label": "uno-arena.match=killedout1"})
        container.kill()  # SIGKILL, as docker kill, docker stop's second step or the host's OOM killer
        container.wait(timeout=30)
        with pytest.raises(InfrastructureError, match="killed from outside"):
            seat.decide(OBS, {})
    finally:
        seat.stop()
    assert seat.faults == []
    assert docker_backend.match_containers("killedout1") == []


@pytest.mark.docker
@pytest.mark.services
def test_a_memory_bomb_is_still_the_bots_own_memory_fault(docker_client):
    bomb = BotPackage.from_bytes("bomb.py", b"def agent(observation, configuration):\n    x = bytearray(400 * 1024 * 1024)\n    return x\n")
    limits = Limits(memory_bytes=64 * 1024 * 1024)
    seat = SandboxSeat(docker_backend.start_seat(bomb, limits, match_id="oomself1", seat=0), limits, "bomb")
    try:
        seat.wait_ready()
        with pytest.raises(SeatFault) as caught:
            seat.decide(OBS, {})
    finally:
        seat.stop()
    assert caught.value.kind == "memory"


@pytest.mark.docker
@pytest.mark.services
def test_a_missing_sandbox_image_is_infrastructure_naming_the_image(docker_client):
    with pytest.raises(InfrastructureError, match="image uno-arena-no-such-image:latest is not on this Docker engine"):
        docker_backend.start_seat(BOT, Limits(), match_id="noimage1", seat=0, image="uno-arena-no-such-image:latest")
    assert docker_backend.match_containers("noimage1") == []
    assert glob.glob(os.path.join(tempfile.gettempdir(), "uno-arena-noimage1*")) == []


@pytest.fixture
def full_seats_folder(tmp_path, monkeypatch):
    """SANDBOX_WORK_DIR on a 256 KiB tmpfs filled to the last byte (the test's own mount)."""
    import subprocess

    folder = tmp_path / "seats"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0755", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        service_missing(f"a tmpfs mount (root): {mounted.stderr.decode(errors='replace').strip()}")
    try:
        with open(folder / "filler", "wb", buffering=0) as filler:
            try:
                while True:
                    filler.write(b"x" * 4096)
            except OSError:
                pass
        monkeypatch.setattr(docker_backend, "WORK_DIR", str(folder))
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.docker
@pytest.mark.services
def test_a_full_seats_folder_is_infrastructure_not_the_bots_fault(docker_client, full_seats_folder):
    with pytest.raises(InfrastructureError, match=r"the seats' folder is full \(No space left on device\)"):
        play_sandboxed_match(Rules.parse(["players=2", "rounds=1"]), [BOT, "first"], seed=1, backend="docker", match_id="fullseats1")
    assert docker_backend.match_containers("fullseats1") == []
    assert [p.name for p in full_seats_folder.iterdir()] == ["filler"]
