"""The bot host: runs inside a sandbox, supervises one bot and answers the referee.

Standard library only, Python 3.11+: it runs on the sandbox image's bare
interpreter, so it must never import ``engine``, ``sandbox`` or Django. The
referee side imports the frame helpers below, so the wire format lives here.

Usage (the backends start it; the Docker seats through ``interpreter_options``, which runs the
same program imported so its bytecode is used): ``python3 -I -S -B host.py --bot DIR (--fd N | --connect PATH)
[--wait-load] [--code FILE] [--jail pidns|uid|none] [--scrub DIR ...] [--tmpfs DIR ... --tmpfs-bytes N
--tmpfs-inodes N] [--drop-caps] [--seccomp-fd N] [--thread-stack-bytes N]`` (the last four: the
process sandbox's confinement, which the supervisor finishes on itself, see ``confine``;
``--code``: the worker's compilation of the bot's sources, ``compile_bot``, in a file the bot
cannot write, which each game process imports instead of compiling them again)

Two roles in one program. The *supervisor* (what the backends start) never
imports bot code: it makes itself non-dumpable (no ptrace, no /proc/<pid>/mem
for same-uid bot code), and for each game it starts a fresh interpreter, the
*game process* (``--child``), which imports the bot and answers decisions. At
the next ``game`` request (and at ``stop``) the supervisor kills every process
of the previous game, wipes the writable storage (``--scrub`` folders), SysV
IPC objects and keyrings, and starts the next game process; between decisions
it freezes (SIGSTOP) every process of the game, so a bot uses CPU only while
it is asked. ``--jail`` says how it finds them: ``pidns`` (bubblewrap or a
container: every process it can signal belongs to this sandbox, so
``kill(-1)``), ``uid`` (a seat uid of its own: the same), ``none`` (a shared
uid: the supervisor's descendants, it being their subreaper). Default: ``pidns``
when the host is PID 1 (a container), else ``none``; ``--scrub`` defaults to
``/tmp`` in a container, else nothing.

Wire format: each frame is a 4-byte big-endian length, then that many bytes of
UTF-8 JSON (an object). The host sends ``hello`` once the bot is imported (id 0
for the first game, the ``game`` request's id after it), one reply per
``decide`` (same ``id``), ``stopped`` on ``stop``, and ``log`` frames with what
the bot printed. The referee sends ``decide``, ``game`` (start the next game's
process; ``"spare": true`` when another game follows it), ``spare`` (at the first game, when
another follows: fork the next game's process ahead, ``Supervisor.prepare_spare``), ``freeze``
(after a timeout: stop the abandoned computation) and ``stop``. With ``--wait-load`` (a warm Docker seat) it first waits for
``load``: the bot's files arrive after the sandbox started. Everything the bot
writes to fd 1 and 2 (also from C code and child processes) goes into a pipe
the supervisor drains into capped ``log`` frames, ahead of the reply that
follows it, so prints never reach the channel.
"""

from __future__ import annotations

import _socket
import codecs
import errno
import fcntl
import importlib.machinery
import json
import os
import re
import select
import signal
import struct
import sys
import time
import types
from importlib._bootstrap import module_from_spec
from importlib._bootstrap_external import MAGIC_NUMBER, spec_from_file_location

HEADER = struct.Struct(">I")
#: the module a bot's directory must hold; ``agent`` is looked up in it
ENTRY_MODULE = "main.py"


class FrameError(Exception):
    """The other side sent something that is not a valid frame."""


def encode_frame(message: dict) -> bytes:
    """One frame: length prefix plus compact JSON.

    >>> encode_frame({"id": 1})[:4]
    b'\\x00\\x00\\x00\\x08'
    """
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict:
    """Parse one frame body, refusing anything but a JSON object."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FrameError(f"frame is not UTF-8 JSON ({type(exc).__name__}: {str(exc)[:80]})") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame is JSON {type(message).__name__}, not an object")
    return message


def send_fds(sock: _socket.socket, buffers: list[bytes], fds: list[int]) -> int:
    """``socket.send_fds``: the host uses ``_socket`` only (``socket``, with ``selectors`` and its
    enums, cost about 2.5 ms of CPU in every seat's container)."""
    return sock.sendmsg(buffers, [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))])


def recv_fds(sock: _socket.socket, size: int, most: int) -> tuple[bytes, list[int], int, object]:
    """``socket.recv_fds`` (see ``send_fds``): the message, the descriptors, its flags and address."""
    message, ancillary, flags, address = sock.recvmsg(size, _socket.CMSG_LEN(most * 4))
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += struct.unpack(f"{len(data) // 4}i", data[:len(data) - len(data) % 4])
    return message, fds, flags, address


def recv_exact(sock: _socket.socket, size: int) -> bytes:
    """Read exactly ``size`` bytes (blocking); EOFError when the peer closed."""
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("channel closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles a bot's module from its source: bytecode in the bot's folder is never read or written.

    A ``__pycache__/main.cpython-311.pyc`` smuggled beside ``main.py`` (with a
    matching header, or an unchecked hash) would otherwise run instead of the
    source everyone reads. The one exception is the worker's own compilation of
    the same sources (``compile_bot``, handed with ``--code``): trusted, since
    the worker made it from the checked upload and the bot cannot write it.
    """

    def path_stats(self, path):
        raise OSError("bot modules are compiled from source")  # get_code then skips the cache

    def get_code(self, fullname):
        code = _BOT_CODE.get(os.path.realpath(self.path))
        if code is not None:
            import _imp

            _imp._fix_co_filename(code, self.path)  # as the source loader names it (tracebacks)
            return code
        return super().get_code(fullname)


#: folders whose modules load with SourceOnlyLoader only (no .pyc, no extension modules)
_BOT_DIRS: set[str] = set()
#: code objects the worker compiled from a bot's sources (``read_bot_code``), by the real path of each source
_BOT_CODE: dict[str, object] = {}


def compile_bot(files: dict[str, bytes]) -> bytes:
    """A bot's code file (``host.py --code``): this interpreter's ``MAGIC_NUMBER``, then the marshal of
    ``{path: code}`` for each ``.py`` of ``files`` (paths relative to the bot's folder), compiled
    as ``SourceOnlyLoader`` compiles them (``dont_inherit``, no optimisation). A source that does
    not compile is left out: the host compiles it and reports its error as without the file."""
    import marshal

    code = {}
    for path, content in files.items():
        if path.endswith(".py"):
            try:
                code[path] = compile(content, path, "exec", dont_inherit=True, optimize=0)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
    return MAGIC_NUMBER + marshal.dumps(code)


#: what the worker gives the compilation of one upload (``compile_bot_apart``): CPU seconds, and
#: the child interpreter's address space
COMPILE_CPU_SECONDS = 2
COMPILE_MEMORY_BYTES = 1 << 30


def compile_bot_apart(files: dict[str, bytes]) -> bytes:
    """``compile_bot`` in a child interpreter limited to COMPILE_CPU_SECONDS of CPU and
    COMPILE_MEMORY_BYTES: the sources are the bot's, and some cost far more to compile than their
    size suggests (an f-string of 200,000 fields, 586 KiB: 23 s of CPU), which must not be the
    worker's time (nor hold its GIL, which its lease keeper needs). b"" when the child fails or
    runs out of its limits: the game processes then compile the sources themselves, in the
    sandbox, on the bot's clock, as without a code file."""
    import marshal
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    program = f"import sys; sys.path.insert(0, {root!r}); import sandbox.host as h; h._compile_child()"
    sources = marshal.dumps({path: content for path, content in files.items() if path.endswith(".py")})
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", program], input=sources, capture_output=True,
            timeout=3 * COMPILE_CPU_SECONDS + 5,
        )
    except (OSError, subprocess.SubprocessError):
        return b""
    magic = MAGIC_NUMBER
    return done.stdout if done.returncode == 0 and done.stdout[: len(magic)] == magic else b""


def _compile_child() -> None:
    """The child of ``compile_bot_apart``: its limits first, then the sources from stdin."""
    import marshal
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (COMPILE_CPU_SECONDS, COMPILE_CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_AS, (COMPILE_MEMORY_BYTES, COMPILE_MEMORY_BYTES))
    sys.stdout.buffer.write(compile_bot(marshal.loads(sys.stdin.buffer.read())))


def read_bot_code(bot_dir: str, code_file: str) -> int:
    """Take the code objects of ``code_file`` (``compile_bot``) for the modules under ``bot_dir``;
    how many. A file that is missing, made by another Python (its ``MAGIC_NUMBER``) or unreadable
    gives none: the bot is compiled from its source, as without the file."""
    import marshal

    try:
        with open(code_file, "rb") as handle:
            blob = handle.read()
    except OSError:
        return 0
    magic = MAGIC_NUMBER
    if blob[:len(magic)] != magic:
        return 0
    try:
        code = marshal.loads(blob[len(magic):])
    except (ValueError, EOFError, TypeError):
        return 0
    if not isinstance(code, dict):
        return 0
    root = os.path.realpath(bot_dir)
    taken = 0
    for path, item in code.items():
        if isinstance(path, str) and isinstance(item, types.CodeType):
            _BOT_CODE[os.path.join(root, path)] = item
            taken += 1
    return taken


def _bot_path_hook(path: str):
    real = os.path.realpath(path or ".")
    if any(real == root or real.startswith(root + os.sep) for root in _BOT_DIRS):
        return importlib.machinery.FileFinder(path, (SourceOnlyLoader, importlib.machinery.SOURCE_SUFFIXES))
    raise ImportError("not a bot folder")


def register_bot_dir(bot_dir: str) -> None:
    """Import modules under ``bot_dir`` from source only (see SourceOnlyLoader)."""
    _BOT_DIRS.add(os.path.realpath(bot_dir))
    if _bot_path_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, _bot_path_hook)
    root = os.path.realpath(bot_dir)
    for key in [k for k in sys.path_importer_cache if isinstance(k, str) and (os.path.realpath(k or ".") + os.sep).startswith(root + os.sep)]:
        del sys.path_importer_cache[key]


def forget_bot_dir(bot_dir: str) -> None:
    _BOT_DIRS.discard(os.path.realpath(bot_dir))


def load_agent(bot_dir: str, module_name: str = "main", code_file: str | None = None):
    """Import ``main.py`` from ``bot_dir`` as ``module_name`` and return its ``agent``.

    Helper modules beside ``main.py`` are importable because ``bot_dir`` is put
    first on ``sys.path``; every module there is compiled from its source
    (``SourceOnlyLoader``), or taken from ``code_file`` (``compile_bot``: the
    worker's compilation of the same sources). Raises whatever the bot's import raises.
    """
    path = os.path.join(bot_dir, ENTRY_MODULE)
    if code_file:
        read_bot_code(bot_dir, code_file)
    register_bot_dir(bot_dir)
    if bot_dir not in sys.path:
        sys.path.insert(0, bot_dir)
    spec = spec_from_file_location(module_name, path, loader=SourceOnlyLoader(module_name, path))
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    agent = getattr(module, "agent", None)
    if not callable(agent):
        raise TypeError(f"main.py defines no callable `agent` (found {type(agent).__name__})")
    return agent


#: what encoding a reply raises when it is not JSON (a set, NaN, a list nested too deep to encode)
NOT_JSON_ERRORS = (TypeError, ValueError, RecursionError, OverflowError)


def not_json_reason(action, exc: BaseException) -> str:
    """The fault reason of a reply that could not be encoded: the same in the sandbox and in-process."""
    return f"agent returned a value that is not JSON ({type(action).__name__}): {str(exc)[:200]}"


def describe_exception(exc: BaseException) -> dict:
    """The error a host reports for an exception raised by bot code."""
    try:
        text = str(exc)
    except BaseException:  # noqa: BLE001 - a bot's exception may not even print
        text = "<unprintable exception>"
    reason = (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:500]
    if isinstance(exc, MemoryError):
        return {"kind": "memory", "reason": reason}
    # fork/clone and thread creation fail with EAGAIN at the process limit; a
    # sandbox has no network, so EAGAIN from sockets cannot be the cause.
    if isinstance(exc, RuntimeError) and "can't start new thread" in text:
        return _thread_failure(reason)
    if isinstance(exc, OSError) and exc.errno == errno.EAGAIN:
        return {"kind": "processes", "reason": reason}
    return {"kind": "exception", "reason": reason}


def _thread_failure(reason: str) -> dict:
    """Why a thread could not start: its stack did not fit the memory limits, or the process limit.

    pthread_create says EAGAIN for both, and Python turns both into the same
    RuntimeError; the process's own numbers tell them apart.
    """
    import _thread
    import resource

    sizes = {}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key in ("VmData", "VmSize"):
                    sizes[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    stack = _thread.stack_size() or resource.getrlimit(resource.RLIMIT_STACK)[0]
    if stack == resource.RLIM_INFINITY:
        stack = 8 << 20
    for key, limit in (("VmData", resource.RLIMIT_DATA), ("VmSize", resource.RLIMIT_AS)):
        soft = resource.getrlimit(limit)[0]
        if key in sizes and soft != resource.RLIM_INFINITY and sizes[key] + stack > soft:
            return {"kind": "memory", "reason": f"no memory for a new thread's {stack >> 10} KiB stack: {reason}"[:500]}
    return {"kind": "processes", "reason": f"thread limit reached (each thread counts as a process): {reason}"[:500]}


class Host:
    """A game process's side of its channel to the supervisor: framed send and receive."""

    def __init__(self, sock: _socket.socket, frame_bytes: int):
        self.sock = sock
        self.frame_bytes = frame_bytes

    def send(self, message: dict, frame: bytes | None = None) -> None:
        """Send ``message`` (``frame``: its encoding, when the caller made it already)."""
        self.sock.sendall(encode_frame(message) if frame is None else frame)

    def recv(self) -> dict:
        (size,) = HEADER.unpack(recv_exact(self.sock, HEADER.size))
        if size > self.frame_bytes:
            raise FrameError(f"frame of {size} bytes exceeds the cap of {self.frame_bytes}")
        return decode_body(recv_exact(self.sock, size))

    def reply(self, message: dict, frame: bytes | None = None) -> None:
        """Send ``message`` after what the bot printed so far (the supervisor forwards the pipe first)."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - the bot may have closed or replaced them
                pass
        self.send(message, frame)


#: the module name the host runs under when started by ``interpreter_options`` (not ``host``: a
#: bot's own ``host.py`` must still be importable)
RUN_AS = "_uno_arena_host"


def interpreter_options(path: str) -> list[str]:
    """``python3`` options that run the host at ``path`` (then its own arguments): imported under
    ``RUN_AS``, not run as a script, so that its bytecode beside it (``__pycache__``, written by
    the worker where the bot cannot write, ``host_bytecode``) is used where it is valid; a script
    is compiled from its source at every start (7-10 ms of CPU in the image, twice a seat: the
    supervisor and its zygote). Without valid bytecode it is compiled, as before. The two helpers
    are importlib.util's, taken from the import system itself (importlib.util's own imports cost
    about 1 ms of CPU, and nothing in a seat needs them)."""
    return ["-I", "-S", "-B", "-c",
            "import sys, importlib._bootstrap as b, importlib._bootstrap_external as e\n"
            f"s = e.spec_from_file_location({RUN_AS!r}, {path!r})\n"
            "m = sys.modules[s.name] = b.module_from_spec(s)\n"
            "s.loader.exec_module(m)\n"
            "m.main()\n"]


def host_bytecode(source: bytes, path: str) -> bytes:
    """The ``__pycache__`` file of the host's ``source`` at ``path`` for this interpreter: checked
    against the source's hash at every start (never its time), so a changed host is compiled."""
    import importlib._bootstrap_external as external
    import importlib.util

    code = compile(source, path, "exec", dont_inherit=True, optimize=0)
    return external._code_to_hash_pyc(code, importlib.util.source_hash(source), checked=True)


_LIBC = None


def _libc():
    """The C library through ctypes, loaded once a process (and kept by its forks)."""
    global _LIBC
    if _LIBC is None:
        import ctypes

        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
#: the zygote's name in /proc/<pid>/comm
ZYGOTE_NAME = b"uno-zygote"
PR_SET_CHILD_SUBREAPER = 36
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
SYS_IOPRIO_SET, SYS_IOPRIO_GET = {"x86_64": (251, 252), "aarch64": (30, 31)}.get(os.uname().machine, (None, None))
IOPRIO_WHO_PROCESS = 1
KEYCTL_JOIN_SESSION_KEYRING = 1
KEYCTL_CLEAR = 7
KEY_SPEC_USER_KEYRING = -4
KEY_SPEC_USER_SESSION_KEYRING = -5
IPC_RMID = 0


def _keyctl(*args) -> None:
    if SYS_KEYCTL is None:
        return
    try:
        _libc().syscall(SYS_KEYCTL, *args)
    except (OSError, AttributeError):
        pass  # blocked (Docker's seccomp profile) or unavailable: nothing could have been stored


def serve(host: Host, bot_dir: str, hello_id: int = 0, thread_stack: int = 0, code_file: str | None = None) -> int:
    """A game process: import the bot (``code_file``: see ``load_agent``), say hello, then answer
    ``decide`` until ``stop`` or EOF."""
    signal.signal(signal.SIGXCPU, _out_of_cpu)
    sys.dont_write_bytecode = True
    if thread_stack:
        import _thread

        _thread.stack_size(thread_stack)  # threads' stacks count against the memory limits
    # fd 1 and 2 are the supervisor's log pipe: line-buffered streams on them (a
    # bot's last prints before a kill are its best clue).
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
    # A session keyring of this game's own (the supervisor's would outlive it).
    _keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0)
    try:
        os.chdir(bot_dir)
        agent = load_agent(bot_dir, code_file=code_file)
    except BaseException as exc:  # noqa: BLE001 - any failure of bot code is reported, not raised
        error = describe_exception(exc)
        error["reason"] = f"exception at import: {error['reason']}"
        host.reply({"op": "hello", "id": hello_id, "error": error})
        return 1
    host.reply({"op": "hello", "id": hello_id, "ok": True})
    while True:
        try:
            request = host.recv()
        except EOFError:
            return 0
        request_id = request.get("id")
        op = request.get("op")
        if op == "stop":
            host.reply({"op": "stopped", "id": request_id})
            return 0
        if op != "decide":
            host.send({"op": "error", "id": request_id, "error": {"kind": "protocol", "reason": f"unknown op {op!r}"}})
            continue
        try:
            action = agent(request.get("observation"), request.get("configuration"))
        except BaseException as exc:  # noqa: BLE001 - SystemExit and friends from bots are faults too
            host.reply({"op": "reply", "id": request_id, "error": describe_exception(exc)})
            continue
        message = {"op": "reply", "id": request_id, "action": action}
        try:
            frame = encode_frame(message)
        except NOT_JSON_ERRORS as exc:
            error = {"kind": "illegal", "reason": not_json_reason(action, exc)}
            host.reply({"op": "reply", "id": request_id, "error": error})
            continue
        if len(frame) - HEADER.size > host.frame_bytes:
            # the referee would refuse the frame as a protocol error: it is an illegal action
            error = {"kind": "illegal", "reason": f"agent returned {len(frame) - HEADER.size} bytes of JSON; a reply may be at most {host.frame_bytes}"}
            host.reply({"op": "reply", "id": request_id, "error": error})
            continue
        host.reply(message, frame=frame)


def _out_of_cpu(signum, frame) -> None:
    # Exit as if killed by SIGXCPU (the default action would also try a core dump).
    os._exit(128 + signal.SIGXCPU)


#: the zygote's answer to a fork request: the game process's pid (or -errno), then b"." once its
#: intermediate process is reaped (the game process is then the supervisor's child)
ZYGOTE_ANSWER = struct.Struct(">i1s")
#: how long the supervisor waits for the zygote's answer before it starts a new zygote
ZYGOTE_SECONDS = 5.0
#: standard modules the zygote imports for the game processes (bots commonly use them);
#: never bot code. A bot's own module of one of these names is not imported (the standard one is).
#: Each costs its import once a seat (in the zygote) instead of once a game, and once a seat
#: for a bot that never imports it: ``dataclasses`` is not here (with ``inspect``, ``ast``,
#: ``dis`` and ``tokenize`` it cost 5 ms of CPU a seat in the image).
ZYGOTE_MODULES = ("collections", "copy", "enum", "functools", "heapq", "itertools",
                  "math", "operator", "random", "re", "typing", "_thread", "resource", "ctypes")


def _inherited_state():
    """What a game process inherits from the zygote that another process of its uid could change.

    ``prlimit``, ``setpriority``, ``sched_setaffinity``, ``sched_setscheduler`` and
    ``ioprio_set`` work on any process of the same uid: a bot could set them on the zygote to
    pass bits to the next game. The game process compares them with the
    zygote's own at its start (kept in the zygote's memory, which no bot can write).
    """
    import resource

    limits = {name: resource.getrlimit(getattr(resource, name)) for name in sorted(dir(resource)) if name.startswith("RLIMIT_")}
    return limits, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getaffinity(0), os.sched_getscheduler(0), _ioprio()


def _ioprio() -> int | None:
    if SYS_IOPRIO_GET is None:
        return None
    try:
        return _libc().syscall(SYS_IOPRIO_GET, IOPRIO_WHO_PROCESS, 0)
    except (OSError, AttributeError):
        return None


def _restore_state(state) -> str | None:
    """Put back what ``_inherited_state`` recorded; what could not be put back, or None."""
    import resource

    limits, nice, cpus, policy, ioprio = state[:5]
    for name, value in limits.items():
        if resource.getrlimit(getattr(resource, name)) != value:
            try:
                resource.setrlimit(getattr(resource, name), value)
            except (OSError, ValueError):
                return f"{name} of the zygote was changed"
    if os.getpriority(os.PRIO_PROCESS, 0) != nice:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except OSError:
            return "the zygote's nice value was changed"
    if os.sched_getaffinity(0) != cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            return "the zygote's CPU affinity was changed"
    if os.sched_getscheduler(0) != policy:
        try:
            os.sched_setscheduler(0, policy, os.sched_param(0))
        except OSError:
            return "the zygote's scheduling policy was changed"
    if ioprio is not None and _ioprio() != ioprio:
        if _libc().syscall(SYS_IOPRIO_SET, IOPRIO_WHO_PROCESS, 0, ioprio) != 0 or _ioprio() != ioprio:
            return "the zygote's I/O priority was changed"
    return None


def zygote(control: _socket.socket, args) -> None:
    """The zygote: forks one game process per request of the supervisor, never runs bot code.

    Started by the supervisor before the first game (a new interpreter). It
    imports what a game process needs, makes itself non-dumpable, then reads
    requests from its socket to the supervisor only: the game's ``hello`` id
    and two descriptors (the game's channel and the log pipe). It reads
    nothing else, so no game leaves anything in it: every game process is a
    copy of the zygote as it was before the first game. It double-forks, so
    the game process is the supervisor's child (its subreaper), and answers
    ``ZYGOTE_ANSWER``.
    """
    import importlib

    for name in ZYGOTE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import gc

    libc = _libc()
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    # Its name in /proc (``comm``) says what it is, forked or spawned (a forked one has the
    # supervisor's command line); each game process takes back the interpreter's name.
    with open("/proc/self/comm", "rb") as handle:
        name = handle.read().strip()
    libc.prctl(PR_SET_NAME, ZYGOTE_NAME, 0, 0, 0)
    state = (*_inherited_state(), name)
    # What is imported now never gets collected: a game process's collections skip it, so
    # they do not write to (and copy) the pages it shares with the zygote.
    gc.freeze()
    control.setblocking(True)
    while True:
        try:
            message, fds, _, _ = recv_fds(control, 64, 2)
        except OSError:
            os._exit(2)
        if not message:
            os._exit(0)  # the supervisor is gone
        if len(fds) != 2:
            os._exit(2)
        words = message.split()
        try:
            hello_id = int(words[0])
        except (ValueError, IndexError):
            os._exit(2)
        park = words[1:] == [b"park"]
        try:
            middle = os.fork()
        except OSError as exc:
            middle, answer = None, -(exc.errno or errno.EAGAIN)
        if middle == 0:
            try:
                game = os.fork()
            except OSError as exc:
                game = -(exc.errno or errno.EAGAIN)
            if game == 0:
                _game_process(fds, hello_id, args, state, libc, park)
            try:
                control.sendall(struct.pack(">i", game))
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        if middle is not None:
            try:
                os.waitpid(middle, 0)
            except ChildProcessError:
                pass
            control.sendall(b".")
        else:
            control.sendall(ZYGOTE_ANSWER.pack(answer, b"."))


def _game_process(fds: list[int], hello_id: int, args, state, libc, park: bool = False) -> None:
    """A game process forked by the zygote: its own descriptors only, then serve the game.

    ``park`` (a warm seat's first game before its bot arrived, or the next game's spare forked
    during a game, ``Supervisor.prepare_spare``): it waits for the supervisor's ``load`` (which
    may carry the game's hello id) before anything else, non-dumpable as the zygote is, so that
    no bot running meanwhile can read or write it; the checks of what it inherited come after."""
    channel, log = fds
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(channel, 3)
        os.closerange(4, 65536)  # the zygote's socket too
        libc.prctl(PR_SET_NAME, state[5], 0, 0, 0)  # the interpreter's name, not the zygote's
        sock = _socket.socket(fileno=3)
        sock.setblocking(True)
        host = Host(sock, args.frame_bytes)
        if park:
            try:
                load = host.recv()
            except (EOFError, OSError, FrameError):
                os._exit(0)  # discarded before a bot came (a warm seat, or a spare at the seat's end)
            if load.get("op") != "load":
                os._exit(2)
            given = load.get("id", hello_id)
            hello_id = given if isinstance(given, int) and not isinstance(given, bool) else hello_id
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a new interpreter is: its own /proc files
        changed = _restore_state(state)
        if changed is not None:
            error = {"kind": "exception", "reason": f"exception at import: {changed} by an earlier game"}
            host.reply({"op": "hello", "id": hello_id, "error": error})
            os._exit(1)
        code = serve(host, args.bot, hello_id, args.thread_stack_bytes, args.code)
    except (OSError, EOFError, FrameError):
        code = 2
    except BaseException:  # noqa: BLE001 - never return into the zygote's loop
        code = 2
    os._exit(code)


#: how ``encode_frame`` begins the frames the supervisor relays most: it needs their op only
_FAST_OPS = ((b'{"op":"decide",', {"op": "decide"}), (b'{"op":"reply",', {"op": "reply"}))
#: the id such a frame carries right after its op, as ``encode_frame`` writes it
_RELAYED_ID = re.compile(rb'\{"op":"(?:decide|reply)","id":(\d{1,18})[,}]')


def relayed_id(raw: bytes) -> int | None:
    """The id of a ``decide`` or ``reply`` frame (header included) as ``encode_frame`` wrote it;
    None for any other frame. The supervisor reads no more of what it relays than this."""
    found = _RELAYED_ID.match(raw, HEADER.size)
    return int(found.group(1)) if found else None


class FrameBuffer:
    """Frames cut out of a byte stream, raw (header included) and parsed.

    The supervisor reads only the op of what it relays: a ``decide`` or ``reply`` frame
    (known by how ``encode_frame`` begins it) is not parsed here but by its receiver, which
    checks it whole (the referee refuses a reply that is not a valid frame).
    """

    def __init__(self, cap: int):
        self.cap = cap
        self.data = bytearray()

    def frames(self):
        """Yield ``(raw, message_or_None)``; ``message`` is None for a body that is not a JSON object.

        Raises FrameError for a header over the cap (its first bytes in ``args[1]``).
        """
        while len(self.data) >= HEADER.size:
            (size,) = HEADER.unpack_from(self.data)
            if size > self.cap:
                raise FrameError(f"frame of {size} bytes exceeds the cap of {self.cap}", bytes(self.data[:HEADER.size + 12]))
            end = HEADER.size + size
            if len(self.data) < end:
                return
            raw = bytes(self.data[:end])
            del self.data[:end]
            for prefix, known in _FAST_OPS:
                if raw.startswith(prefix, HEADER.size):
                    yield raw, known
                    break
            else:
                try:
                    message = decode_body(raw[HEADER.size:])
                except FrameError:
                    message = None
                yield raw, message


def _descendants(skip: frozenset[int] = frozenset()) -> list[int]:
    """Every live descendant of this process (orphans come back to it: it is their subreaper).

    ``skip`` (the zygote, the spare) is left out of the list; their children are not.
    """
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as handle:
                    children = [int(c) for c in handle.read().split()]
            except (OSError, ValueError):
                continue
            found += [c for c in children if c not in skip]
            todo += children
    return found


def _live(pids: list[int]) -> list[int]:
    """``pids`` without the zombies (dead, only waiting to be reaped) and the gone."""
    found = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2:][:1] != b"Z":
            found.append(pid)
    return found


def _kill_and_wait(pids: list[int], deadline: float) -> None:
    """SIGKILL each of ``pids`` and wait until each has exited (or ``deadline``, monotonic).

    Waits on a pidfd of each, not in a loop: a killed process exits only once it gets a core,
    and looking again and again until then (the ``/proc`` walk of ``_descendants``) cost the
    supervisor 0.3-2.9 ms of CPU at each game's end on a busy machine (2-35 rounds)."""
    fds = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:  # gone already, or no pidfd here: killed by its number, the caller looks again
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            continue
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass  # exited meanwhile: its pidfd is readable
        fds.append(fd)
    try:
        while fds:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            for fd in select.select(fds, [], [], left)[0]:  # readable: the process has exited
                fds.remove(fd)
                os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)


def _wipe(root: str) -> None:
    """Delete everything under ``root`` (also what the bot made unreadable), and its extended attributes."""
    try:
        names = os.listdir(root)
    except OSError:
        names = []
    for name in names:
        path = os.path.join(root, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    os.chmod(path, 0o700)
                except OSError:
                    pass
                _wipe(path)
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError:
            pass
    try:
        for attribute in os.listxattr(root):
            os.removexattr(root, attribute)
    except OSError:
        pass


class Supervisor:
    """Runs one game process per game and relays frames between it and the referee."""

    def __init__(self, sock: _socket.socket, args):
        self.ref = sock
        self.ref_in = FrameBuffer(args.frame_bytes)
        self.frame_bytes = args.frame_bytes
        self.log_budget = args.log_bytes
        self.log_truncated = False
        self.bot_dir = args.bot
        self.label = args.label
        self.thread_stack = args.thread_stack_bytes
        self.code_file = args.code
        self.jail = args.jail
        self.scrub = list(args.scrub)
        self.environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        # The scrub folders as the game processes find them at the start of each game.
        self.scrub_state = {}
        for path in self.scrub:
            try:
                st = os.stat(path)
                self.scrub_state[path] = (st.st_mode & 0o7777, st.st_atime_ns, st.st_mtime_ns)
            except OSError:
                pass
        self.child: int | None = None
        self.child_status: int | None = None
        self.child_sock: _socket.socket | None = None
        self.child_in = FrameBuffer(args.frame_bytes)
        self.child_out = bytearray()
        self.child_broken = False
        self.log_fd: int | None = None
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.frozen = False
        #: the id of the last decision handed to the game (``relayed_id``): a reply to an earlier one is late
        self.decide_id: int | None = None
        self.use_zygote = not args.no_zygote
        self.zygote: int | None = None
        self.zygote_sock: _socket.socket | None = None
        self.args = args
        #: the next game's process, forked ahead and parked (``prepare_spare``): (pid, channel, log pipe's read end)
        self.spare: tuple[int, _socket.socket, int] | None = None
        #: the referee said another game follows the current one: fork its spare after this game's hello
        self.want_spare = False
        #: the hello id of the game running in a spare that has not said hello yet (``child_gone``)
        self.spare_hello: int | None = None
        #: a spare asked of the zygote, not answered yet: (channel, log pipe's read end, answer so far)
        self.spare_pending: tuple[_socket.socket, int, bytes] | None = None
        #: nothing read from the referee yet: a zygote started now is forked from this process
        #: (``fork_zygote``), whose memory then holds no frame, bot file or game data
        self.pristine = True

    # -- the game's processes -------------------------------------------

    def start_game(self, hello_id: int, park: bool = False) -> None:
        """Start a fresh game process for the next game; it imports the bot and says hello.

        The zygote forks it (see ``zygote``); when the zygote cannot (a bot of an
        earlier game killed it and a new one fails too), a new interpreter is spawned.
        ``park`` (a warm seat's first game, before its bot arrived): the process is forked
        and set up, then waits for ``load`` (``load_parked``) before it imports the bot; when
        it cannot be forked, nothing is started and nothing is reported (the load starts one).
        """
        if not park and self.take_spare(hello_id):
            return
        self.spare_hello = None
        parent, child = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        read_end, write_end = os.pipe()
        try:
            pid = self.fork_game(hello_id, child.fileno(), write_end, park) if self.use_zygote else None
            if pid is None and park:
                raise OSError(errno.ECHILD, "no zygote to fork a parked game process")
            self.child = self.spawn_game(hello_id, child.fileno(), write_end) if pid is None else pid
        except OSError as exc:
            # EAGAIN: the process limit (the previous game's processes are all gone by now)
            os.close(read_end)
            parent.close()
            self.child = None
            if park:
                return  # (the finally clause still closes the child's ends)
            error = describe_exception(exc)
            error["reason"] = f"exception at import: cannot start the game's process: {error['reason']}"
            self.send_referee(encode_frame({"op": "hello", "id": hello_id, "error": error}))
            self.child = None
        finally:
            os.close(write_end)
            child.close()
        if self.child is None:
            return
        self.child_status = None
        self.child_sock = parent
        parent.setblocking(False)
        self.child_in = FrameBuffer(self.frame_bytes)
        self.child_out = bytearray()
        self.child_broken = False
        os.set_blocking(read_end, False)
        self.log_fd = read_end
        self.frozen = False

    def child_argv(self, role: str, hello_id: int = 0) -> list[str]:
        return [sys.executable, *interpreter_options(os.path.abspath(__file__)), role,
                "--bot", self.bot_dir, "--fd", "3", "--hello-id", str(hello_id),
                "--frame-bytes", str(self.frame_bytes), "--label", self.label,
                "--thread-stack-bytes", str(self.thread_stack), *(["--code", self.code_file] if self.code_file else [])]

    def spawn(self, argv: list[str], fds: tuple[int, int, int, int]) -> int:
        """posix_spawn ``argv`` with exactly ``fds`` as its descriptors 0-3."""
        # Above the descriptors they are copied to (a dup2 onto itself would keep close-on-exec).
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds]
        try:
            return os.posix_spawn(sys.executable, argv, self.environment,
                                  file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(high)])
        finally:
            for fd in high:
                os.close(fd)

    def spawn_game(self, hello_id: int, channel: int, log: int) -> int:
        """A game process as a new interpreter (``--child``): the way without a zygote."""
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            return self.spawn(self.child_argv("--child", hello_id), (devnull, log, log, channel))
        finally:
            os.close(devnull)

    def start_zygote(self) -> None:
        """Start the zygote, which forks the game processes (see ``zygote``): forked from this
        process while it is ``pristine`` (before it read anything from the referee: its memory
        holds its arguments and nothing of a bot or a game), else a new interpreter (a zygote
        killed by a bot: this process has relayed frames since)."""
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            if self.pristine:
                self.zygote = self.fork_zygote(devnull, theirs, ours)
            else:
                self.zygote = self.spawn(self.child_argv("--zygote"), (devnull, devnull, devnull, theirs.fileno()))
            self.zygote_sock = ours
        except OSError:
            ours.close()
            raise
        finally:
            os.close(devnull)
            theirs.close()

    def fork_zygote(self, devnull: int, theirs: _socket.socket, ours: _socket.socket) -> int:
        """The zygote as a fork of this process, set up as ``start_zygote``'s new interpreter is:
        descriptors 0-2 ``/dev/null`` and 3 its socket, every other closed, the same environment
        and ``sys.argv``. Saves an interpreter start a seat (the zygote's imports are the same)."""
        argv = self.child_argv("--zygote")
        pid = os.fork()
        if pid != 0:
            return pid
        try:
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.dup2(theirs.fileno(), 3)
            os.closerange(4, 65536)
            # Their descriptors are closed or reused now: the objects must not close them again.
            for sock in (theirs, ours, self.ref):
                sock.detach()
            os.environ.clear()
            os.environ.update(self.environment)
            sys.argv = argv[argv.index("-c"):]
            zygote(_socket.socket(fileno=3), self.args)
        finally:
            os._exit(0)
        return 0  # (never reached: the zygote exits)

    def stop_zygote(self) -> None:
        if self.spare_pending is not None:  # its answer will not come
            parent, read_end, _ = self.spare_pending
            self.spare_pending = None
            parent.close()
            os.close(read_end)
        if self.zygote is not None:
            try:
                os.kill(self.zygote, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self.zygote, 0)
            except OSError:
                pass
            self.zygote = None
        if self.zygote_sock is not None:
            self.zygote_sock.close()
            self.zygote_sock = None

    def prepare_spare(self) -> None:
        """Have the zygote fork the next game's process now, parked (as a warm seat's first one: set
        up, waiting for ``load``, non-dumpable until then), so that the next ``game`` only ends this
        game and hands the spare its bot: the zygote's forks are off the next game's start. The
        request is sent and this returns; the answer is read by the loop (``spare_answer``), and
        always before the game is frozen again or ended, so no freeze or kill finds a fork under
        way. The spare runs no bot code before ``load``, which it gets only after every process of
        this game is killed and the writable storage wiped; what a bot of this game can do to it
        (signals, ``prlimit`` and friends) kills it (the next game then forks one as before) or is
        checked and put back at its ``load``, as for any process of the zygote."""
        if self.spare is not None or self.spare_pending is not None or not self.use_zygote or self.child is None:
            return
        parent, child = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
        read_end, write_end = os.pipe()
        try:
            if self.zygote is None:
                self.start_zygote()
            os.kill(self.zygote, signal.SIGCONT)  # the freeze (or a bot) may have stopped it
            send_fds(self.zygote_sock, [b"0 park\n"], [child.fileno(), write_end])
        except OSError:
            parent.close()
            os.close(read_end)
            self.stop_zygote()
            return
        finally:
            os.close(write_end)
            child.close()
        self.spare_pending = (parent, read_end, b"")

    def spare_answer(self, block: bool) -> None:
        """Read the zygote's answer to ``prepare_spare`` (what is there, or all of it when ``block``):
        complete, the spare is ready; a zygote that failed leaves no spare."""
        if self.spare_pending is None:
            return
        parent, read_end, answer = self.spare_pending
        try:
            if block:
                os.kill(self.zygote, signal.SIGCONT)
            self.zygote_sock.settimeout(ZYGOTE_SECONDS)
            while len(answer) < ZYGOTE_ANSWER.size:
                chunk = self.zygote_sock.recv(ZYGOTE_ANSWER.size - len(answer))
                if not chunk:
                    raise EOFError("the zygote is gone")
                answer += chunk
                if not block:
                    break
        except (OSError, EOFError, TypeError, AttributeError):
            self.spare_pending = None
            parent.close()
            os.close(read_end)
            self.stop_zygote()
            return
        if len(answer) < ZYGOTE_ANSWER.size:
            self.spare_pending = (parent, read_end, answer)
            return
        self.spare_pending = None
        pid, done = ZYGOTE_ANSWER.unpack(answer)
        if done != b"." or pid <= 0:
            parent.close()
            os.close(read_end)
            if done != b".":
                self.stop_zygote()
            return
        parent.setblocking(False)
        os.set_blocking(read_end, False)
        self.spare = (pid, parent, read_end)

    def take_spare(self, hello_id: int) -> bool:
        """Start the next game in the spare (its ``load`` carries the game's hello id); False when
        there is none (never prepared, or a bot of the game before killed it)."""
        self.spare_answer(block=True)
        self.reap()
        if self.spare is None:
            return False
        pid, sock, read_end = self.spare
        self.spare = None
        try:
            os.kill(pid, signal.SIGCONT)  # a bot of the game before may have stopped it
        except OSError:
            pass
        self.child, self.child_status, self.child_sock = pid, None, sock
        self.spare_hello = hello_id
        self.child_in = FrameBuffer(self.frame_bytes)
        self.child_out = bytearray(encode_frame({"op": "load", "id": hello_id}))
        self.child_broken = False
        self.log_fd = read_end
        self.frozen = False
        self.to_child()
        return True

    def drop_spare(self) -> None:
        self.spare_answer(block=True)
        if self.spare is None:
            return
        pid, sock, read_end = self.spare
        self.spare = None
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
        sock.close()
        os.close(read_end)

    def load_parked(self) -> None:
        """The bot arrived (``load``): the parked first game's process imports it now, or, when
        there is none (or it died while it waited), a fresh one is started as at any game."""
        self.reap()
        if self.child is not None and self.child_status is None and self.child_sock is not None:
            self.child_out += encode_frame({"op": "load"})
            self.to_child()
            return
        if self.child is not None:
            self.end_game()
        self.start_game(0)

    def fork_game(self, hello_id: int, channel: int, log: int, park: bool = False) -> int | None:
        """Have the zygote fork the game process; its pid, or None when no zygote can.

        Raises OSError when the zygote's fork failed (the process limit).
        """
        self.spare_answer(block=True)  # its answer first: the zygote answers in order
        for _ in range(2):  # a bot of an earlier game may have killed it: one new zygote
            try:
                if self.zygote is None:
                    self.start_zygote()
                os.kill(self.zygote, signal.SIGCONT)  # the freeze (or a bot) may have stopped it
                send_fds(self.zygote_sock, [b"%d%s\n" % (hello_id, b" park" if park else b"")], [channel, log])
                self.zygote_sock.settimeout(ZYGOTE_SECONDS)
                answer = b""
                while len(answer) < ZYGOTE_ANSWER.size:
                    chunk = self.zygote_sock.recv(ZYGOTE_ANSWER.size - len(answer))
                    if not chunk:
                        raise EOFError("the zygote is gone")
                    answer += chunk
            except (OSError, EOFError):
                self.stop_zygote()
                continue
            pid, done = ZYGOTE_ANSWER.unpack(answer)
            if done != b".":
                self.stop_zygote()
                continue
            if pid < 0:
                raise OSError(-pid, os.strerror(-pid))
            return pid
        return None

    def end_game(self) -> None:
        """Kill every process of the game, forward its last prints, wipe what it could write."""
        self.spare_answer(block=True)  # no kill while the zygote forks: the spare is known first
        self.kill_all()
        self.drain_log(final=True)
        if self.log_fd is not None:
            os.close(self.log_fd)
            self.log_fd = None
        if self.child_sock is not None:
            self.child_sock.close()  # frames (and passed descriptors) still queued go with it
            self.child_sock = None
        self.child = None
        self.frozen = False
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        for path in self.scrub:
            _wipe(path)
            state = self.scrub_state.get(path)
            if state is not None:
                try:
                    os.chmod(path, state[0])
                    os.utime(path, ns=state[1:])
                except OSError:
                    pass
        if self.jail != "none":  # its own IPC namespace or uid: every object found is the bot's
            self.remove_sysv_ipc()
            _keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_KEYRING)
            _keyctl(KEYCTL_CLEAR, KEY_SPEC_USER_SESSION_KEYRING)

    def signal_all(self, signum: int) -> bool:
        """Send ``signum`` to every process of the game; False when there is none.

        With ``kill(-1)`` (``pidns``/``uid``) the zygote gets it too: only a freeze
        uses this there, and the zygote is continued before it forks again.
        """
        if self.jail != "none":
            try:
                os.kill(-1, signum)  # every process we may signal but ourselves (and PID 1)
                return True
            except ProcessLookupError:
                return False
            except PermissionError:
                return False
        pids = _descendants(skip=self.keep())
        for pid in pids:
            try:
                os.kill(pid, signum)
            except OSError:
                pass
        return bool(pids)

    def kill_all(self) -> None:
        """Kill every process of the game, but not the zygote (nor the supervisor)."""
        deadline = time.monotonic() + 5.0
        if self.jail == "none":
            # Stop them all first, so none forks while the tree is walked.
            for _ in range(3):
                self.signal_all(signal.SIGSTOP)
        elif self.zygote is not None:
            # kill(-1) would kill the zygote: stop everything (no process can fork any
            # more), then kill every descendant but the zygote, until none is left. Every
            # process of the game is a descendant: orphans come back to the supervisor.
            while time.monotonic() < deadline:
                self.signal_all(signal.SIGSTOP)
                pids = _live(_descendants(skip=self.keep()))
                if not pids:
                    break
                _kill_and_wait(pids, deadline)
                self.reap()
            self.reap()
            for pid in self.keep():
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass
            return
        while self.signal_all(signal.SIGKILL) and time.monotonic() < deadline:
            self.reap()
            time.sleep(0.001)
        self.reap()
        for pid in self.keep():
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    def keep(self) -> frozenset[int]:
        """The processes a game's end does not kill: the zygote and the spare (neither ran bot code)."""
        return frozenset(pid for pid in (self.zygote, self.spare[0] if self.spare else None) if pid is not None)

    def finish(self) -> None:
        """The seat's end: the last game's processes, the spare and the zygote go."""
        self.end_game()
        self.drop_spare()
        self.stop_zygote()

    def leave(self) -> None:
        """Exit at the seat's end (``stop``, or the referee gone), every process of the sandbox with it.

        PID 1 of its own namespace (the host of a container) just exits: the kernel then kills
        every other process of the namespace (SIGKILL, stopped ones too; none outlives it), and
        the container, its ``/tmp`` and IPC namespace with it, is removed, so ``finish``'s kills,
        wipe and IPC cleanup, for a next game that never comes, would be work for nothing (about
        1 ms of CPU a seat). Elsewhere (in bubblewrap, whose own init outlives the host; a bare
        process) ``finish`` ends them first."""
        if os.getpid() != 1:
            self.finish()
        os._exit(0)

    def freeze(self) -> None:
        self.spare_answer(block=True)  # no freeze while the zygote forks
        if not self.frozen and self.child is not None:
            self.signal_all(signal.SIGSTOP)
            self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            self.signal_all(signal.SIGCONT)
            self.frozen = False

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.child:
                self.child_status = status
            elif self.spare is not None and pid == self.spare[0]:  # killed by a bot: the next game forks one
                self.spare[1].close()
                os.close(self.spare[2])
                self.spare = None
            elif pid == self.zygote:  # killed by a bot: a new one starts for the next game
                self.zygote = None
                if self.zygote_sock is not None:
                    self.zygote_sock.close()
                    self.zygote_sock = None

    def remove_sysv_ipc(self) -> None:
        """Remove the SysV shared memory, message queues and semaphores of this IPC namespace (or uid)."""
        try:
            libc = _libc()
        except OSError:
            return
        uid = os.getuid()
        for kind, remove in (("shm", libc.shmctl), ("msg", libc.msgctl), ("sem", None)):
            try:
                with open(f"/proc/sysvipc/{kind}") as handle:
                    lines = handle.read().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                try:
                    ident = int(fields[1])
                    cuid = int(fields[9 if kind == "shm" else 8 if kind == "msg" else 6])
                except (IndexError, ValueError):
                    continue
                if self.jail == "uid" and cuid != uid:
                    continue  # the host's IPC namespace: only the seat's own objects
                if remove is None:
                    libc.semctl(ident, 0, IPC_RMID)
                else:
                    remove(ident, IPC_RMID, None)

    # -- relaying -------------------------------------------------------

    def send_referee(self, data: bytes) -> None:
        self.ref.sendall(data)

    def drain_log(self, final: bool = False) -> None:
        """Forward what the game printed (everything in the pipe now) as capped log frames."""
        if self.log_fd is None:
            return
        while True:
            try:
                chunk = os.read(self.log_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                if final:
                    self.send_log(self.decoder.decode(b"", final=True))
                return
            self.send_log_bytes(chunk)

    def send_log_bytes(self, chunk: bytes) -> None:
        if self.log_budget > 0:
            piece = chunk[:self.log_budget]
            self.log_budget -= len(piece)
            self.send_log(self.decoder.decode(piece, final=self.log_budget == 0))
            chunk = chunk[len(piece):]
        if chunk and not self.log_truncated:
            self.log_truncated = True
            self.send_referee(encode_frame({"op": "log", "truncated": True}))
        # Past the cap the pipe is still drained so a chatty bot never blocks.

    def send_log(self, text: str) -> None:
        if text:
            self.send_referee(encode_frame({"op": "log", "data": text}))

    def from_child(self) -> None:
        try:
            chunk = self.child_sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.child_gone()
            return
        self.child_in.data += chunk
        try:
            for raw, message in self.child_in.frames():
                self.drain_log()  # the prints made before this frame go first
                self.send_referee(raw)
                if message is not None and message.get("op") in ("reply", "hello"):
                    self.spare_hello = None
                    if not self.late(raw):
                        self.freeze()
                    if message.get("op") == "hello" and message.get("ok") is True and self.want_spare:
                        self.want_spare = False
                        self.prepare_spare()
        except FrameError as exc:
            # Pass the oversized header on: the referee refuses it as the protocol error it is.
            self.drain_log()
            self.send_referee(exc.args[1])
            self.child_broken = True
            self.freeze()

    def late(self, raw: bytes) -> bool:
        """A reply to a decision before the last one handed to the game (the referee gave up on it
        and drops it): the game holds a newer request, so it is not frozen on this reply, or the
        answer the referee waits for would never come. Any other reply (one the referee can take,
        or one this cannot read, such as a frame forged by bot code) freezes the game, so a bot
        gains no time by sending early replies of its own."""
        reply, last = relayed_id(raw), self.decide_id
        return reply is not None and last is not None and reply < last

    def to_child(self) -> None:
        try:
            sent = self.child_sock.send(self.child_out)
        except BlockingIOError:
            return
        except OSError:
            self.child_out.clear()
            return
        del self.child_out[:sent]

    def child_gone(self) -> None:
        """The game process closed its channel: end as it ended (its exit code or signal).

        A spare that died before its hello (a bot of the game before signalled it, and it died
        only once taken) is replaced by a freshly forked process, once: its death is not the
        next game's."""
        if self.spare_hello is not None:
            hello_id, self.spare_hello = self.spare_hello, None
            self.end_game()
            self.start_game(hello_id)
            return
        deadline = time.monotonic() + 1.0
        while self.child_status is None and time.monotonic() < deadline:
            self.reap()
            if self.child_status is None:
                time.sleep(0.005)
        status = self.child_status
        self.finish()
        if status is None:
            os._exit(2)  # closed its channel but kept running
        if os.WIFSIGNALED(status):
            signum = os.WTERMSIG(status)
            if os.getpid() != 1:  # PID 1 cannot kill itself from inside its namespace
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
            os._exit(128 + signum)
        os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 2)

    def from_referee(self) -> None:
        chunk = self.ref.recv(1 << 16)  # (a 1 MiB buffer would be mapped and unmapped at every frame)
        if not chunk:
            self.leave()
        self.ref_in.data += chunk
        for raw, message in self.ref_in.frames():
            if len(raw) - HEADER.size > self.frame_bytes or message is None:
                raise FrameError("bad frame from the referee")
            op = message.get("op")
            if op == "game":
                self.end_game()
                self.want_spare = message.get("spare") is True
                self.start_game(message.get("id"))
            elif op == "spare":
                self.prepare_spare()  # another game follows the first: its process ahead
            elif op == "stop":
                # The game frozen, what it printed is all in the pipe: the referee gets it and goes
                # on at once, while the sandbox ends its processes (the container is removed anyway).
                self.freeze()
                self.drain_log(final=True)
                self.send_referee(encode_frame({"op": "stopped", "id": message.get("id")}))
                self.leave()
            elif op == "freeze":
                self.freeze()
            elif self.child_sock is not None and not self.child_broken:
                if op == "decide":
                    self.decide_id = relayed_id(raw)
                    self.thaw()
                self.child_out += raw
                # Hand it on now (the socket almost always takes it whole), not one more select later.
                self.to_child()

    def run(self) -> None:
        if self.child is None:
            self.start_game(0)
        self.pristine = False
        while True:
            readers = [self.ref]
            writers = []
            if self.child_sock is not None and not self.child_broken:
                readers.append(self.child_sock)
                if self.child_out:
                    writers.append(self.child_sock)
            if self.log_fd is not None:
                readers.append(self.log_fd)
            if self.spare_pending is not None and self.zygote_sock is not None:
                readers.append(self.zygote_sock)
            readable, writable, _ = select.select(readers, writers, [], 1.0)
            if self.spare_pending is not None and self.zygote_sock in readable:
                self.spare_answer(block=False)
            self.reap()
            if self.log_fd in readable:
                self.drain_log()
            if self.child_sock is not None and self.child_sock in readable:
                self.from_child()
            if self.child_sock is not None and self.child_sock in writable:
                self.to_child()
            if self.ref in readable:
                self.from_referee()


CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _prctl(libc, *args) -> int:
    import ctypes

    return libc.prctl(*[ctypes.c_ulong(a) if isinstance(a, int) else a for a in args])


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


#: gVisor's /proc/version (its Sentry reports this fixed text)
GVISOR_VERSION = "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016"


def _in_gvisor() -> bool:
    """True in gVisor (runsc): there every process costs host stub processes and threads that
    count against the container's ``pids_limit``, and the zygote's two extra processes make
    the sandbox hit it (runsc then kills the whole container). One interpreter per game there."""
    try:
        with open("/proc/version") as handle:
            return handle.read().startswith(GVISOR_VERSION)
    except OSError:
        return False


def confine(args) -> None:
    """The process sandbox's last steps, done by the supervisor on itself before any bot code runs.

    1. ``--tmpfs``: a mount namespace of its own (bubblewrap keeps CAP_SYS_ADMIN
       for this, in the sandbox's user namespace only) with a tmpfs over each
       writable place, capped in bytes *and inodes* (``nr_inodes``: bubblewrap's
       own ``--size`` caps bytes only, and millions of empty files are kernel memory);
    2. ``--drop-caps``: every capability gone (bounding and ambient sets too);
    3. ``--seccomp-fd``: no new privileges, and the seccomp filter (built by the
       worker with libseccomp, ``sandbox/seccomp.py``) installed on itself, so
       every game process inherits it.
    Raises OSError on any failure: the sandbox is not started half-confined.
    """
    if not (args.tmpfs or args.drop_caps or args.seccomp_fd is not None):
        return
    import ctypes

    libc = _libc()
    if args.tmpfs:
        _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
        for path in args.tmpfs:
            mode = os.stat(path).st_mode & 0o7777
            options = f"size={args.tmpfs_bytes},nr_inodes={args.tmpfs_inodes},mode={mode:o}".encode()
            _check(libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options), f"mounting a tmpfs on {path}")
    if args.drop_caps:
        for cap in range(64):
            if _prctl(libc, PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                if ctypes.get_errno() == errno.EINVAL:
                    break  # past the last capability this kernel knows
                _check(-1, f"dropping capability {cap} from the bounding set")
        _check(_prctl(libc, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing ambient capabilities")
        header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()
        _check(libc.capset(header, data), "capset")
        with open("/proc/self/status") as handle:
            held = [line.split()[0] for line in handle if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"))
                    and int(line.split()[1], 16) != 0]
        if held:
            raise OSError(errno.EPERM, f"capabilities still held after dropping them: {', '.join(held)}")
    if args.seccomp_fd is not None:
        program = b""
        while chunk := os.read(args.seccomp_fd, 1 << 16):
            program += chunk
        os.close(args.seccomp_fd)
        if not program or len(program) % 8:
            raise OSError(errno.EINVAL, f"seccomp filter of {len(program)} bytes is not a BPF program")

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buffer = ctypes.create_string_buffer(program, len(program))
        fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        _check(_prctl(libc, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
        _check(_prctl(libc, PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "installing the seccomp filter")


def become_supervisor(args) -> None:
    """Lock the supervisor down before any bot code runs beside it."""
    try:
        libc = _libc()
        # Not dumpable: same-uid bot code cannot ptrace it or open /proc/<pid>/mem, fd/, environ.
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        # Orphaned bot processes come back to it: it reaps them and finds them all.
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    import resource

    # No POSIX message queue can be created: its name would outlive the game's processes.
    try:
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
    except (OSError, ValueError):
        pass
    signal.signal(signal.SIGXCPU, _out_of_cpu)
    for fd in (0, 1):
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, fd)
        os.close(devnull)


#: the host's options (the backends write its command line): option -> (kind, default); a kind is
#: ``str``, ``int``, ``flag`` (no value) or ``list`` (repeatable, a value each); ``--fd`` or
#: ``--connect`` is required, and ``--bot``
OPTIONS = {
    "--bot": ("str", None),  # directory holding main.py
    "--fd": ("int", None),  # inherited socket file descriptor (or --connect)
    "--connect": ("str", None),  # path of the referee's Unix socket (or --fd)
    "--frame-bytes": ("int", 1 << 20),
    "--log-bytes": ("int", 64 * 1024),
    # Only shown in `ps`: tells operators (and leak checks) which match a process serves.
    "--label": ("str", ""),
    # A pre-started (warm) sandbox: the bot's files arrive after start; wait for them.
    "--wait-load": ("flag", False),
    "--jail": ("str", None),  # pidns, uid or none (see the module's docstring)
    "--scrub": ("list", None),  # a folder the bot may write: emptied after each game
    # The process sandbox's confinement, done by the supervisor before any bot code runs (see confine).
    "--tmpfs": ("list", []),  # mount a size- and inode-capped tmpfs here
    "--tmpfs-bytes": ("int", 16 << 20),
    "--tmpfs-inodes": ("int", 4096),
    "--drop-caps": ("flag", False),  # drop every capability (after mounting)
    "--seccomp-fd": ("int", None),  # a seccomp BPF program to install on itself
    "--thread-stack-bytes": ("int", 0),  # stack size of the bot's Python threads
    # The worker's compilation of the bot's sources (compile_bot), read by each game process, if there.
    "--code": ("str", None),
    # Internal: a game process started by the supervisor, and the hello id it says.
    "--child": ("flag", False),
    "--hello-id": ("int", 0),
    # Internal: the supervisor's zygote, which forks the game processes.
    "--zygote": ("flag", False),
    # A new interpreter per game instead of the zygote's fork (the default in gVisor).
    "--no-zygote": ("flag", False),
}
JAILS = ("pidns", "uid", "none")


class UsageError(ValueError):
    """A command line the host does not take (the backends' bug, never a bot's)."""


def parse_arguments(argv: list[str]) -> types.SimpleNamespace:
    """The host's command line (``OPTIONS``): ``--option value`` or ``--option=value``.

    Not argparse: importing it (and ``gettext``) cost about 5 ms of CPU in every seat's
    container, and the command line is the backends', never a person's.

    >>> parse_arguments(["--bot", "/b", "--fd", "3", "--scrub", "/tmp"]).scrub
    ['/tmp']
    """
    values = {option[2:].replace("-", "_"): (list(default) if isinstance(default, list) else default)
              for option, (_, default) in OPTIONS.items()}
    words = iter(argv)
    for word in words:
        option, equals, value = word.partition("=")
        kind = OPTIONS.get(option, (None,))[0]
        if kind is None:
            raise UsageError(f"unknown option {word!r}")
        key = option[2:].replace("-", "_")
        if kind == "flag":
            if equals:
                raise UsageError(f"{option} takes no value")
            values[key] = True
            continue
        if not equals:
            value = next(words, None)
            if value is None:
                raise UsageError(f"{option} needs a value")
        if kind == "int":
            try:
                values[key] = int(value)
            except ValueError:
                raise UsageError(f"{option} takes a number, not {value!r}") from None
        elif kind == "list":
            values[key] = [*(values[key] or []), value]
        else:
            values[key] = value
    if values["bot"] is None:
        raise UsageError("--bot is required")
    if (values["fd"] is None) == (values["connect"] is None):
        raise UsageError("one of --fd and --connect is required")
    if values["jail"] not in (None, *JAILS):
        raise UsageError(f"--jail takes one of {', '.join(JAILS)}, not {values['jail']!r}")
    return types.SimpleNamespace(**values)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_arguments(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        os.write(2, f"host.py: {exc}\n".encode())
        os._exit(2)
    if args.zygote:
        os.closerange(4, 65536)
        zygote(_socket.socket(fileno=args.fd), args)
        os._exit(0)
    if args.child:
        os.closerange(4, 65536)
        sock = _socket.socket(fileno=args.fd)
        sock.setblocking(True)
        try:
            code = serve(Host(sock, args.frame_bytes), args.bot, args.hello_id, args.thread_stack_bytes, args.code)
        except (OSError, EOFError, FrameError):
            code = 2
        # os._exit: skip atexit handlers and non-daemon threads the bot may have left.
        os._exit(code)
    in_container = os.getpid() == 1
    if args.jail is None:
        args.jail = "pidns" if in_container else "none"
    if _in_gvisor():
        args.no_zygote = True
    if args.scrub is None:
        args.scrub = ["/tmp"] if in_container else []
    if args.fd is not None:
        sock = _socket.socket(fileno=args.fd)
    else:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        sock.connect(args.connect)
    os.set_inheritable(sock.fileno(), False)
    sock.setblocking(True)
    try:
        confine(args)
    except OSError as exc:
        # fd 2 is still the backend's stderr pipe (bot code never gets it): setup failed, not the bot
        os.write(2, f"sandbox setup: {exc}\n".encode())
        os._exit(3)
    become_supervisor(args)
    supervisor = Supervisor(sock, args)
    code = 2
    try:
        if args.wait_load:
            if supervisor.use_zygote:
                # A warm seat starts its zygote while it waits: off the match's critical path.
                # The zygote reads no bot file (there is none yet) and forks each game as before.
                # So does the first game's process, set up up to the bot's import (park).
                try:
                    supervisor.start_zygote()
                    supervisor.start_game(0, park=True)
                except OSError:
                    pass  # the first game starts one
            supervisor.pristine = False  # from here on it reads the referee's frames
            buffer = FrameBuffer(args.frame_bytes)
            while True:
                chunk = sock.recv(1 << 16)
                if not chunk:
                    raise EOFError
                buffer.data += chunk
                message = next((m for _, m in buffer.frames()), None)
                if message is not None:
                    break
            if message.get("op") != "load":
                raise FrameError("expected a load frame")
            supervisor.ref_in.data = buffer.data
            supervisor.load_parked()
        supervisor.run()
    except (OSError, EOFError, FrameError):
        code = 2
    try:
        supervisor.finish()
    except Exception:  # noqa: BLE001 - exiting anyway
        pass
    os._exit(code)


if __name__ == "__main__":
    main()
