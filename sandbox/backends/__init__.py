"""Where a bot runs: ``inprocess`` (trusted), ``process`` (bwrap + rlimits), ``docker``.

Each backend module offers ``start_seat(package, limits, ...)`` returning a
handle for ``sandbox.seat.SandboxSeat`` (the in-process one returns a seat).
Callers go through ``sandbox.runner``, never a backend directly.
"""

BACKENDS = ("inprocess", "process", "docker")
