"""The bot host: runs inside a sandbox, imports one bot and answers the referee.

Standard library only, Python 3.11+: it runs on the sandbox image's bare
interpreter, so it must never import ``engine``, ``sandbox`` or Django. The
referee side imports the frame helpers below, so the wire format lives here.

Usage (the backends start it): ``python3 host.py --bot DIR (--fd N | --connect PATH) [--wait-load]``

Wire format: each frame is a 4-byte big-endian length, then that many bytes of
UTF-8 JSON (an object). The host sends ``hello`` once the bot is imported, one
reply per ``decide`` (same ``id``), ``stopped`` on ``stop``, and ``log`` frames
with what the bot printed. With ``--wait-load`` (a warm Docker seat) it first
waits for ``load``: the bot's files arrive after the sandbox started.
Everything the bot writes to fd 1 and 2 (also from C code and child processes)
goes into a pipe the host drains into capped ``log`` frames, so prints never
reach the channel.
"""

from __future__ import annotations

import argparse
import codecs
import errno
import fcntl
import importlib.util
import json
import os
import select
import signal
import socket
import struct
import sys
import termios
import threading
import time

HEADER = struct.Struct(">I")
#: the module a bot's directory must hold; ``agent`` is looked up in it
ENTRY_MODULE = "main.py"


class FrameError(Exception):
    """The other side sent something that is not a valid frame."""


def encode_frame(message: dict) -> bytes:
    """One frame: length prefix plus compact JSON.

    >>> encode_frame({"id": 1})[:4]
    b'\\x00\\x00\\x00\\t'
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


def recv_exact(sock: socket.socket, size: int) -> bytes:
    """Read exactly ``size`` bytes (blocking); EOFError when the peer closed."""
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("channel closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def load_agent(bot_dir: str, module_name: str = "main"):
    """Import ``main.py`` from ``bot_dir`` as ``module_name`` and return its ``agent``.

    Helper modules beside ``main.py`` are importable because ``bot_dir`` is put
    first on ``sys.path``. Raises whatever the bot's import raises.
    """
    path = os.path.join(bot_dir, ENTRY_MODULE)
    if bot_dir not in sys.path:
        sys.path.insert(0, bot_dir)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
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
    if (isinstance(exc, OSError) and exc.errno == errno.EAGAIN) or (
        isinstance(exc, RuntimeError) and "can't start new thread" in text
    ):
        return {"kind": "processes", "reason": reason}
    return {"kind": "exception", "reason": reason}


def _pending_bytes(fd: int) -> int:
    """Bytes waiting in a pipe (0 when it cannot be asked)."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0


class Host:
    """The host's side of one channel: framed send (thread-safe) and receive."""

    def __init__(self, sock: socket.socket, frame_bytes: int, log_bytes: int):
        self.sock = sock
        self.frame_bytes = frame_bytes
        self.log_bytes = log_bytes
        self.send_lock = threading.Lock()
        # Held by the drain thread from reading the pipe until the log frame is
        # sent: a reply taken under it comes after every print made before it.
        self.drain_lock = threading.Lock()
        self.read_end: int | None = None

    def send(self, message: dict, frame: bytes | None = None) -> None:
        """Send ``message`` (``frame``: its encoding, when the caller made it already)."""
        if frame is None:
            frame = encode_frame(message)
        with self.send_lock:
            self.sock.sendall(frame)

    def recv(self) -> dict:
        (size,) = HEADER.unpack(recv_exact(self.sock, HEADER.size))
        if size > self.frame_bytes:
            raise FrameError(f"frame of {size} bytes exceeds the cap of {self.frame_bytes}")
        return decode_body(recv_exact(self.sock, size))

    def capture_output(self) -> threading.Thread:
        """Point fd 1 and 2 at a pipe and forward what comes out as capped log frames."""
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        os.close(write_end)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        # New line-buffered streams on the pipe (the old ones may believe fd 1 is
        # a seekable /dev/null): a bot's last prints before a kill are its best clue.
        sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace", closefd=False)
        # Non-blocking: a child that inherited the read end may steal data.
        os.set_blocking(read_end, False)
        self.read_end = read_end
        thread = threading.Thread(target=self._drain, args=(read_end,), name="log-drain", daemon=True)
        thread.start()
        return thread

    def _drain(self, read_end: int) -> None:
        budget = self.log_bytes
        truncated = False
        # Incremental: a character split across two reads is not mangled.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while True:
            try:
                select.select([read_end], [], [])
            except OSError:
                return
            with self.drain_lock:
                try:
                    chunk = os.read(read_end, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                if budget > 0:
                    piece = chunk[:budget]
                    budget -= len(piece)
                    self._send_quietly({"op": "log", "data": decoder.decode(piece, final=budget == 0)})
                    chunk = chunk[len(piece):]
                if chunk and not truncated:
                    truncated = True
                    self._send_quietly({"op": "log", "truncated": True})
                # Past the cap the pipe is still drained so a chatty bot never blocks.

    def reply(self, message: dict, patience: float = 0.05, frame: bytes | None = None) -> None:
        """Send ``message`` after the log frames of everything printed so far."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - the bot may have closed or replaced them
                pass
        if self.read_end is not None:
            deadline = time.monotonic() + patience
            while _pending_bytes(self.read_end) and time.monotonic() < deadline:
                time.sleep(0.0005)
        with self.drain_lock:
            self.send(message, frame)

    def _send_quietly(self, message: dict) -> None:
        try:
            self.send(message)
        except OSError:
            pass


def _out_of_cpu(signum, frame) -> None:
    # Exit as if killed by SIGXCPU: as a container's PID 1 the host would
    # otherwise ignore it and die later by the unexplained hard-limit SIGKILL.
    os._exit(128 + signal.SIGXCPU)


def serve(host: Host, bot_dir: str) -> int:
    """Import the bot, say hello, then answer ``decide`` until ``stop`` or EOF."""
    signal.signal(signal.SIGXCPU, _out_of_cpu)
    host.capture_output()
    try:
        os.chdir(bot_dir)
        agent = load_agent(bot_dir)
    except BaseException as exc:  # noqa: BLE001 - any failure of bot code is reported, not raised
        error = describe_exception(exc)
        error["reason"] = f"exception at import: {error['reason']}"
        host.reply({"op": "hello", "id": 0, "error": error})
        return 1
    host.reply({"op": "hello", "id": 0, "ok": True})
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", required=True, help="directory holding main.py")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--fd", type=int, help="inherited socket file descriptor")
    where.add_argument("--connect", help="path of the referee's Unix socket")
    parser.add_argument("--frame-bytes", type=int, default=1 << 20)
    parser.add_argument("--log-bytes", type=int, default=64 * 1024)
    # Only shown in `ps`: tells operators (and leak checks) which match a process serves.
    parser.add_argument("--label", default="")
    # A pre-started (warm) sandbox: the bot's files arrive after start; wait for them.
    parser.add_argument("--wait-load", action="store_true")
    args = parser.parse_args(argv)
    if args.fd is not None:
        sock = socket.socket(fileno=args.fd)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(args.connect)
    sock.setblocking(True)
    host = Host(sock, args.frame_bytes, args.log_bytes)
    try:
        if args.wait_load and host.recv().get("op") != "load":
            raise FrameError("expected a load frame")
        code = serve(host, args.bot)
    except (OSError, EOFError, FrameError):
        code = 2
    # os._exit: skip atexit handlers and non-daemon threads the bot may have left.
    os._exit(code)


if __name__ == "__main__":
    main()
