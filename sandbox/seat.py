"""The referee's side of a sandboxed seat: channel, clocks, logs, fault reasons.

``SandboxSeat`` is an engine seat (``decide(observation, configuration)``) that
talks to a bot host (``sandbox.host``) in any backend. It trusts nothing it
reads: frame sizes are capped, JSON is checked, replies to an earlier request
(late after a timeout) are dropped by request id. Knows the engine's fault
vocabulary, not Django, not Docker.
"""

from __future__ import annotations

import errno
import logging
import os
import select
import shutil
import socket
import tempfile
import time
from typing import Any, Protocol

from engine.faults import InfrastructureError, SeatFault
from sandbox.host import HEADER, FrameError, decode_body, encode_frame
from sandbox.limits import Limits, describe_bytes

log = logging.getLogger(__name__)

#: every backend's per-seat directory starts with this (leak checks and the reaper rely on it)
SEAT_DIR_PREFIX = "uno-arena-"


def make_seat_dir(label: str, root: str | None = None) -> str:
    """A fresh private directory for one seat, named after ``label`` (match and seat).

    A folder that cannot take it (full, no permission) is the platform's trouble:
    ``InfrastructureError``.
    """
    try:
        return tempfile.mkdtemp(prefix=f"{SEAT_DIR_PREFIX}{label}-", dir=root)
    except OSError as exc:
        raise seat_folder_error(exc, root or tempfile.gettempdir(), "making a seat folder") from exc


def seat_folder_error(exc: OSError, where: str, doing: str) -> InfrastructureError:
    """The infrastructure error of a seat folder that failed while ``doing`` something (never the
    bot's fault: its files were checked and capped at upload); a full disk says so."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return InfrastructureError(
            f"the seats' folder is full ({os.strerror(exc.errno)}) while {doing} in {where} "
            "(SANDBOX_WORK_DIR, else the temporary folder): free space there"
        )
    return InfrastructureError(f"the seats' folder failed while {doing} in {where}: {exc}")


def reap_seat_dirs(max_age_seconds: float, roots: list[str | None]) -> int:
    """Delete seat directories older than ``max_age_seconds`` (left by a killed worker)."""
    cutoff = time.time() - max_age_seconds
    removed = 0
    for root in {r or tempfile.gettempdir() for r in roots}:
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            try:
                stale = entry.name.startswith(SEAT_DIR_PREFIX) and entry.is_dir(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < cutoff
            except OSError:
                continue
            if stale:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed += 1
    return removed


class ChannelClosed(Exception):
    """The bot host closed its end of the channel (it exited or was killed)."""


class Channel:
    """Length-prefixed JSON frames over a stream socket, read with deadlines."""

    def __init__(self, sock: socket.socket, frame_bytes: int):
        self.sock = sock
        self.frame_bytes = frame_bytes
        self.buffer = bytearray()
        sock.setblocking(False)

    def send(self, message: dict[str, Any], timeout: float = 5.0) -> None:
        """Send one frame; a host that stops reading for ``timeout`` s counts as closed."""
        data = memoryview(encode_frame(message))
        deadline = time.monotonic() + timeout
        while data:
            try:
                sent = self.sock.send(data)
            except BlockingIOError:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([], [self.sock], [], remaining)[1]:
                    raise ChannelClosed("bot host stopped reading its channel") from None
                continue
            except OSError as exc:
                raise ChannelClosed(f"channel broken: {exc}") from None
            data = data[sent:]

    def recv(self, deadline: float) -> dict[str, Any] | None:
        """The next frame, or ``None`` when ``deadline`` (monotonic) passes first."""
        while True:
            message = self._take_frame()
            if message is not None:
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.sock], [], [], remaining)
            if not readable:
                return None
            try:
                chunk = self.sock.recv(1 << 16)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise ChannelClosed(f"channel broken: {exc}") from None
            if not chunk:
                raise ChannelClosed("bot host closed the channel")
            self.buffer += chunk

    def _take_frame(self) -> dict[str, Any] | None:
        if len(self.buffer) < HEADER.size:
            return None
        (size,) = HEADER.unpack_from(self.buffer)
        if size > self.frame_bytes:
            raise FrameError(f"frame of {size} bytes exceeds the cap of {describe_bytes(self.frame_bytes)} (first bytes {bytes(self.buffer[:16])!r})")
        end = HEADER.size + size
        if len(self.buffer) < end:
            return None
        body = bytes(self.buffer[HEADER.size:end])
        del self.buffer[:end]
        return decode_body(body)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class SeatLog:
    """What one seat printed, capped at ``cap`` bytes of UTF-8."""

    def __init__(self, cap: int):
        self.cap = cap
        self.size = 0
        self.chars = 0  # characters kept so far: the offsets of log marks
        self.parts: list[str] = []
        self.truncated = False

    def add(self, text: str) -> None:
        if self.truncated:
            return
        data = text.encode("utf-8", "replace")
        room = self.cap - self.size
        if len(data) > room:
            data = data[:room]
            self.truncated = True
        self.size += len(data)
        part = data.decode("utf-8", "ignore")
        self.chars += len(part)
        self.parts.append(part)

    def mark_truncated(self) -> None:
        self.truncated = True

    def text(self) -> str:
        tail = f"\n[log truncated at {describe_bytes(self.cap)}]\n" if self.truncated else ""
        return "".join(self.parts) + tail


def _max_strikes(configuration: Any) -> float:
    """The rules' max_strikes from a decision's configuration (infinite when absent)."""
    try:
        value = configuration["rules"]["max_strikes"]
    except (KeyError, TypeError):
        return float("inf")
    return value if isinstance(value, int) and not isinstance(value, bool) else float("inf")


def fault_from_error(error: object, limits: Limits) -> SeatFault:
    """Turn an error report of the bot host (``{"kind", "reason"}``) into the fault its owner reads."""
    if not isinstance(error, dict):
        return SeatFault("protocol", f"protocol error: malformed error report {str(error)[:80]!r}")
    kind = error.get("kind")
    detail = str(error.get("reason", ""))[:500]
    if kind == "exception":
        if detail.startswith("exception at import: "):
            return SeatFault("exception", detail)
        return SeatFault("exception", f"exception in agent: {detail}")
    if kind == "memory":
        return SeatFault("memory", f"memory limit exceeded ({describe_bytes(limits.memory_bytes)}): {detail}")
    if kind == "processes":
        return SeatFault("processes", f"process limit exceeded ({limits.processes} processes): {detail}")
    if kind == "illegal":
        return SeatFault("illegal", detail)
    return SeatFault("protocol", f"protocol error: unknown error kind {str(kind)[:40]!r}")


def match_time_reason(limits: Limits) -> str:
    """The forfeit reason of a bot out of its match clock (the same in the sandbox and in-process)."""
    return f"out of match time: used up its {limits.time_per_match:g} s of thinking for the match"


class SeatHandle(Protocol):
    """What a backend gives the seat: a channel to the host and control over its sandbox."""

    channel: Channel

    def death_fault(self) -> SeatFault:
        """Why the host is gone (memory, process limit, crash); may raise InfrastructureError."""

    def stop(self) -> None:
        """Kill everything in the sandbox and clean up; idempotent, safe on every path."""


class MarksLog:
    """The seat interface's ``decide``, with where each decision's prints sit in the log.

    ``log_marks`` gets the log's length before the first decision and after
    each one, so the prints of decision k are ``log[marks[k]:marks[k + 1]]``.
    A seat using it has ``log`` (a SeatLog), ``log_marks`` (a list) and ``_decide``.
    """

    log: SeatLog
    log_marks: list[int]

    def _decide(self, observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def decide(self, observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
        if not self.log_marks:
            self.log_marks.append(self.log.chars)
        try:
            return self._decide(observation, configuration)
        finally:
            self.log_marks.append(self.log.chars)


class SandboxSeat(MarksLog):
    """An engine seat played by a bot host; see the module docstring.

    >>> seat = SandboxSeat(handle, Limits(), "bot.py@1234abcd")  # doctest: +SKIP
    >>> seat.wait_ready(); seat.decide(observation, configuration)  # doctest: +SKIP
    """

    def __init__(self, handle: SeatHandle, limits: Limits, name: str):
        self.handle = handle
        self.limits = limits
        self.name = name
        self.bank = limits.time_bank
        self.log = SeatLog(limits.log_bytes)
        self.faults: list[str] = []  # every fault raised, "kind: reason", for the owner
        self.fault: SeatFault | None = None  # a forfeit: raised again on every later call
        self.last_decision_seconds = 0.0
        # fence posts into the log text: [0] when the first decision was asked,
        # [k + 1] after the k-th decide call (the host sends a reply only after
        # the log printed before it, so decision k printed text[marks[k]:marks[k + 1]])
        self.log_marks: list[int] = []
        self.next_id = 1
        self.timeouts = 0
        self.stopped = False
        #: thinking time left for the whole match (Limits.time_per_match), across all its games
        self.match_left = limits.time_per_match
        #: the game the running bot process serves (None: the first one, whichever it is)
        self.game: int | None = None
        #: (request id, monotonic deadline) of the hello a restarted game process still owes
        self.awaiting: tuple[int, float] | None = None
        #: games in the match (the runner sets it): while another follows, the host forks the next
        #: game's process ahead (its ``spare``); None: unknown, none is forked ahead
        self.games: int | None = None

    # -- start and stop -------------------------------------------------

    def wait_ready(self) -> None:
        """Wait for the host's hello; a bot that fails to import is faulted (not raised)."""
        self._await_hello(0, time.monotonic() + self.limits.start_seconds)

    def begin_game(self, game_index: int) -> None:
        """Called by the referee before each game: every game after the first gets a fresh bot process.

        The host kills every process of the previous game, wipes its writable
        storage and starts a new process that imports the bot again. Returns at
        once (the seats restart in parallel); the next decision first waits for
        the new process's hello, within ``start_seconds`` and not on the
        decision clocks. A failed import faults the seat as at the start.
        """
        if self.fault is not None or self.stopped:
            return
        more = self.games is not None and game_index + 1 < self.games
        if self.game is None or self.game == game_index:
            self.game = game_index  # the process started with the seat serves the first game
            if more:
                try:
                    self.handle.channel.send({"op": "spare", "id": 0})
                except ChannelClosed:
                    pass  # the first decision finds out why
            return
        self.game = game_index
        if self.awaiting is not None:
            self._await_pending()  # a game without a decision of this bot: its start still counts
            if self.fault is not None:
                return
        request_id = self.next_id
        self.next_id += 1
        try:
            self.handle.channel.send({"op": "game", "id": request_id, **({"spare": True} if more else {})})
        except ChannelClosed:
            self._fault(self.handle.death_fault())
            return
        self.awaiting = (request_id, time.monotonic() + self.limits.start_seconds)

    def _await_pending(self) -> None:
        assert self.awaiting is not None  # called only while a hello is awaited
        hello_id, deadline = self.awaiting
        self.awaiting = None
        self._await_hello(hello_id, deadline)

    def _await_hello(self, hello_id: int, deadline: float) -> None:
        """Read up to the hello ``hello_id``; late replies of the previous game's process are dropped."""
        try:
            while True:
                message = self.handle.channel.recv(deadline)
                if message is None:
                    self._fault(SeatFault("crash", f"bot did not start within {self.limits.start_seconds:g} s (import too slow?)"))
                    return
                op = message.get("op")
                if op == "log":
                    self._take_log(message)
                    continue
                reply_id = message.get("id")
                if op == "reply" and isinstance(reply_id, int) and not isinstance(reply_id, bool) and reply_id < hello_id:
                    continue  # the previous game's process answered a request that had timed out
                if op != "hello" or reply_id != hello_id:
                    raise FrameError(f"expected hello from the bot host, got op {str(op)[:40]!r}")
                if "error" in message:
                    self._fault(self._error_fault(message["error"]))
                elif message.get("ok") is not True:
                    raise FrameError("hello without ok or error")
                return
        except FrameError as exc:
            self._fault(SeatFault("protocol", f"protocol error at start: {exc}"))
        except ChannelClosed:
            self._fault(self.handle.death_fault())

    def stop(self) -> None:
        """Ask the host to stop, collect its last log lines, then kill the sandbox."""
        if self.stopped:
            return
        self.stopped = True
        try:
            if self.fault is None:
                try:
                    self.handle.channel.send({"op": "stop", "id": self.next_id}, timeout=0.2)
                    deadline = time.monotonic() + 0.2
                    while (message := self.handle.channel.recv(deadline)) is not None:
                        if message.get("op") == "log":
                            self._take_log(message)
                        elif message.get("op") == "stopped":
                            break  # its last prints came before it: the sandbox's own end is not waited for
                except (ChannelClosed, FrameError):
                    pass
        finally:
            self.handle.channel.close()
            self.handle.stop()

    # -- the seat interface ---------------------------------------------

    def _decide(self, observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
        if self.awaiting is not None:
            self._await_pending()
        if self.fault is not None:
            raise self.fault
        request_id = self.next_id
        self.next_id += 1
        started = time.monotonic()
        per_decision = self.limits.time_per_decision
        allowed = per_decision + self.bank
        # the match clock binds when less of it is left than the decision may take
        by_match = self.match_left <= allowed
        deadline = started + min(allowed, self.match_left)
        try:
            self.handle.channel.send(
                {"op": "decide", "id": request_id, "observation": observation, "configuration": configuration}
            )
            while True:
                message = self.handle.channel.recv(deadline)
                if message is None:
                    self._charge(time.monotonic() - started)
                    if by_match:
                        raise self._fault(SeatFault("match_time", match_time_reason(self.limits)))
                    self.bank = 0.0
                    fault = self._fault(SeatFault("timeout", f"no reply within {per_decision:g} s and the time bank ({self.limits.time_bank:g} s) is used up"))
                    self.timeouts += 1
                    if self.timeouts >= _max_strikes(configuration):
                        # The referee forfeits the seat on this strike: a bot
                        # stuck in a loop must not burn its CPU until the match ends.
                        self.fault = fault
                        self._stop_quietly()
                    else:
                        self._freeze_quietly()
                    raise fault
                op = message.get("op")
                if op == "log":
                    self._take_log(message)
                    continue
                reply_id = message.get("id")
                if op != "reply" or not isinstance(reply_id, int) or isinstance(reply_id, bool):
                    raise FrameError(f"expected a reply, got op {str(op)[:40]!r} with id {str(reply_id)[:20]!r}")
                if reply_id < request_id:
                    continue  # the late answer to a request that already timed out
                if reply_id != request_id:
                    raise FrameError(f"reply to request {reply_id} while request {request_id} is pending")
                self._charge(time.monotonic() - started)
                if "error" in message:
                    raise self._fault(self._error_fault(message["error"]))
                if "action" not in message:
                    raise FrameError("reply carries neither action nor error")
                action: dict[str, Any] = message["action"]
                return action
        except FrameError as exc:
            raise self._fault(SeatFault("protocol", f"protocol error: {exc}")) from None
        except ChannelClosed:
            raise self._fault(self.handle.death_fault()) from None

    # -- helpers --------------------------------------------------------

    def _freeze_quietly(self) -> None:
        """Have the host freeze the abandoned computation until the next decision (CPU for the others)."""
        try:
            self.handle.channel.send({"op": "freeze", "id": 0}, timeout=0.2)
        except ChannelClosed:
            pass  # the next decision finds out why

    def _charge(self, elapsed: float) -> None:
        self.last_decision_seconds = elapsed
        self.match_left = max(0.0, self.match_left - elapsed)
        over = elapsed - self.limits.time_per_decision
        if over > 0:
            self.bank = max(0.0, self.bank - over)

    def _take_log(self, message: dict[str, Any]) -> None:
        data = message.get("data")
        if isinstance(data, str):
            self.log.add(data)
        if message.get("truncated") is True:
            self.log.mark_truncated()

    def _error_fault(self, error: object) -> SeatFault:
        return fault_from_error(error, self.limits)

    def _fault(self, fault: SeatFault) -> SeatFault:
        """Record a fault; one that forfeits also stops the sandbox at once."""
        self.faults.append(str(fault))
        if fault.forfeits:
            self.fault = fault
            self._stop_quietly()
        return fault

    def _stop_quietly(self) -> None:
        """Stop the sandbox early (after its last log frames); only Docker trouble is raised."""
        self._collect_last_logs()
        try:
            self.handle.stop()
        except InfrastructureError:
            raise
        except Exception:  # noqa: BLE001 - cleanup must not hide the bot's fault
            log.exception("stopping the sandbox of %s failed", self.name)

    def _collect_last_logs(self, patience: float = 0.05) -> None:
        """Keep the log frames already on their way: the last prints explain a forfeit."""
        deadline = time.monotonic() + patience
        try:
            while (message := self.handle.channel.recv(deadline)) is not None:
                if message.get("op") == "log":
                    self._take_log(message)
        except (ChannelClosed, FrameError):
            pass
