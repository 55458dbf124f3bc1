"""Process backend: the bot host as a local process, in bubblewrap when present.

With bwrap: no network, own PID/IPC/UTS namespaces, read-only system
directories, private /tmp, home and /dev/shm capped in bytes and inodes, empty
environment, killed with its parent, no capabilities. Always: the seccomp filter
of ``sandbox.seccomp`` and rlimits (private memory, an address-space ceiling,
CPU time, processes, file size).
As root each seat runs as its own unprivileged uid (root ignores RLIMIT_NPROC,
and the limit counts per uid); inside bwrap the bot sees uid 10001.
Without bwrap it still runs with rlimits and warns once that isolation is weak.
Weaker than Docker: the runner only uses it for untrusted code when allowed.
"""

from __future__ import annotations

import itertools
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.faults import InfrastructureError, SeatFault
from sandbox import seccomp
from sandbox.limits import MIB, Limits, describe_bytes
from sandbox.package import BotPackage
from sandbox.seat import Channel, make_seat_dir

log = logging.getLogger(__name__)

HOST_PROGRAM = Path(__file__).resolve().parent.parent / "host.py"
#: the uid bots see inside bwrap (same as the sandbox image's `bot` user)
BOT_UID = 10001
#: real uids a root worker gives seats, one per seat: RLIMIT_NPROC counts per
#: real uid, so a shared uid would let one seat's fork bomb stop others starting
SEAT_UIDS = range(20000, 30000)
_seat_counter = itertools.count((os.getpid() * 97) % len(SEAT_UIDS))
_warned_weak = False


def next_seat_uid() -> int:
    """A real uid for the next seat (distinct for the last len(SEAT_UIDS) seats of this worker)."""
    return SEAT_UIDS[next(_seat_counter) % len(SEAT_UIDS)]


def find_interpreter() -> str:
    """The system Python 3 (the bot host needs nothing else); a venv's python may live in /root."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("python3")
    if found is None:
        raise InfrastructureError("no python3 interpreter found for the process sandbox")
    return found


#: stack of each Python thread a bot starts (``host.py --thread-stack-bytes``); it counts as memory
THREAD_STACK_BYTES = 2 * MIB
#: address space beyond the memory limit: the interpreter's code and libraries, the C allocator's
#: reservations (``MALLOC_ARENA_MAX`` keeps them few) and every thread's stack
ADDRESS_SPACE_SLACK = 256 * MIB
#: glibc reserves 64 MiB of address space per allocation arena, one per thread up to 8 per core
MALLOC_ARENA_MAX = "2"


def address_space_bytes(limits: Limits) -> int:
    """RLIMIT_AS: the memory limit plus room for the threads the process limit allows."""
    return limits.memory_bytes + limits.processes * THREAD_STACK_BYTES + ADDRESS_SPACE_SLACK


def _set_rlimits(limits: Limits) -> Callable[[], None]:
    """A preexec function: only setrlimit calls, safe to run between fork and exec.

    Memory: RLIMIT_DATA (private writable memory: heap, anonymous maps, thread
    stacks) is the memory limit; RLIMIT_AS only a ceiling for what DATA does
    not count (shared mappings), sized so the process limit's threads fit.
    Before, RLIMIT_AS alone was the memory limit and left room for 4 threads.
    """
    memory = limits.memory_bytes
    address_space = address_space_bytes(limits)
    cpu = int(limits.cpu_seconds)
    nproc = limits.processes
    fsize = limits.file_bytes

    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return preexec


class ProcessSeatHandle:
    """One running bot host process (or bwrap tree) and its channel."""

    def __init__(self, process: subprocess.Popen[bytes], channel: Channel, workdir: str, limits: Limits, sandboxed: bool):
        self.process = process
        self.sandboxed = sandboxed
        self.channel = channel
        self.workdir = workdir
        self.limits = limits
        self.stopped = False

    def death_fault(self) -> SeatFault:
        try:
            code = self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return SeatFault("crash", "bot host closed its channel but kept running")
        complaint = self._sandbox_complaint()
        if complaint:
            # bwrap itself failed (no user namespaces, a bad bind...): not the bot's doing.
            raise InfrastructureError(f"bubblewrap could not set up the sandbox: {complaint}")
        # bwrap reports a child killed by signal N as exit code 128 + N.
        if code is not None and code > 128 and self.sandboxed:
            code = 128 - code
        if code is None or code >= 0:
            return SeatFault("crash", f"bot host exited with code {code}")
        signum = -code
        if signum == signal.SIGXCPU or (signum == signal.SIGKILL and self._cpu_exhausted()):
            return SeatFault("crash", f"killed: CPU time limit exceeded ({self.limits.cpu_seconds} s)")
        if signum == signal.SIGXFSZ:
            return SeatFault("crash", f"killed: file size limit exceeded ({describe_bytes(self.limits.file_bytes)})")
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        return SeatFault("crash", f"killed by signal {name}")

    def _sandbox_complaint(self) -> str:
        """What bwrap wrote to its stderr (the bot cannot reach it: the host moves fd 2 first)."""
        stream = self.process.stderr
        if stream is None:
            return ""
        try:
            os.set_blocking(stream.fileno(), False)
            text = (stream.read(4096) or b"").decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        # "sandbox setup:": the host's own confinement (tmpfs, capabilities, seccomp) failed
        return text if text.startswith(("bwrap:", "sandbox setup:")) else ""

    def _cpu_exhausted(self) -> bool:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime >= self.limits.cpu_seconds

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.channel.close()
        # The host leads its own process group: kill the group. In bwrap the
        # sandbox's PID namespace dies with its init, which dies with bwrap.
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            log.error("bot host pid %s did not die after SIGKILL", self.process.pid)
        if self.process.stderr is not None:
            self.process.stderr.close()
        _remove_tree(self.workdir)


def _remove_tree(path: str | os.PathLike[str]) -> None:
    """Delete a seat directory, also the folders made read-only for a weak-mode bot."""

    def retry(function: Callable[[str], object], name: str, _: object) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)
            function(name)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)


def _read_only(root: Path) -> None:
    """Make the bot's copy read-only for its owner too (a shared uid could chmod it back: weak mode)."""
    for folder, _, files in os.walk(root):
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
    for folder, _, _ in os.walk(root, topdown=False):
        os.chmod(folder, 0o555)


#: the writable places of a bwrap sandbox, each a tmpfs capped in bytes and inodes (mounted by the host)
WRITABLE = ("/tmp", "/home/bot", "/dev/shm")


def bwrap_command(bwrap: str, interpreter: str, limits: Limits, fd: int, label: str, seccomp_fd: int | None = None) -> list[str]:
    """The bubblewrap command line around the bot host; ``{bot}``/``{host}`` stand for the seat's paths.

    bwrap keeps CAP_SYS_ADMIN and CAP_SETPCAP inside the sandbox's user namespace for the
    supervisor's first steps only (``host.confine``): it mounts the inode-capped tmpfs
    (bwrap 0.8's ``--size`` caps bytes, not inodes), drops every capability and installs
    the seccomp filter from ``seccomp_fd`` before any bot code runs.
    """
    command = [
        bwrap,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--clearenv",
        "--uid", str(BOT_UID), "--gid", str(BOT_UID),
        "--setenv", "PATH", "/usr/bin:/bin",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "HOME", "/home/bot",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
        "--setenv", "MALLOC_ARENA_MAX", MALLOC_ARENA_MAX,
        "--ro-bind", "/usr", "/usr",
    ]
    for link in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(link):
            command += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            command += ["--ro-bind", link, link]
    tmp = str(limits.tmp_bytes)
    command += [
        "--proc", "/proc",
        "--dev", "/dev",
        # Every writable place is a size-limited tmpfs: files there are RAM.
        "--size", tmp, "--tmpfs", "/dev/shm",
        "--remount-ro", "/dev",
        "--size", tmp, "--tmpfs", "/tmp",
        "--size", tmp, "--tmpfs", "/home/bot",
        "--ro-bind", "{bot}", "/sandbox/bot",
        "--ro-bind", "{host}", "/sandbox/host.py",
        "--remount-ro", "/",
        "--chdir", "/sandbox/bot",
        "--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
        "--",
        # -B and PYTHONDONTWRITEBYTECODE: no bytecode is written (and bot modules never read any)
        interpreter, "-I", "-S", "-B", "/sandbox/host.py",
        "--bot", "/sandbox/bot", "--fd", str(fd),
        # Its own PID, IPC and user namespaces: kill(-1) reaches exactly the bot's processes.
        "--jail", "pidns", "--scrub", "/tmp", "--scrub", "/home/bot", "--scrub", "/dev/shm",
        "--frame-bytes", str(limits.frame_bytes), "--log-bytes", str(limits.log_bytes),
        "--label", label,
        *[arg for path in WRITABLE for arg in ("--tmpfs", path)],
        "--tmpfs-bytes", str(limits.tmp_bytes), "--tmpfs-inodes", str(limits.tmp_inodes),
        "--drop-caps", "--thread-stack-bytes", str(THREAD_STACK_BYTES),
    ]
    if seccomp_fd is not None:
        command += ["--seccomp-fd", str(seccomp_fd)]
    return command


def start_seat(package: BotPackage, limits: Limits, *, label: str = "seat", bwrap: str | None = "auto") -> ProcessSeatHandle:
    """Start a bot host for ``package``; ``bwrap=None`` forces the weak rlimits-only mode."""
    global _warned_weak
    if bwrap == "auto":
        bwrap = shutil.which("bwrap")
    interpreter = find_interpreter()
    workdir = make_seat_dir(label)
    parent_sock = child_sock = None
    filter_fd = -1
    try:
        bot_dir = Path(workdir) / "bot"
        package.write_to(bot_dir)
        # A copy beside the bot: the seat's uid may not read the install tree.
        host_program = Path(workdir) / "host.py"
        shutil.copyfile(HOST_PROGRAM, host_program)
        os.chmod(host_program, 0o644)
        os.chmod(workdir, 0o755)
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = child_sock.fileno()
        try:
            filter_fd = seccomp.filter_fd()
        except (seccomp.SeccompUnavailable, OSError) as exc:
            raise InfrastructureError(f"cannot build the process sandbox's seccomp filter: {exc}") from exc
        user = None
        if os.geteuid() == 0:
            user = group = next_seat_uid()
        if bwrap:
            paths = {"{bot}": str(bot_dir), "{host}": str(host_program)}
            command = [paths.get(part, part) for part in bwrap_command(bwrap, interpreter, limits, fd, label, filter_fd)]
            env = {"PATH": "/usr/bin:/bin"}
            cwd = "/"
        else:
            if not _warned_weak:
                _warned_weak = True
                log.warning("bubblewrap not found: the process sandbox runs bots with rlimits only (weak isolation: network, files and other processes are reachable)")
            # The bot's writable place, emptied after each game; a root worker's seat uid owns
            # nothing else, a shared uid can write wherever the worker can (weak).
            scratch = Path(workdir) / "scratch"
            scratch.mkdir(mode=0o700)
            if user is not None:
                os.chown(scratch, user, group)
            else:
                _read_only(bot_dir)
            command = [interpreter, "-I", "-S", "-B", str(host_program), "--bot", str(bot_dir), "--fd", str(fd),
                       "--jail", "uid" if user is not None else "none", "--scrub", str(scratch),
                       "--frame-bytes", str(limits.frame_bytes), "--log-bytes", str(limits.log_bytes), "--label", label,
                       "--thread-stack-bytes", str(THREAD_STACK_BYTES), "--seccomp-fd", str(filter_fd)]
            env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(scratch), "TMPDIR": str(scratch),
                   "PYTHONDONTWRITEBYTECODE": "1", "MALLOC_ARENA_MAX": MALLOC_ARENA_MAX}
            cwd = str(bot_dir)
        kwargs: dict[str, Any] = {}
        if user is not None:
            kwargs.update(user=user, group=group, extra_groups=[])
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                # bwrap's own errors come here; the host points fd 2 elsewhere first thing.
                stderr=subprocess.PIPE if bwrap else subprocess.DEVNULL,
                pass_fds=(fd, filter_fd),
                env=env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_set_rlimits(limits),
                **kwargs,
            )
        except OSError as exc:
            raise InfrastructureError(f"cannot start the bot host ({command[0]}): {exc}") from exc
        finally:
            os.close(filter_fd)
            filter_fd = -1
        child_sock.close()
        return ProcessSeatHandle(process, Channel(parent_sock, limits.frame_bytes), workdir, limits, bool(bwrap))
    except BaseException:
        for sock in (parent_sock, child_sock):
            if sock is not None:
                sock.close()
        if filter_fd >= 0:
            os.close(filter_fd)
        _remove_tree(workdir)
        raise
