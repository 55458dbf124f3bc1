"""The referee's side of a seat trusts nothing the bot host sends."""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import time

import pytest

from engine.faults import SeatFault
from sandbox.host import encode_frame
from sandbox.limits import Limits
from sandbox.seat import SEAT_DIR_PREFIX, Channel, SandboxSeat, SeatLog, reap_seat_dirs

OBS = {"legal_actions": [{"type": "draw"}]}


class ScriptedHandle:
    """A seat handle whose 'host' is a test thread writing raw bytes to a socket."""

    def __init__(self, frame_bytes: int = 1024):
        self.referee_end, self.host_end = socket.socketpair()
        self.channel = Channel(self.referee_end, frame_bytes)
        self.stops = 0

    def death_fault(self) -> SeatFault:
        return SeatFault("crash", "scripted host died")

    def stop(self) -> None:
        self.stops += 1

    def read_request(self) -> dict:
        """The next request, past the ``freeze`` frames a timeout sends (a real host freezes the bot)."""
        while True:
            (size,) = struct.unpack(">I", self._exact(4))
            request = json.loads(self._exact(size))
            if request.get("op") != "freeze":
                return request

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            data += self.host_end.recv(n - len(data))
        return data


FAST = Limits(time_per_decision=0.2, time_bank=0.5)


def make_seat(script, limits: Limits = FAST, frame_bytes=1024):
    handle = ScriptedHandle(frame_bytes)
    thread = threading.Thread(target=script, args=(handle,), daemon=True)
    thread.start()
    seat = SandboxSeat(handle, limits, "scripted")
    return seat, handle


def hello_then(reply):
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        request = handle.read_request()
        handle.host_end.sendall(reply(request))

    return script


def test_valid_reply_returns_the_action_and_records_decision_time():
    seat, _ = make_seat(hello_then(lambda r: encode_frame({"op": "reply", "id": r["id"], "action": {"type": "draw"}})))
    seat.wait_ready()
    assert seat.decide(OBS, {}) == {"type": "draw"}
    assert 0 < seat.last_decision_seconds < 1.0


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (struct.pack(">I", 10_000_000) + b"x", "exceeds the cap"),
        (struct.pack(">I", 5) + b"nope!", "not UTF-8 JSON"),
        (struct.pack(">I", 2) + b"[]", "JSON list, not an object"),
        (encode_frame({"op": "reply", "id": 99, "action": {}}), "reply to request 99 while request 1"),
        (encode_frame({"op": "reply", "id": "1", "action": {}}), "expected a reply"),
        (encode_frame({"op": "reply", "id": 1}), "neither action nor error"),
    ],
)
def test_garbage_from_the_host_forfeits_with_protocol_error(raw, message):
    seat, handle = make_seat(hello_then(lambda r: raw))
    seat.wait_ready()
    with pytest.raises(SeatFault) as caught:
        seat.decide(OBS, {})
    assert caught.value.kind == "protocol"
    assert message in caught.value.reason
    assert handle.stops == 1  # a forfeited sandbox goes at once
    with pytest.raises(SeatFault, match="protocol"):
        seat.decide(OBS, {})  # and the seat stays forfeited


def test_late_reply_after_timeout_is_dropped_by_request_id():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        first = handle.read_request()
        time.sleep(0.8)  # past 0.2 s + 0.5 s of bank
        handle.host_end.sendall(encode_frame({"op": "reply", "id": first["id"], "action": {"type": "late"}}))
        second = handle.read_request()
        handle.host_end.sendall(encode_frame({"op": "reply", "id": second["id"], "action": {"type": "draw"}}))

    seat, _ = make_seat(script)
    seat.wait_ready()
    with pytest.raises(SeatFault) as caught:
        seat.decide(OBS, {})
    assert caught.value.kind == "timeout"
    assert seat.bank == 0.0
    assert seat.decide(OBS, {}) == {"type": "draw"}


def test_time_over_the_decision_limit_is_taken_from_the_bank():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        request = handle.read_request()
        time.sleep(0.4)
        handle.host_end.sendall(encode_frame({"op": "reply", "id": request["id"], "action": {"type": "draw"}}))

    seat, _ = make_seat(script)
    seat.wait_ready()
    assert seat.decide(OBS, {}) == {"type": "draw"}
    assert 0 < seat.bank <= 0.3 + 1e-6  # 0.5 - (at least 0.4 - 0.2)


def test_host_that_dies_mid_decision_gets_the_backends_death_reason():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        handle.read_request()
        handle.host_end.close()

    seat, _ = make_seat(script)
    seat.wait_ready()
    with pytest.raises(SeatFault, match="crash: scripted host died"):
        seat.decide(OBS, {})


def test_error_reports_map_to_the_owners_reasons():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        request = handle.read_request()
        error = {"kind": "memory", "reason": "MemoryError"}
        handle.host_end.sendall(encode_frame({"op": "reply", "id": request["id"], "error": error}))

    seat, _ = make_seat(script, Limits(memory_bytes=128 * 1024 * 1024))
    seat.wait_ready()
    with pytest.raises(SeatFault) as caught:
        seat.decide(OBS, {})
    assert (caught.value.kind, caught.value.reason) == ("memory", "memory limit exceeded (128 MiB): MemoryError")


def test_host_that_never_says_hello_is_faulted_at_start():
    seat, handle = make_seat(lambda handle: None, Limits(start_seconds=0.2))
    seat.wait_ready()
    with pytest.raises(SeatFault, match=r"crash: bot did not start within 0.2 s"):
        seat.decide(OBS, {})


def test_log_frames_are_collected_and_capped_on_the_referee_side():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "log", "data": "a" * 700}))
        handle.host_end.sendall(encode_frame({"op": "log", "data": "b" * 700}))
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))

    seat, _ = make_seat(script, Limits(log_bytes=1024))
    seat.wait_ready()
    text = seat.log.text()
    assert text.startswith("a" * 700 + "b" * 324)
    assert text.endswith("[log truncated at 1 KiB]\n")


def test_seat_log_never_splits_a_character_into_garbage():
    log = SeatLog(5)
    log.add("ab\u00e9\u00e9")  # 6 bytes of UTF-8; the cap falls inside the second é
    assert log.text().startswith("ab\u00e9")
    assert "\ufffd" not in log.text()


@pytest.mark.slow
def test_stuck_bot_is_stopped_on_the_timeout_that_forfeits_it():
    def script(handle):
        handle.host_end.sendall(encode_frame({"op": "hello", "id": 0, "ok": True}))
        time.sleep(30)  # stuck: never answers

    seat, handle = make_seat(script)
    seat.wait_ready()
    configuration = {"rules": {"max_strikes": 2}}
    with pytest.raises(SeatFault, match="timeout"):
        seat.decide(OBS, configuration)
    assert handle.stops == 0  # one strike: the seat plays on
    with pytest.raises(SeatFault, match="timeout"):
        seat.decide(OBS, configuration)
    assert handle.stops == 1  # the second strike forfeits: its sandbox goes now


def test_reaper_deletes_only_old_seat_directories(tmp_path):
    old = tmp_path / f"{SEAT_DIR_PREFIX}41-0-abc"
    young = tmp_path / f"{SEAT_DIR_PREFIX}42-0-def"
    foreign = tmp_path / "someone-elses-dir"
    for directory in (old, young, foreign):
        (directory / "bot").mkdir(parents=True)
    an_hour_ago = time.time() - 3600
    for directory in (old, foreign):
        os.utime(directory, (an_hour_ago, an_hour_ago))
    assert reap_seat_dirs(600, [str(tmp_path)]) == 1
    assert not old.exists() and young.exists() and foreign.exists()
