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

import atexit
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path

from engine.faults import InfrastructureError, SeatFault
from sandbox.limits import DEFAULT_LIMITS, Limits, describe_bytes
from sandbox.package import BotPackage
from sandbox.seat import SEAT_DIR_PREFIX, Channel, ChannelClosed, make_seat_dir, reap_seat_dirs

log = logging.getLogger(__name__)

IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")
LABEL_MATCH = "uno-arena.match"
LABEL_SEAT = "uno-arena.seat"
LABEL_STARTED = "uno-arena.started"
BOT_USER = "10001:10001"
HOST_PROGRAM = Path(__file__).resolve().parent / "host.py"
#: where per-seat directories are made; must be a path the Docker engine sees too
WORK_DIR = os.environ.get("SANDBOX_WORK_DIR") or None
#: the referee's socket, inside a seat directory
CHANNEL_SOCKET = os.path.join("chan", "referee.sock")
#: the longest path of a Unix socket (Linux: sockaddr_un's 108 bytes, less the final NUL)
SOCKET_PATH_MAX = 107
#: the longest seat directory name: the prefix, "<match id (18 digits)>-<token (8)>-<seat>-", mkdtemp's 8
SEAT_DIR_NAME_MAX = len(SEAT_DIR_PREFIX) + 18 + 1 + 8 + 1 + 1 + 1 + 8


def work_dir_problem(work_dir: str | None = None) -> str | None:
    """Why seats' sockets cannot be made under ``work_dir`` (default: ``WORK_DIR``, else the
    temporary folder), or None."""
    root = os.path.abspath(work_dir or WORK_DIR or tempfile.gettempdir())
    allowed = SOCKET_PATH_MAX - len(os.path.join("", "x" * SEAT_DIR_NAME_MAX, CHANNEL_SOCKET)) - 1
    if len(root.encode()) <= allowed:
        return None
    return (
        f"the seats' folder {root!r} (SANDBOX_WORK_DIR, else the temporary folder) is too long "
        f"({len(root.encode())} bytes): a seat's socket "
        f"path under it would not fit a Unix socket ({SOCKET_PATH_MAX} bytes); "
        f"use a folder of at most {allowed} bytes"
    )

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
        if code == 128 + signal.SIGXCPU:
            return SeatFault("crash", f"killed: CPU time limit exceeded ({self.limits.cpu_seconds} s)")
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


#: pauses before the next try to remove a container the engine failed to remove
REMOVE_RETRY_PAUSES = (0.1, 0.3, 1.0)


def _remove(container) -> None:
    """Kill and remove ``container``; retried, since the engine may fail to remove a container
    exiting at that moment ("Could not kill running container ..., is not running") and leave
    it "Removal In Progress" until asked again."""
    from docker.errors import NotFound

    for pause in (*REMOVE_RETRY_PAUSES, None):
        try:
            container.remove(force=True)
            return
        except NotFound:
            return
        except _docker_errors() as exc:
            if pause is None:
                raise InfrastructureError(
                    f"Docker engine failed to remove container {container.short_id}: {exc}"
                ) from exc
            log.warning("removing container %s failed, trying again: %s", container.short_id, exc)
            time.sleep(pause)


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
        ulimits=[
            Ulimit(name="nofile", soft=256, hard=256),
            Ulimit(name="core", soft=0, hard=0),
            # The same CPU-seconds cap as the process backend (SIGXCPU, then SIGKILL).
            Ulimit(name="cpu", soft=int(limits.cpu_seconds), hard=int(limits.cpu_seconds) + 1),
        ],
        # The host sends prints over the channel, so Docker keeps no log: no
        # disk to fill, and measurably faster container start (~0.1 s here).
        log_config=LogConfig(type="none"),
        # One read-only mount (bot/, host.py, chan/): each mount costs start time.
        mounts=[Mount("/sandbox", seat_dir, type="bind", read_only=True)],
    )
    return {
        "command": [
            "python3", "-I", "-S", "/sandbox/host.py",
            "--bot", "/sandbox/bot", "--connect", f"/sandbox/{CHANNEL_SOCKET}",
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
    """Start the container of one seat (or take a warm one) and accept its host's connection."""
    shared = client is None
    client = get_client(client)
    image = image or IMAGE
    pool = warm_pool() if shared else None
    if pool is not None:
        handle = pool.take(client, image, limits, package)
        if handle is not None:
            return handle
    seat_dir = make_seat_dir(f"{match_id}-{seat}", WORK_DIR)
    try:
        package.write_to(Path(seat_dir) / "bot")
        container, conn = _launch(client, image, limits, match_id, seat, seat_dir, wait_load=False)
    except BaseException:
        shutil.rmtree(seat_dir, ignore_errors=True)
        raise
    return DockerSeatHandle(client, container, Channel(conn, limits.frame_bytes), seat_dir, limits)


def _launch(client, image: str, limits: Limits, match_id: str, seat, seat_dir: str, *, wait_load: bool):
    """Start a container on ``seat_dir`` and return it with the host's connection.

    On any failure the container is removed and the error raised (the caller
    owns ``seat_dir``).
    """
    listener = container = None
    try:
        shutil.copyfile(HOST_PROGRAM, os.path.join(seat_dir, "host.py"))
        chan = os.path.join(seat_dir, "chan")
        os.mkdir(chan)
        os.makedirs(os.path.join(seat_dir, "bot"), exist_ok=True)
        for path in (seat_dir, chan, os.path.join(seat_dir, "bot")):
            os.chmod(path, 0o755)
        os.chmod(os.path.join(seat_dir, "host.py"), 0o644)
        sock_path = os.path.join(seat_dir, CHANNEL_SOCKET)
        if len(sock_path.encode()) > SOCKET_PATH_MAX:
            raise InfrastructureError(work_dir_problem(os.path.dirname(seat_dir)) or f"socket path too long: {sock_path}")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(sock_path)
        os.chmod(sock_path, 0o777)  # the bot user (uid 10001) must be able to connect
        listener.listen(1)
        options = container_options(client, limits, match_id, seat, seat_dir)
        if wait_load:
            options["command"].append("--wait-load")
        # Low-level calls: create then start, no extra inspect on the hot path,
        # and a container whose start fails is still known (and removed).
        try:
            created = client.api.create_container(image, **options)
            container = client.containers.prepare_model({"Id": created["Id"]})
            client.api.start(container.id)
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker could not start the sandbox of seat {seat} (image {image}): {exc}") from exc
        conn = _accept(listener, container, limits.start_seconds)
        if conn is None:
            # The host connects before it imports the bot: failing to get this
            # far is the image's or the engine's doing, never the bot's.
            state = container.attrs.get("State", {})
            raise InfrastructureError(
                f"the bot host in container {container.short_id} never connected (status "
                f"{state.get('Status')!r}, exit code {state.get('ExitCode')!r}; waited up to {limits.start_seconds:g} s)"
            )
        return container, conn
    except BaseException:
        if container is not None:
            try:
                _remove(container)
            except InfrastructureError:
                log.exception("could not remove container of seat %s", seat)
        raise
    finally:
        if listener is not None:
            listener.close()


class _WarmSeat:
    """A started container whose host waits for a bot (``--wait-load``)."""

    def __init__(self, client, container, conn: socket.socket, seat_dir: str):
        self.client = client
        self.container = container
        self.conn = conn
        self.seat_dir = seat_dir
        self.born = time.monotonic()

    def activate(self, package: BotPackage, limits: Limits) -> DockerSeatHandle | None:
        """Hand it the bot: write the files, send ``load``; None if it died while waiting."""
        handle = DockerSeatHandle(self.client, self.container, Channel(self.conn, limits.frame_bytes), self.seat_dir, limits)
        try:
            package.write_to(Path(self.seat_dir) / "bot")
            handle.channel.send({"op": "load"}, timeout=1.0)
        except (ChannelClosed, OSError):
            self.discard(handle)
            return None
        return handle

    def discard(self, handle: DockerSeatHandle | None = None) -> None:
        try:
            (handle or DockerSeatHandle(self.client, self.container, Channel(self.conn, 1), self.seat_dir, DEFAULT_LIMITS)).stop()
        except InfrastructureError:
            log.warning("could not remove warm sandbox container %s (the reaper will)", self.container.short_id)


class WarmPool:
    """A few pre-started seat containers per worker process, so a seat starts without Docker's start.

    Each is locked down exactly like a cold one; its bot directory is empty
    until ``take`` writes a bot into it. Kept at most ``max_age`` seconds idle.
    """

    def __init__(self, size: int, max_age: float = 60.0):
        self.size = size
        self.max_age = max_age
        self.lock = threading.Lock()
        self.idle: dict[tuple, list[_WarmSeat]] = {}
        self.filling: set[tuple] = set()
        self.closed = False
        self.count = 0
        self.fillers: list[threading.Thread] = []
        self.pid = os.getpid()

    @staticmethod
    def key(image: str, limits: Limits) -> tuple:
        """Containers are interchangeable only with the same image and container limits."""
        return (image, limits.memory_bytes, limits.cpus, limits.cpu_seconds, limits.processes,
                limits.tmp_bytes, limits.frame_bytes, limits.log_bytes, limits.start_seconds)

    def take(self, client, image: str, limits: Limits, package: BotPackage) -> DockerSeatHandle | None:
        """A warm seat running ``package``, or None (the caller starts one cold); refills behind."""
        key = self.key(image, limits)
        handle = None
        while handle is None:
            with self.lock:
                seats = self.idle.get(key, [])
                warm = seats.pop(0) if seats else None
            if warm is None:
                break
            if time.monotonic() - warm.born > self.max_age:
                warm.discard()
                continue
            handle = warm.activate(package, limits)
        self.refill(client, image, limits)
        return handle

    def refill(self, client, image: str, limits: Limits) -> None:
        """Start containers in the background until ``size`` wait for this key."""
        key = self.key(image, limits)
        with self.lock:
            if self.closed or key in self.filling:
                return
            self.filling.add(key)
        filler = threading.Thread(target=self._fill, args=(client, image, limits, key), name="warm-seats", daemon=True)
        with self.lock:
            self.fillers = [t for t in self.fillers if t.is_alive()] + [filler]
        filler.start()

    def _fill(self, client, image: str, limits: Limits, key: tuple) -> None:
        try:
            while True:
                with self.lock:
                    if self.closed or len(self.idle.get(key, [])) >= self.size:
                        return
                    self.count += 1
                    number = self.count
                seat_dir = make_seat_dir(f"warm-{os.getpid()}-{number}", WORK_DIR)
                try:
                    container, conn = _launch(client, image, limits, "warm", f"{os.getpid()}-{number}", seat_dir, wait_load=True)
                except Exception:  # noqa: BLE001 - a failed refill only costs speed; cold starts still work
                    shutil.rmtree(seat_dir, ignore_errors=True)
                    log.warning("could not pre-start a sandbox container", exc_info=True)
                    return
                warm = _WarmSeat(client, container, conn, seat_dir)
                with self.lock:
                    if not self.closed:
                        self.idle.setdefault(key, []).append(warm)
                        continue
                warm.discard()
                return
        finally:
            with self.lock:
                self.filling.discard(key)

    def ready(self, image: str, limits: Limits) -> int:
        """How many warm seats wait for this image and these limits."""
        with self.lock:
            return len(self.idle.get(self.key(image, limits), []))

    def close(self, timeout: float = 30.0) -> None:
        """Remove every idle warm container (at exit, or when reconfigured).

        Waits for containers still starting: they see ``closed`` and remove
        themselves, so none is left behind by an exiting worker.
        """
        if os.getpid() != self.pid:
            return  # a forked child exiting: these containers are its parent's
        with self.lock:
            self.closed = True
            seats = [warm for group in self.idle.values() for warm in group]
            self.idle.clear()
            fillers, self.fillers = self.fillers, []
        for warm in seats:
            warm.discard()
        deadline = time.monotonic() + timeout
        for filler in fillers:
            filler.join(max(0.0, deadline - time.monotonic()))


#: warm seats per worker process (image + limits); 0: no pool; None: SANDBOX_DOCKER_WARM decides
WARM_SEATS: int | None = None
_pool: WarmPool | None = None
_pool_pid = 0


def warm_seats() -> int:
    """How many warm seats this process keeps (SANDBOX_DOCKER_WARM unless configured)."""
    global WARM_SEATS
    if WARM_SEATS is None:
        raw = os.environ.get("SANDBOX_DOCKER_WARM", "").strip() or "0"
        if not raw.isdigit():
            raise ValueError(f"SANDBOX_DOCKER_WARM must be an int >= 0, got {raw!r}")
        WARM_SEATS = int(raw)
    return WARM_SEATS


def warm_pool() -> WarmPool | None:
    """This process's pool of warm seats, created on first use (None when there are 0)."""
    global _pool, _pool_pid
    size = warm_seats()
    with _client_lock:
        if _pool_pid != os.getpid():
            # A forked worker must not share its parent's containers or sockets.
            _pool, _pool_pid = None, os.getpid()
        if _pool is None and size > 0:
            _pool = WarmPool(size)
            atexit.register(_pool.close)
        return _pool


def configure_warm_pool(size: int) -> WarmPool | None:
    """Set how many warm seats this process keeps (0: none); closes the previous pool."""
    global WARM_SEATS, _pool
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"warm seats must be an int >= 0, got {size!r}")
    with _client_lock:
        old, _pool, WARM_SEATS = _pool, None, size
    if old is not None:
        old.close()
    return warm_pool()


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
