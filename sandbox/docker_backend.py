"""Docker backend: one container per seat per match. The only module that talks to Docker.

Each container: no network, read-only root, small size-limited /tmp, non-root
user, no capabilities, no-new-privileges, memory without swap, CPU and PID
limits, no environment from the worker; the bot's code and the bot host are
bind-mounted read-only. The referee listens on a Unix socket in the per-seat
directory, bind-mounted read-only at /sandbox (chan/referee.sock beside bot/
and host.py); the host connects to it.
Containers carry ``uno-arena.match`` / ``uno-arena.started`` labels so that
``reap`` can remove any a crashed worker left behind. A Docker engine that is
missing or fails raises ``InfrastructureError``, never a ``SeatFault``.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import time
from pathlib import Path

from engine.faults import InfrastructureError, SeatFault
from sandbox.limits import DEFAULT_LIMITS, Limits, describe_bytes
from sandbox.package import BotPackage
from sandbox.seat import Channel, make_seat_dir, reap_seat_dirs

log = logging.getLogger(__name__)

IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")
LABEL_MATCH = "uno-arena.match"
LABEL_SEAT = "uno-arena.seat"
LABEL_STARTED = "uno-arena.started"
BOT_USER = "10001:10001"
HOST_PROGRAM = Path(__file__).resolve().parent / "host.py"
#: where per-seat directories are made; must be a path the Docker engine sees too
WORK_DIR = os.environ.get("SANDBOX_WORK_DIR") or None

_client = None
_client_lock = threading.Lock()


def get_client(client=None):
    """The shared Docker client (created once); InfrastructureError when the engine is unreachable."""
    global _client
    if client is not None:
        return client
    with _client_lock:
        if _client is None:
            import docker
            from docker.errors import DockerException

            try:
                candidate = docker.from_env(timeout=30)
                candidate.ping()
            except DockerException as exc:
                raise InfrastructureError(f"Docker engine not reachable: {exc}") from exc
            _client = candidate
        return _client


def _docker_errors():
    from docker.errors import DockerException
    from requests.exceptions import RequestException

    return (DockerException, RequestException, ConnectionError)


class DockerSeatHandle:
    """One container running the bot host, its channel and its seat directory."""

    def __init__(self, client, container, channel: Channel, seat_dir: str, limits: Limits):
        self.client = client
        self.container = container
        self.channel = channel
        self.seat_dir = seat_dir
        self.limits = limits
        self.stopped = False

    def death_fault(self) -> SeatFault:
        """Why the container's host went away; asks Docker, so may raise InfrastructureError."""
        state = {}
        deadline = time.monotonic() + 2.0
        try:
            while time.monotonic() < deadline:
                self.container.reload()
                state = self.container.attrs.get("State", {})
                if not state.get("Running"):
                    break
                time.sleep(0.02)
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker engine failed while checking container {self.container.short_id}: {exc}") from exc
        if state.get("OOMKilled"):
            return SeatFault("memory", f"memory limit exceeded ({describe_bytes(self.limits.memory_bytes)}): killed by the OOM killer")
        if state.get("Running"):
            return SeatFault("crash", "bot host closed its channel but kept running")
        code = state.get("ExitCode")
        if code == 137:
            return SeatFault("crash", "killed by signal SIGKILL")
        if isinstance(code, int) and code > 128:
            return SeatFault("crash", f"killed by signal {code - 128}")
        return SeatFault("crash", f"bot host exited with code {code}")

    def stop(self) -> None:
        """Remove the container (SIGKILL first) and the seat directory; idempotent."""
        if self.stopped:
            return
        self.stopped = True
        self.channel.close()
        try:
            _remove(self.container)
        finally:
            shutil.rmtree(self.seat_dir, ignore_errors=True)


def _remove(container) -> None:
    from docker.errors import NotFound

    try:
        container.remove(force=True)
    except NotFound:
        pass
    except _docker_errors() as exc:
        raise InfrastructureError(f"Docker engine failed to remove container {container.short_id}: {exc}") from exc


def container_options(client, limits: Limits, match_id: str, seat: int, seat_dir: str) -> dict:
    """The ``create_container`` arguments of a seat's container (every lockdown option in one place)."""
    from docker.types import LogConfig, Mount, Ulimit

    host_config = client.api.create_host_config(
        network_mode="none",
        ipc_mode="none",
        read_only=True,
        tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_bytes},mode=1777"},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,  # equal: no swap
        nano_cpus=int(limits.cpus * 1e9),
        pids_limit=limits.processes,
        ulimits=[Ulimit(name="nofile", soft=256, hard=256), Ulimit(name="core", soft=0, hard=0)],
        # The host sends prints over the channel, so Docker keeps no log: no
        # disk to fill, and measurably faster container start (~0.1 s here).
        log_config=LogConfig(type="none"),
        # One read-only mount (bot/, host.py, chan/): each mount costs start time.
        mounts=[Mount("/sandbox", seat_dir, type="bind", read_only=True)],
    )
    return {
        "command": [
            "python3", "-I", "-S", "/sandbox/host.py",
            "--bot", "/sandbox/bot", "--connect", "/sandbox/chan/referee.sock",
            "--frame-bytes", str(limits.frame_bytes), "--log-bytes", str(limits.log_bytes),
            "--label", f"{match_id}-{seat}",
        ],
        "user": BOT_USER,
        "working_dir": "/sandbox/bot",
        "environment": {},  # nothing from the worker; the image's PATH/LANG only
        "labels": {LABEL_MATCH: str(match_id), LABEL_SEAT: str(seat), LABEL_STARTED: str(int(time.time()))},
        "stdin_open": False,
        "tty": False,
        "host_config": host_config,
    }


def start_seat(package: BotPackage, limits: Limits, *, match_id: str, seat: int, client=None, image: str | None = None) -> DockerSeatHandle:
    """Start the container of one seat and accept its host's connection."""
    client = get_client(client)
    seat_dir = make_seat_dir(f"{match_id}-{seat}", WORK_DIR)
    listener = container = None
    try:
        package.write_to(Path(seat_dir) / "bot")
        shutil.copyfile(HOST_PROGRAM, os.path.join(seat_dir, "host.py"))
        chan = os.path.join(seat_dir, "chan")
        os.mkdir(chan)
        os.chmod(seat_dir, 0o755)
        os.chmod(chan, 0o755)
        os.chmod(os.path.join(seat_dir, "host.py"), 0o644)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock_path = os.path.join(chan, "referee.sock")
        listener.bind(sock_path)
        os.chmod(sock_path, 0o777)  # the bot user (uid 10001) must be able to connect
        listener.listen(1)
        # Low-level calls: create then start, no extra inspect on the hot path,
        # and a container whose start fails is still known (and removed).
        try:
            created = client.api.create_container(image or IMAGE, **container_options(client, limits, match_id, seat, seat_dir))
            container = client.containers.prepare_model({"Id": created["Id"]})
            client.api.start(container.id)
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker could not start the sandbox of seat {seat} (image {image or IMAGE}): {exc}") from exc
        conn = _accept(listener, container, limits.start_seconds)
        if conn is None:
            # The host connects before it imports the bot: failing to get this
            # far is the image's or the engine's doing, never the bot's.
            state = container.attrs.get("State", {})
            raise InfrastructureError(
                f"the bot host in container {container.short_id} never connected (status "
                f"{state.get('Status')!r}, exit code {state.get('ExitCode')!r}; waited up to {limits.start_seconds:g} s)"
            )
        handle = DockerSeatHandle(client, container, Channel(conn, limits.frame_bytes), seat_dir, limits)
        return handle
    except BaseException:
        if container is not None:
            try:
                _remove(container)
            except InfrastructureError:
                log.exception("could not remove container of seat %s", seat)
        shutil.rmtree(seat_dir, ignore_errors=True)
        raise
    finally:
        if listener is not None:
            listener.close()


def _accept(listener: socket.socket, container, timeout: float) -> socket.socket | None:
    """The host's connection, or None once the container has exited or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    # Ask Docker about the container rarely: a healthy host connects within a
    # fraction of a second, and status calls slow the engine for everyone.
    listener.settimeout(0.5)
    while time.monotonic() < deadline:
        try:
            conn, _ = listener.accept()
            return conn
        except TimeoutError:
            pass
        try:
            container.reload()
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker engine failed while starting container {container.short_id}: {exc}") from exc
        if container.status not in ("created", "running"):
            return None
    return None


def reap(max_age_seconds: float | None = None, client=None) -> int:
    """Remove labelled sandbox containers older than ``max_age_seconds`` (default: the longest match).

    Also deletes seat directories that old. Scheduled periodically by the
    platform; returns how many containers were removed.
    """
    client = get_client(client)
    if max_age_seconds is None:
        max_age_seconds = DEFAULT_LIMITS.max_match_seconds
    cutoff = time.time() - max_age_seconds
    try:
        containers = client.containers.list(all=True, filters={"label": LABEL_MATCH})
    except _docker_errors() as exc:
        raise InfrastructureError(f"Docker engine failed to list sandbox containers: {exc}") from exc
    removed = 0
    for container in containers:
        try:
            started = float(container.labels.get(LABEL_STARTED, "0"))
        except ValueError:
            started = 0.0  # a mangled label: treat as ancient
        if started <= cutoff:
            _remove(container)
            removed += 1
    reap_seat_dirs(max_age_seconds, [WORK_DIR])
    return removed


def available(image: str | None = None, client=None) -> bool:
    """True when the Docker engine answers and holds ``image`` (default: the sandbox image)."""
    try:
        client = get_client(client)
        client.images.get(image or IMAGE)
    except InfrastructureError:
        return False
    except _docker_errors():
        return False
    return True


def match_containers(match_id: str, client=None) -> list:
    """Containers (running or not) still carrying ``match_id``'s label."""
    client = get_client(client)
    try:
        return client.containers.list(all=True, filters={"label": f"{LABEL_MATCH}={match_id}"})
    except _docker_errors() as exc:
        raise InfrastructureError(f"Docker engine failed to list containers of match {match_id}: {exc}") from exc
