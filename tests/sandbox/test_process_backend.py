"""The process backend: bubblewrap command, the weak rlimits-only mode, cleanup."""

from __future__ import annotations

import logging
import os

import pytest

from engine.faults import InfrastructureError, SeatFault
from sandbox.backends import process
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.seat import SandboxSeat

PROBE = BotPackage.from_bytes(
    "probe.py",
    b"import os, resource\n"
    b"def agent(observation, configuration):\n"
    b"    return {'data': resource.getrlimit(resource.RLIMIT_DATA)[0],\n"
    b"            'as': resource.getrlimit(resource.RLIMIT_AS)[0],\n"
    b"            'nproc': resource.getrlimit(resource.RLIMIT_NPROC)[0],\n"
    b"            'fsize': resource.getrlimit(resource.RLIMIT_FSIZE)[0],\n"
    b"            'uid': os.getuid(), 'env': sorted(os.environ)}\n",
)
LIMITS = Limits(memory_bytes=200 * 1024 * 1024, processes=20, file_bytes=1024 * 1024)


def probe(**start_kwargs) -> tuple[dict, SandboxSeat]:
    seat = SandboxSeat(process.start_seat(PROBE, LIMITS, label="probe", **start_kwargs), LIMITS, "probe")
    seat.wait_ready()
    try:
        return seat.decide({}, {}), seat
    finally:
        seat.stop()


def test_rlimits_apply_inside_bubblewrap_with_an_empty_environment(bwrap_path, monkeypatch):
    monkeypatch.setenv("WORKER_ONLY", "1")
    answer, seat = probe()
    assert (answer["data"], answer["nproc"], answer["fsize"]) == (200 * 1024 * 1024, 20, 1024 * 1024)
    assert answer["as"] == process.address_space_bytes(LIMITS) == (200 + 20 * 2 + 256) * 1024 * 1024
    assert answer["uid"] == process.BOT_UID
    assert "WORKER_ONLY" not in answer["env"]
    assert not os.path.exists(seat.handle.workdir)


def test_without_bubblewrap_rlimits_still_apply_and_weak_isolation_is_warned_once(monkeypatch, caplog):
    monkeypatch.setattr(process, "_warned_weak", False)
    with caplog.at_level(logging.WARNING, logger="sandbox.backends.process"):
        first, _ = probe(bwrap=None)
        probe(bwrap=None)
    assert (first["data"], first["as"], first["nproc"], first["fsize"]) == (
        200 * 1024 * 1024, process.address_space_bytes(LIMITS), 20, 1024 * 1024)
    warnings = [r for r in caplog.records if "weak isolation" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="seat uids are only assigned by a root worker")
def test_root_worker_gives_each_seat_its_own_unprivileged_uid():
    uids = {process.next_seat_uid() for _ in range(50)}
    assert len(uids) == 50
    assert all(uid in process.SEAT_UIDS for uid in uids)


def test_host_killed_by_file_size_limit_is_reported_with_the_limit(bwrap_path):
    writer = BotPackage.from_bytes(
        "writer.py",
        b"import signal\n"
        b"signal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"  # die instead of EFBIG
        b"def agent(observation, configuration):\n"
        b"    open('/tmp/big', 'wb').write(b'x' * (2 * 1024 * 1024))\n",
    )
    seat = SandboxSeat(process.start_seat(writer, LIMITS, label="fsize"), LIMITS, "writer")
    seat.wait_ready()
    try:
        with pytest.raises(SeatFault) as caught:
            seat.decide({}, {})
    finally:
        seat.stop()
    assert caught.value.kind == "crash"
    assert caught.value.reason == "killed: file size limit exceeded (1 MiB)"


@pytest.mark.slow
def test_cpu_time_limit_kills_the_host_with_a_readable_reason(bwrap_path):
    spinner = BotPackage.from_bytes("spin.py", b"def agent(observation, configuration):\n    while True:\n        pass\n")
    limits = Limits(cpu_seconds=1, time_per_decision=5.0, time_bank=1.0)
    seat = SandboxSeat(process.start_seat(spinner, limits, label="cpu"), limits, "spin")
    seat.wait_ready()
    try:
        with pytest.raises(SeatFault) as caught:
            seat.decide({}, {})
    finally:
        seat.stop()
    assert (caught.value.kind, caught.value.reason) == ("crash", "killed: CPU time limit exceeded (1 s)")


def test_bubblewrap_failing_to_start_is_infrastructure_not_the_bots_fault(bwrap_path, monkeypatch):
    real = process.bwrap_command
    monkeypatch.setattr(process, "bwrap_command", lambda *a: [a[0], "--no-such-option", *real(*a)[1:]])
    seat = SandboxSeat(process.start_seat(PROBE, LIMITS, label="badbwrap"), LIMITS, "probe")
    try:
        with pytest.raises(InfrastructureError, match="bubblewrap could not set up the sandbox: bwrap: Unknown option --no-such-option"):
            seat.wait_ready()
    finally:
        seat.stop()
