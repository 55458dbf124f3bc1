"""The one place for the sandbox's limits: time, memory, processes, logs, uploads.

Every default of BOT_CONTRACT.md ("Time and faults", "What is uploaded") lives
here; settings may override them by building a ``Limits`` / ``UploadLimits``.
Pure standard library: the platform, the CLI and the backends all import it.

>>> Limits().replace(time_bank=1.0).time_bank
1.0
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

KIB = 1024
MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one seat may use during one match."""

    #: seconds a decision may take before time is drawn from the bank
    time_per_decision: float = 1.0
    #: seconds per match a bot may spend beyond time_per_decision, in total
    time_bank: float = 10.0
    #: seconds of thinking a bot may spend over the whole match (every decision counts);
    #: using it up forfeits with reason "out of match time"
    time_per_match: float = 300.0
    #: seconds the bot host may take to start and import the bot
    start_seconds: float = 10.0
    #: the longest a match may run; the reaper removes sandboxes older than this
    max_match_seconds: float = 1800.0
    #: memory of the whole sandbox (RAM; no swap)
    memory_bytes: int = 256 * MIB
    #: CPUs the sandbox may use (Docker nano_cpus)
    cpus: float = 1.0
    #: CPU seconds a seat may burn over a whole match (process backend RLIMIT_CPU)
    cpu_seconds: int = 600
    #: processes (and threads) inside one sandbox
    processes: int = 64
    #: size of the sandbox's private /tmp
    tmp_bytes: int = 16 * MIB
    #: files and folders the sandbox's /tmp (and home, /dev/shm) may hold: each is kernel memory
    tmp_inodes: int = 4096
    #: largest file the bot may write (process backend RLIMIT_FSIZE)
    file_bytes: int = 16 * MIB
    #: what a bot prints, kept per seat per match; the rest is dropped
    log_bytes: int = 64 * KIB
    #: largest protocol frame either side accepts
    frame_bytes: int = 1 * MIB

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(f"limit {field.name} must be a positive number, got {value!r}")

    def replace(self, **changes: Any) -> Limits:
        """A copy with some limits changed (validated)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ValueError(f"unknown limit(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    def configuration(self) -> dict[str, Any]:
        """The time keys BOT_CONTRACT.md puts into the bots' ``configuration``."""
        return {key: getattr(self, key) for key in CLOCKS}


#: the clocks of BOT_CONTRACT.md, in the order the guide and ``configuration`` show them
CLOCKS = ("time_per_decision", "time_bank", "time_per_match")

#: what an event (ladder, tournament) or ``arena play`` may set each clock to, in seconds;
#: the one place for these bounds (models, forms, API and CLI all read them here)
CLOCK_BOUNDS: dict[str, tuple[float, float]] = {
    "time_per_decision": (0.1, 60.0),
    "time_bank": (0.1, 600.0),
    "time_per_match": (1.0, 3600.0),
}


@dataclass(frozen=True)
class UploadLimits:
    """What an uploaded bot may be (BOT_CONTRACT.md, "What is uploaded")."""

    py_bytes: int = 1 * MIB
    zip_bytes: int = 5 * MIB
    unpacked_bytes: int = 20 * MIB
    zip_entries: int = 200
    #: largest binary data file (.bin, .dat, .npy) in a zip; every other file is source or text
    binary_data_bytes: int = 1 * MIB

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"upload limit {field.name} must be a positive int, got {value!r}")


DEFAULT_LIMITS = Limits()
DEFAULT_UPLOAD_LIMITS = UploadLimits()


def describe_bytes(n: int) -> str:
    """Human form used in fault reasons: ``256 MiB``, ``64 KiB``, ``300 bytes``."""
    if n >= MIB and n % MIB == 0:
        return f"{n // MIB} MiB"
    if n >= KIB and n % KIB == 0:
        return f"{n // KIB} KiB"
    return f"{n} bytes"
