"""In-process backend: the bot's ``agent`` called directly. Trusted code only.

For reference bots (our own code) and for ``arena play`` on the author's own
machine. No isolation and no preemption: a decision that runs too long is
measured afterwards and faulted like in a sandbox, but cannot be interrupted.
Loads packages with the bot host's own loader (``sandbox.host.load_agent``).
Prints are captured at the Python level only (``sys.stdout``/``sys.stderr``).
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from engine.faults import SeatFault
from sandbox.host import describe_exception, load_agent
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.seat import MarksLog, SeatLog, fault_from_error, make_seat_dir


class _LogWriter(io.TextIOBase):
    def __init__(self, log: SeatLog):
        self.target = log

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.target.add(text)
        return len(text)


class InProcessSeat(MarksLog):
    """An engine seat calling ``agent`` in this process, with the sandbox's clocks and log.

    >>> seat = InProcessSeat(lambda o, c: o["legal_actions"][0], Limits(), "first")
    >>> seat.decide({"legal_actions": [{"type": "draw"}]}, {})
    {'type': 'draw'}
    """

    def __init__(self, agent: Callable | None, limits: Limits, name: str, *, copy_json: bool = False):
        self.agent = agent
        self.limits = limits
        self.name = name
        self.copy_json = copy_json
        self.bank = limits.time_bank
        self.log = SeatLog(limits.log_bytes)
        self.faults: list[str] = []
        self.fault: SeatFault | None = None
        self.last_decision_seconds = 0.0
        self.log_marks: list[int] = []  # as SandboxSeat.log_marks: prints are captured as they happen
        self.cleanup: Callable[[], None] | None = None

    @classmethod
    def from_package(cls, package: BotPackage, limits: Limits, name: str, module_name: str) -> InProcessSeat:
        """Import ``package`` here (under ``module_name``); an import error faults the seat."""
        seat = cls(None, limits, name, copy_json=True)
        workdir = Path(make_seat_dir("inprocess"))
        bot_dir = str(package.write_to(workdir / "bot"))

        def cleanup() -> None:
            with contextlib.suppress(ValueError):
                sys.path.remove(bot_dir)
            sys.modules.pop(module_name, None)
            shutil.rmtree(workdir, ignore_errors=True)

        seat.cleanup = cleanup
        writer = _LogWriter(seat.log)
        try:
            with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
                seat.agent = load_agent(bot_dir, module_name)
        except BaseException as exc:  # noqa: BLE001 - the bot's import failing is its fault, reported
            seat._record(seat._fault_for(describe_exception(exc), at_import=True))
        return seat

    def _decide(self, observation: dict, configuration: dict) -> dict:
        if self.fault is not None:
            raise self.fault
        if self.copy_json:
            # Same view as a sandboxed bot gets: JSON values, nothing shared with the engine.
            observation = json.loads(json.dumps(observation))
            configuration = json.loads(json.dumps(configuration))
        writer = _LogWriter(self.log)
        started = time.monotonic()
        try:
            with contextlib.redirect_stdout(writer), contextlib.redirect_stderr(writer):
                action = self.agent(observation, configuration)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a bot is a fault, not our exit
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise self._record(self._fault_for(describe_exception(exc))) from None
        finally:
            elapsed = time.monotonic() - started
            self.last_decision_seconds = elapsed
        over = elapsed - self.limits.time_per_decision
        if over > 0:
            if over > self.bank:
                self.bank = 0.0
                raise self._record(SeatFault("timeout", f"no reply within {self.limits.time_per_decision:g} s and the time bank ({self.limits.time_bank:g} s) is used up ({elapsed:.2f} s)"))
            self.bank -= over
        if self.copy_json:
            try:
                action = json.loads(json.dumps(action, allow_nan=False))
            except (TypeError, ValueError) as exc:
                raise self._record(SeatFault("illegal", f"agent returned a value that is not JSON ({type(action).__name__}): {exc}")) from None
        return action

    def stop(self) -> None:
        if self.cleanup is not None:
            self.cleanup()
            self.cleanup = None

    def _fault_for(self, error: dict, at_import: bool = False) -> SeatFault:
        if at_import:
            error = {**error, "reason": f"exception at import: {error['reason']}"}
        return fault_from_error(error, self.limits)

    def _record(self, fault: SeatFault) -> SeatFault:
        self.faults.append(str(fault))
        if fault.forfeits:
            self.fault = fault
        return fault
