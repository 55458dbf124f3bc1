"""Docker backend: one container per seat per match. The only module that talks to Docker.

Each container: no network (a network namespace of its own with only loopback), read-only
root, small size-limited /tmp, non-root user, no capabilities, no-new-privileges, memory without swap, CPU and PID
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
import functools
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine.faults import InfrastructureError, SeatFault
from sandbox import seccomp
from sandbox.host import compile_bot_apart, host_bytecode, interpreter_options
from sandbox.limits import DEFAULT_LIMITS, Limits, describe_bytes
from sandbox.package import BotPackage
from sandbox.seat import (
    SEAT_DIR_PREFIX,
    Channel,
    ChannelClosed,
    make_seat_dir,
    reap_seat_dirs,
    seat_folder_error,
)

log = logging.getLogger(__name__)

IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")
LABEL_MATCH = "uno-arena.match"
LABEL_SEAT = "uno-arena.seat"
LABEL_STARTED = "uno-arena.started"
#: which installation (one database of the platform) started the container; nothing touches another's
LABEL_INSTALLATION = "uno-arena.installation"
#: the host name and the process (``<pid>.<start time>``) that started it: its leftovers are known dead
LABEL_HOST = "uno-arena.host"
LABEL_OWNER = "uno-arena.owner"
#: "1" on a warm pool's containers (they may wait up to ``WARM_MAX_AGE`` before a match takes one)
LABEL_WARM = "uno-arena.warm"
BOT_USER = "10001:10001"
HOST_PROGRAM = Path(__file__).resolve().parent / "host.py"
#: where per-seat directories are made; must be a path the Docker engine sees too
WORK_DIR = os.environ.get("SANDBOX_WORK_DIR") or None
#: the referee's socket, inside a seat directory
CHANNEL_SOCKET = os.path.join("chan", "referee.sock")
#: the bot's code file (``host.compile_bot``), inside a seat directory: beside ``bot/``, not in it
CODE_FILE = "code.bin"
#: packages' code files kept by this process (by sha256): a bot is compiled once, not at every game
CODE_CACHE_SIZE = 64
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

#: the installation this process works for (``configure_installation``; the platform derives it
#: from its database), else SANDBOX_INSTALLATION, else "default"
_installation: str | None = None


def installation() -> str:
    """The installation label of the containers this process starts."""
    return _installation or os.environ.get("SANDBOX_INSTALLATION", "").strip() or "default"


def configure_installation(name: str) -> None:
    """Set the installation label (letters, digits, ``.-_``, at most 63): the reaper and the
    leftover removal touch only containers carrying it."""
    global _installation
    if not name or len(name) > 63 or not all(c.isalnum() or c in ".-_" for c in name):
        raise ValueError(f"an installation label is 1-63 letters, digits, '.', '-' or '_', got {name!r}")
    _installation = name


def host_name() -> str:
    """This machine's name as the containers' ``uno-arena.host`` label."""
    return socket.gethostname()


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (clock ticks since boot, /proc/<pid>/stat), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return None


_owner: tuple[int, str] = (0, "")


def owner_token(pid: int | None = None) -> str:
    """``<pid>.<start time>`` of a process (default: this one): unique on this host even after
    the pid is reused."""
    global _owner
    if pid is None:
        if _owner[0] != os.getpid():
            _owner = (os.getpid(), owner_token(os.getpid()))
        return _owner[1]
    return f"{pid}.{_process_start(pid) or 0}"


def owner_alive(token: str) -> bool:
    """Is the process named by ``owner_token`` still running on this host?"""
    pid, _, start = token.partition(".")
    if not pid.isdigit():
        return False
    return _process_start(int(pid)) == start


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
        """Why the container's host went away: the bot's fault, or ``InfrastructureError``.

        Only what the bot did is its fault: its memory limit (OOMKilled), its CPU
        seconds (SIGXCPU), its own exit or a crash it caused. The bot host is PID 1
        of the container, which nothing inside its own PID namespace can SIGKILL
        (the kernel drops it; a test checks ``os.kill(1, 9)`` from a bot). A
        container killed through Docker (``docker kill``/``stop``/``rm -f`` by
        someone else: Docker records a ``kill`` event) or removed from under the
        match is infrastructure: the match is tried again, nobody is blamed.
        """
        from docker.errors import NotFound

        state = {}
        deadline = time.monotonic() + 2.0
        try:
            while time.monotonic() < deadline:
                self.container.reload()
                state = self.container.attrs.get("State", {})
                if not state.get("Running"):
                    break
                time.sleep(0.02)
        except NotFound as exc:
            raise InfrastructureError(
                f"the sandbox container {self.container.short_id} was removed from outside while its bot played"
            ) from exc
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker engine failed while checking container {self.container.short_id}: {exc}") from exc
        if state.get("OOMKilled"):
            return SeatFault("memory", f"memory limit exceeded ({describe_bytes(self.limits.memory_bytes)}): killed by the OOM killer")
        if state.get("Running"):
            return SeatFault("crash", "bot host closed its channel but kept running")
        if state.get("Status") in ("removing", "dead"):
            raise InfrastructureError(
                f"the sandbox container {self.container.short_id} was removed from outside while its bot played"
            )
        code = state.get("ExitCode")
        if code == 128 + signal.SIGXCPU:
            return SeatFault("crash", f"killed: CPU time limit exceeded ({self.limits.cpu_seconds} s)")
        if code == 128 + signal.SIGKILL:
            sent = self._docker_kills()
            if sent:
                raise InfrastructureError(
                    f"the sandbox container {self.container.short_id} was killed from outside (Docker sent it "
                    f"signal {', '.join(sent)}: docker kill, stop or rm -f by someone else, or the engine), "
                    "not by its bot"
                )
            # Nothing inside can SIGKILL PID 1, but a bot host that runs the bot in a child
            # process ends with the child's status (128 + 9 when the bot killed itself).
            return SeatFault("crash", "killed by signal SIGKILL")
        if isinstance(code, int) and code > 128:
            return SeatFault("crash", f"killed by signal {code - 128}")
        return SeatFault("crash", f"bot host exited with code {code}")

    def _docker_kills(self) -> list[str]:
        """The signals Docker was asked to send this container since it started (``kill`` events:
        docker kill, stop, rm -f); the referee sends none before it stops the seat itself."""
        try:
            started = float(self.container.labels.get(LABEL_STARTED, "0")) - 1.0
        except (ValueError, KeyError, TypeError, *_docker_errors()):
            started = time.time() - DEFAULT_LIMITS.max_match_seconds
        try:
            events = self.client.events(
                since=int(started), until=time.time(), decode=True,
                filters={"container": self.container.id, "event": "kill"},
            )
            return [str(e.get("Actor", {}).get("Attributes", {}).get("signal", "?")) for e in events]
        except _docker_errors() as exc:
            raise InfrastructureError(f"Docker engine failed while checking container {self.container.short_id}: {exc}") from exc

    def stop(self) -> None:
        """Remove the container (SIGKILL first) and the seat directory; idempotent.

        With deferred stops on (``configure_warm_pool(..., defer_stops=True)``, what a worker
        does) the channel is closed now and the removal is left to this process's remover
        thread (``removals``), off the match's critical path."""
        if self.stopped:
            return
        self.stopped = True
        self.channel.close()
        if DEFER_STOPS:
            removals().put(self.container, self.seat_dir)
            return
        try:
            _remove(self.container)
        finally:
            shutil.rmtree(self.seat_dir, ignore_errors=True)


#: stop seats in the background (``Removals``) instead of in the caller; set by configure_warm_pool
DEFER_STOPS = False
#: a held removal waits at most this long (a hold never released must not keep containers)
HOLD_MAX_SECONDS = 30.0


class Removals:
    """This process's background removal of stopped seats' containers and folders.

    ``hold()``/``release()`` (nested) keep queued removals waiting, e.g. until a match's result
    is recorded; ``settle()`` waits until none is left; ``drain()`` removes them all now (exit).
    """

    def __init__(self):
        self.cond = threading.Condition()
        self.queue: list[tuple] = []
        self.busy = 0
        self.holds = 0
        self.thread: threading.Thread | None = None
        self.pid = os.getpid()

    def put(self, container, seat_dir: str) -> None:
        with self.cond:
            self.queue.append((container, seat_dir, time.monotonic()))
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="seat-removals", daemon=True)
                self.thread.start()
            self.cond.notify_all()

    def hold(self) -> None:
        with self.cond:
            self.holds += 1

    def release(self) -> None:
        with self.cond:
            self.holds = max(0, self.holds - 1)
            self.cond.notify_all()

    def pending(self) -> int:
        with self.cond:
            return len(self.queue) + self.busy

    def settle(self, timeout: float = 30.0) -> bool:
        """Wait (holds ignored) until every queued removal is done; False on timeout."""
        deadline = time.monotonic() + timeout
        with self.cond:
            held, self.holds = self.holds, 0
            self.cond.notify_all()
            try:
                while self.queue or self.busy:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self.cond.wait(left)
                return True
            finally:
                self.holds += held

    def drain(self) -> None:
        """Remove everything queued now, in the calling thread (at exit)."""
        with self.cond:
            items, self.queue = self.queue, []
        for item in items:
            self._remove(*item[:2])
        self.settle(10.0)

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.queue or (self.holds and time.monotonic() - self.queue[0][2] < HOLD_MAX_SECONDS):
                    if self.queue:
                        self.cond.wait(max(0.05, HOLD_MAX_SECONDS - (time.monotonic() - self.queue[0][2])))
                    elif not self.cond.wait(30.0) and not self.queue:
                        self.thread = None
                        return
                item = self.queue.pop(0)[:2]
                self.busy += 1
            try:
                self._remove(*item)
            finally:
                with self.cond:
                    self.busy -= 1
                    self.cond.notify_all()

    @staticmethod
    def _remove(container, seat_dir: str) -> None:
        try:
            _remove(container)
        except InfrastructureError as exc:
            log.error("removing a stopped seat's container failed (the reaper removes what is left): %s", exc)
        finally:
            shutil.rmtree(seat_dir, ignore_errors=True)


_removals: Removals | None = None


def removals() -> Removals:
    """This process's ``Removals`` (a forked child gets its own)."""
    global _removals
    with _client_lock:
        if _removals is None or _removals.pid != os.getpid():
            _removals = Removals()
            atexit.register(_removals.drain)
        return _removals


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


def seat_cpus(limits: Limits, cores: int | None = None) -> float:
    """The CPU share of one seat's container: ``limits.cpus``, capped at the machine's cores."""
    return min(float(limits.cpus), float(cores or os.cpu_count() or 1))


def container_options(client, limits: Limits, match_id: str, seat: int, seat_dir: str) -> dict:
    """The ``create_container`` arguments of a seat's container (every lockdown option in one place)."""
    from docker.types import LogConfig, Mount, Ulimit

    host_config = client.api.create_host_config(
        network_mode="none",
        ipc_mode="none",
        read_only=True,
        # capped in inodes too: millions of empty files would be kernel memory (and slow to wipe)
        tmpfs={"/tmp": f"rw,noexec,nosuid,nodev,size={limits.tmp_bytes},nr_inodes={limits.tmp_inodes},mode=1777"},
        cap_drop=["ALL"],
        # no-new-privileges and the project's seccomp profile (sandbox.seccomp: Docker's default
        # minus io_uring, namespaces, keyrings, ptrace, foreign socket families and the like)
        security_opt=seccomp.docker_security_options(),
        runtime=seccomp.docker_runtime(),  # SANDBOX_DOCKER_RUNTIME, e.g. runsc (gVisor); None: Docker's default
        mem_limit=limits.memory_bytes,
        memswap_limit=limits.memory_bytes,  # equal: no swap
        # At most one core each (Limits.cpus), never more than the worker's: with one match
        # per core (CELERY_WORKER_CONCURRENCY) the deciding seat of every match has a core.
        nano_cpus=int(seat_cpus(limits) * 1e9),
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
            "python3", *interpreter_options("/sandbox/host.py"),
            "--bot", "/sandbox/bot", "--connect", f"/sandbox/{CHANNEL_SOCKET}",
            "--frame-bytes", str(limits.frame_bytes), "--log-bytes", str(limits.log_bytes),
            "--label", f"{match_id}-{seat}", "--code", f"/sandbox/{CODE_FILE}",
        ],
        "user": BOT_USER,
        "working_dir": "/sandbox/bot",
        "environment": {},  # nothing from the worker; the image's PATH/LANG only
        "labels": {
            LABEL_MATCH: str(match_id), LABEL_SEAT: str(seat), LABEL_STARTED: str(int(time.time())),
            LABEL_INSTALLATION: installation(), LABEL_HOST: host_name(), LABEL_OWNER: owner_token(),
        },
        "stdin_open": False,
        "tty": False,
        # No libnetwork sandbox: runc gives the container a network namespace of its own with
        # only loopback (up), what network_mode "none" gave, without the engine's netns file,
        # its bind mount and the ``libnetwork-setkey`` prestart hook (a run of the dockerd
        # binary) per container: about half the engine's CPU of a seat (docs/sandbox.md,
        # "What a container costs the engine").
        "network_disabled": True,
        "host_config": host_config,
    }


@functools.lru_cache(maxsize=4)
def _host_bytecode(program: str) -> bytes:
    """The bytecode of the host ``program`` for the seats' ``__pycache__`` (``host.host_bytecode``),
    made once a process."""
    return host_bytecode(Path(program).read_bytes(), "/sandbox/host.py")


_code_files: dict[str, bytes] = {}
_code_lock = threading.Lock()


def bot_code(package: BotPackage) -> bytes:
    """The code file of ``package`` (``host.compile_bot``), compiled once a process per upload, in a
    child interpreter with a CPU limit (``host.compile_bot_apart``); b"" (kept too) when that
    compilation failed: the bot's game processes compile its sources, as without a code file."""
    with _code_lock:
        code = _code_files.pop(package.sha256, None)
    if code is None:
        code = compile_bot_apart(package.files)
    with _code_lock:
        _code_files[package.sha256] = code  # the most recently used last
        while len(_code_files) > CODE_CACHE_SIZE:
            del _code_files[next(iter(_code_files))]
    return code


def write_bot(package: BotPackage, seat_dir: str) -> None:
    """Write the bot's files (``bot/``) and its code file into a seat directory, all read-only to
    the bot: the seat directory is mounted read-only and nothing in it is the bot user's."""
    package.write_to(Path(seat_dir) / "bot")
    code = bot_code(package)
    if not code:
        return
    path = os.path.join(seat_dir, CODE_FILE)
    with open(path, "wb") as handle:
        handle.write(code)
    os.chmod(path, 0o644)


def start_seat(package: BotPackage, limits: Limits, *, match_id: str, seat: int, client=None, image: str | None = None,
               defer_refill: bool = False) -> DockerSeatHandle:
    """Start the container of one seat (or take a warm one) and accept its host's connection.

    ``defer_refill``: a warm seat taken is replaced only at ``refill_warm_pool()`` (the runner
    calls it once its seats are ready, so the replacements' Docker work does not compete with
    the bots' imports), not at once."""
    shared = client is None
    client = get_client(client)
    image = image or IMAGE
    pool = warm_pool() if shared else None
    if pool is not None:
        handle = pool.take(client, image, limits, package, refill=not defer_refill)
        if handle is not None:
            return handle
    seat_dir = make_seat_dir(f"{match_id}-{seat}", WORK_DIR)
    try:
        try:
            write_bot(package, seat_dir)
        except OSError as exc:
            raise seat_folder_error(exc, seat_dir, f"writing the bot's files of seat {seat}") from exc
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
        sock_path = os.path.join(seat_dir, CHANNEL_SOCKET)
        if len(sock_path.encode()) > SOCKET_PATH_MAX:
            raise InfrastructureError(work_dir_problem(os.path.dirname(seat_dir)) or f"socket path too long: {sock_path}")
        try:
            shutil.copyfile(HOST_PROGRAM, os.path.join(seat_dir, "host.py"))
            cache = os.path.join(seat_dir, "__pycache__")
            os.mkdir(cache)
            bytecode = os.path.join(cache, f"host.{sys.implementation.cache_tag}.pyc")
            with open(bytecode, "wb") as handle:
                handle.write(_host_bytecode(str(HOST_PROGRAM)))
            chan = os.path.join(seat_dir, "chan")
            os.mkdir(chan)
            os.makedirs(os.path.join(seat_dir, "bot"), exist_ok=True)
            for path in (seat_dir, chan, os.path.join(seat_dir, "bot"), cache):
                os.chmod(path, 0o755)
            for path in (os.path.join(seat_dir, "host.py"), bytecode):
                os.chmod(path, 0o644)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(sock_path)
            os.chmod(sock_path, 0o777)  # the bot user (uid 10001) must be able to connect
            listener.listen(1)
        except OSError as exc:
            raise seat_folder_error(exc, seat_dir, f"preparing the bot host and socket of seat {seat}") from exc
        options = container_options(client, limits, match_id, seat, seat_dir)
        if wait_load:
            options["command"].append("--wait-load")
            options["labels"][LABEL_WARM] = "1"
        # Low-level calls: create then start, no extra inspect on the hot path,
        # and a container whose start fails is still known (and removed).
        from docker.errors import ImageNotFound

        try:
            created = client.api.create_container(image, **options)
            container = client.containers.prepare_model({"Id": created["Id"]})
            client.api.start(container.id)
        except ImageNotFound as exc:
            raise InfrastructureError(
                f"the sandbox image {image} is not on this Docker engine, so seat {seat} cannot start "
                "(build it with deploy/sandbox/build-offline.sh, or set SANDBOX_IMAGE)"
            ) from exc
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
            write_bot(package, self.seat_dir)
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


#: a warm seat idle longer than this is replaced (the reaper allows warm containers this much more)
WARM_MAX_AGE = 600.0
#: at most this many warm containers of one pool start at once
WARM_PARALLEL = 4


class WarmPool:
    """Pre-started seat containers of one worker process, so a seat starts without Docker's start.

    Each is locked down exactly like a cold one; its bot directory is empty until ``take``
    writes a bot into it. ``size`` wait per image and container limits; a taken one is
    replaced at once, up to ``WARM_PARALLEL`` starting in parallel threads. Kept at most
    ``max_age`` seconds idle.
    """

    def __init__(self, size: int, max_age: float = WARM_MAX_AGE, parallel: int = WARM_PARALLEL):
        self.size = size
        self.max_age = max_age
        self.parallel = max(1, parallel)
        self.lock = threading.Lock()
        self.idle: dict[tuple, list[_WarmSeat]] = {}
        self.starting: dict[tuple, int] = {}
        self.closed = False
        self.count = 0
        self.fillers: list[threading.Thread] = []
        self.pid = os.getpid()
        #: refills asked for by ``take(refill=False)``, run by ``refill_deferred``
        self.deferred: dict[tuple, tuple] = {}

    def refill_deferred(self) -> None:
        """Run the refills that ``take(refill=False)`` put off."""
        with self.lock:
            asked, self.deferred = list(self.deferred.values()), {}
        for client, image, limits in asked:
            self.refill(client, image, limits)

    @staticmethod
    def key(image: str, limits: Limits) -> tuple:
        """Containers are interchangeable only with the same image and container limits."""
        return (image, limits.memory_bytes, limits.cpus, limits.cpu_seconds, limits.processes,
                limits.tmp_bytes, limits.tmp_inodes, limits.frame_bytes, limits.log_bytes, limits.start_seconds)

    def take(self, client, image: str, limits: Limits, package: BotPackage, *, refill: bool = True) -> DockerSeatHandle | None:
        """A warm seat running ``package``, or None (the caller starts one cold); refills behind
        (``refill`` False: at the next ``refill_deferred``)."""
        key = self.key(image, limits)
        handle = None
        stale = []
        while handle is None:
            with self.lock:
                seats = self.idle.get(key, [])
                warm = seats.pop(0) if seats else None
            if warm is None:
                break
            if time.monotonic() - warm.born > self.max_age:
                stale.append(warm)
                continue
            handle = warm.activate(package, limits)
        if refill:
            self.refill(client, image, limits)
        else:
            with self.lock:
                self.deferred[key] = (client, image, limits)
        for warm in stale:
            warm.discard()
        return handle

    def refill(self, client, image: str, limits: Limits) -> None:
        """Start containers in background threads (several at once) until ``size`` wait for
        this key (idle and starting)."""
        key = self.key(image, limits)
        with self.lock:
            if self.closed:
                return
            now = time.monotonic()
            fresh = [warm for warm in self.idle.get(key, []) if now - warm.born <= self.max_age]
            stale = [warm for warm in self.idle.get(key, []) if now - warm.born > self.max_age]
            if stale:
                self.idle[key] = fresh
            busy = self.starting.get(key, 0)
            missing = min(self.size - len(fresh) - busy, self.parallel - busy)
            numbers = []
            for _ in range(max(0, missing)):
                self.count += 1
                numbers.append(self.count)
            self.starting[key] = busy + len(numbers)
            fillers = [
                threading.Thread(target=self._start_one, args=(client, image, limits, key, number),
                                 name="warm-seats", daemon=True)
                for number in numbers
            ]
            # started under the lock: close() joins every filler it sees, and sees them all
            for filler in fillers:
                filler.start()
            self.fillers = [t for t in self.fillers if t.is_alive()] + fillers
        for warm in stale:
            warm.discard()

    def _start_one(self, client, image: str, limits: Limits, key: tuple, number: int) -> None:
        warm = None
        again = False
        try:
            label = f"{os.getpid()}-{number}"
            seat_dir = make_seat_dir(f"warm-{label}", WORK_DIR)
            try:
                container, conn = _launch(client, image, limits, "warm", label, seat_dir, wait_load=True)
            except Exception:  # noqa: BLE001 - a failed refill only costs speed; cold starts still work
                shutil.rmtree(seat_dir, ignore_errors=True)
                log.warning("could not pre-start a sandbox container", exc_info=True)
                return
            warm = _WarmSeat(client, container, conn, seat_dir)
            with self.lock:
                if not self.closed:
                    self.idle.setdefault(key, []).append(warm)
                    warm = None
                    again = True  # one more may be missing (more were taken while this started)
        except Exception:  # noqa: BLE001 - e.g. the seats' folder is full: cold starts report it
            log.warning("could not pre-start a sandbox container", exc_info=True)
        finally:
            with self.lock:
                self.starting[key] = max(0, self.starting.get(key, 0) - 1)
            if warm is not None:
                warm.discard()  # the pool closed while it started
        if again:
            self.refill(client, image, limits)

    def ready(self, image: str, limits: Limits) -> int:
        """How many warm seats wait for this image and these limits."""
        with self.lock:
            return len(self.idle.get(self.key(image, limits), []))

    def fill(self, client, image: str, limits: Limits, timeout: float = 60.0) -> int:
        """Refill and wait until ``size`` warm seats wait (or ``timeout``); how many wait."""
        self.refill(client, image, limits)
        deadline = time.monotonic() + timeout
        while self.ready(image, limits) < self.size and time.monotonic() < deadline:
            with self.lock:
                if self.closed:
                    break
            self.refill(client, image, limits)  # a failed start is tried again
            time.sleep(0.05)
        return self.ready(image, limits)

    def containers(self) -> list[str]:
        """The ids of the idle warm containers."""
        with self.lock:
            return [warm.container.id for group in self.idle.values() for warm in group]

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
        handles = [
            DockerSeatHandle(warm.client, warm.container, Channel(warm.conn, 1), warm.seat_dir, DEFAULT_LIMITS)
            for warm in seats
        ]
        for handle in handles:
            handle.channel.close()  # each host exits on its own while the others are removed
        for handle in handles:
            handle.stopped = True
            Removals._remove(handle.container, handle.seat_dir)
        deadline = time.monotonic() + timeout
        for filler in fillers:
            filler.join(max(0.0, deadline - time.monotonic()))


#: warm seats per worker process (image + limits); 0: no pool; None: SANDBOX_DOCKER_WARM decides
WARM_SEATS: int | None = None
_pool: WarmPool | None = None
_pool_pid = 0


def warm_seats() -> int:
    """How many warm seats this process keeps: as configured (``configure_warm_pool``, what a
    platform worker does), else SANDBOX_DOCKER_WARM as a number (unset or ``auto``: 0, no pool)."""
    global WARM_SEATS
    if WARM_SEATS is None:
        raw = os.environ.get("SANDBOX_DOCKER_WARM", "").strip() or "0"
        if raw == "auto":
            raw = "0"  # the platform's worker sizes its pool itself (configure_warm_pool)
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


def refill_warm_pool() -> None:
    """Replace the warm seats this process's matches took with ``start_seat(defer_refill=True)``."""
    with _client_lock:
        pool = _pool if _pool_pid == os.getpid() else None
    if pool is not None:
        pool.refill_deferred()


def configure_warm_pool(size: int, *, defer_stops: bool = False) -> WarmPool | None:
    """Set how many warm seats this process keeps (0: none); closes the previous pool.

    ``defer_stops``: seats are removed by a background thread after their match
    (``Removals``); off, by the caller (what tests and ``arena play`` see)."""
    global WARM_SEATS, _pool, DEFER_STOPS
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"warm seats must be an int >= 0, got {size!r}")
    with _client_lock:
        old = _pool if _pool_pid == os.getpid() else None
        _pool, WARM_SEATS = None, size
    if old is not None:
        old.close()
    if not defer_stops and DEFER_STOPS:
        removals().settle()
    DEFER_STOPS = defer_stops
    return warm_pool()


def close_warm_pool() -> None:
    """Remove this process's warm containers and whatever seats wait for removal (a worker's
    stop: its children exit with ``os._exit``, past ``atexit``)."""
    global _pool
    global WARM_SEATS, DEFER_STOPS
    with _client_lock:
        pool = _pool if _pool_pid == os.getpid() else None
        _pool, WARM_SEATS = None, 0
    DEFER_STOPS = False  # what stops later (an embedded worker's host process goes on) is removed at once
    if pool is not None:
        pool.close()
    if _removals is not None and _removals.pid == os.getpid():
        _removals.drain()


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


class _Listed:
    """A container as the engine listed it (labels, mounts), without one inspect call each: a
    container removed meanwhile is no error."""

    def __init__(self, client, row: dict):
        self.row = row
        self.labels = row.get("Labels") or {}
        self.container = client.containers.prepare_model({"Id": row["Id"]})
        self.short_id = self.container.short_id

    def folders(self) -> list[str]:
        """The seat folders it mounted (named like a seat's)."""
        return [
            mount.get("Source", "") for mount in self.row.get("Mounts") or []
            if mount.get("Destination") == "/sandbox" and os.path.basename(mount.get("Source", "")).startswith(SEAT_DIR_PREFIX)
        ]

    def remove(self) -> None:
        """Remove it and its seat folder."""
        _remove(self.container)
        for folder in self.folders():
            shutil.rmtree(folder, ignore_errors=True)


def _installation_containers(client, *labels: str) -> list[_Listed]:
    """This installation's sandbox containers (running or not), with more label filters."""
    try:
        rows = client.api.containers(all=True, filters={"label": [f"{LABEL_INSTALLATION}={installation()}", *labels]})
    except _docker_errors() as exc:
        raise InfrastructureError(f"Docker engine failed to list sandbox containers: {exc}") from exc
    return [_Listed(client, row) for row in rows]


def dead_owners_containers(client=None) -> list[_Listed]:
    """Containers of this installation started on this host by a process that is gone."""
    client = get_client(client)
    return [
        listed for listed in _installation_containers(client, f"{LABEL_HOST}={host_name()}")
        if not owner_alive(listed.labels.get(LABEL_OWNER, ""))
    ]


def remove_leftovers(client=None) -> int:
    """Remove what dead processes of this installation left on this host (containers and their
    seat folders): a worker's start and the reaper call it. How many containers went."""
    removed = 0
    for listed in dead_owners_containers(client):
        try:
            listed.remove()
            removed += 1
        except InfrastructureError as exc:
            log.warning("could not remove a dead worker's sandbox container %s: %s", listed.short_id, exc)
    if removed:
        log.warning("removed %s sandbox containers that dead processes of installation %s left on %s",
                    removed, installation(), host_name())
    return removed


def remove_match(match_id: str, client=None) -> int:
    """Remove the containers (and seat folders) of one attempt of a match (label ``match_id``)
    of this installation on this engine, and whatever dead processes left on this host (a
    killed worker's warm seats carry the pool's label, not the match's). How many went."""
    client = get_client(client)
    removed = remove_leftovers(client)
    for listed in _installation_containers(client, f"{LABEL_MATCH}={match_id}"):
        listed.remove()
        removed += 1
    return removed


def reap(max_age_seconds: float | None = None, client=None) -> int:
    """Remove this installation's sandbox containers older than ``max_age_seconds`` (default:
    the longest match; warm ones get ``WARM_MAX_AGE`` more, the longest they wait idle) and
    those whose process is gone on this host. Containers of other installations are never
    touched. Also deletes seat directories that old. Scheduled periodically by the platform;
    returns how many containers were removed.
    """
    client = get_client(client)
    if max_age_seconds is None:
        max_age_seconds = DEFAULT_LIMITS.max_match_seconds
    now = time.time()
    removed = remove_leftovers(client)
    for listed in _installation_containers(client, LABEL_MATCH):
        try:
            started = float(listed.labels.get(LABEL_STARTED, "0"))
        except ValueError:
            started = 0.0  # a mangled label: treat as ancient
        allowed = max_age_seconds + (WARM_MAX_AGE if listed.labels.get(LABEL_WARM) else 0.0)
        if started <= now - allowed:
            listed.remove()
            removed += 1
    reap_seat_dirs(max_age_seconds, [WORK_DIR])
    return removed


def image_id(image: str | None = None, client=None) -> str | None:
    """The id of ``image`` (default: the sandbox image) on the engine; None when the engine does
    not answer or lacks it."""
    try:
        return get_client(client).images.get(image or IMAGE).id
    except InfrastructureError:
        return None
    except _docker_errors():
        return None


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


def match_containers(match_id: str, client=None, *, mine: bool = False) -> list:
    """Containers (running or not) still carrying ``match_id``'s label (``mine``: and started by
    this process: other processes' warm seats share the ``warm`` label)."""
    client = get_client(client)
    labels = [f"{LABEL_MATCH}={match_id}", *([f"{LABEL_OWNER}={owner_token()}"] if mine else [])]
    try:
        return client.containers.list(all=True, filters={"label": labels}, ignore_removed=True)
    except _docker_errors() as exc:
        raise InfrastructureError(f"Docker engine failed to list containers of match {match_id}: {exc}") from exc
